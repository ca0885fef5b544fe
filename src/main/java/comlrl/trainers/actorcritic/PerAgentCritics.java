package comlrl.trainers.actorcritic;

import comlrl.distributed.Codecs;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.model.ValueHead;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.reward.JointRewarder;
import comlrl.checkpoint.TrainerCheckpoint;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * IAC's critics (reference §5.5): every agent values its samples with its own value head, on a separate
 * critic model ({@link SeparateCritics}) or on its actor ({@link ActorValueHeads}), read at the last
 * token of its prompt ({@code critic_type: v}, one value for its K generations) or of prompt ⊕ response k ({@code q}).
 */
abstract sealed class PerAgentCritics implements Critic permits SeparateCritics, ActorValueHeads {
    /** The seed offset of the heads' initial values (one draw per agent, in agent order, on every process). */
    static final long HEAD_SEED = 0x5EEDC0FFEEL;

    final IACConfig config;
    final Actors actors;
    final HeldAgents<ValueHead> heads;
    /** Where a head is saved: in its actor's directory (null) or in this subdirectory of it. */
    private final String headSubdir;
    /** The config key of the heads' width (for messages). */
    private final String widthField;

    PerAgentCritics(IACConfig config, Actors actors, HeldAgents<ValueHead> heads, String headSubdir, String widthField) {
        this.config = config;
        this.actors = actors;
        this.heads = heads;
        this.headSubdir = headSubdir;
        this.widthField = widthField;
    }

    /**
     * One head per held backbone ({@code width} 0 or null: one linear layer). Every process draws every
     * agent's head in agent order (dropping other processes'), so each is the one a single process draws.
     */
    static HeldAgents<ValueHead> drawHeads(HeldAgents<CausalLm> backbones, Integer width, RankWork work, long seed) {
        List<Integer> inputs = backbones.map(lm -> lm.model().config().hiddenSize()).fromOwners(Codecs.INT);
        int w = width == null ? 0 : width;
        List<ValueHead> heads = new ArrayList<>();
        try (Rng rng = new Rng(seed ^ HEAD_SEED)) {
            for (int i = 0; i < inputs.size(); i++) {
                if (work.ownsAgent(i)) {
                    heads.add(ValueHead.forBackbone(backbones.get(i).model(), w, rng));
                } else {
                    ValueHead.create(inputs.get(i), w, DType.F32, Device.CPU, rng).close();
                    heads.add(null);
                }
            }
        } catch (RuntimeException | Error e) {
            heads.stream().filter(Objects::nonNull).forEach(ValueHead::close);
            throw e;
        }
        return HeldAgents.of(heads, work);
    }

    /** The model agent {@code i}'s head reads. */
    abstract CausalLm backbone(int i);

    private Path headDir(Path actorDir) {
        return headSubdir == null ? actorDir : actorDir.resolve(headSubdir);
    }

    @Override
    public Critic.Values values(int turn, List<String> prompts, List<long[]> promptIds,
            List<List<long[]>> responses, List<List<String>> texts) {
        boolean q = config.criticType().readsResponse();
        HeldAgents<double[]> values = actors.lms().mapIndexed(actors.executor(), (i, lm) -> {
            int k = responses.get(i).size();
            if (q && responses.get(i).stream().anyMatch(r -> r.length == 0)) {
                throw new IllegalStateException("critic_type \"q\" values the prompt with the response, but agent "
                        + i + " generated an empty response (turn " + (turn + 1) + ", prompt "
                        + JointRewarder.abbreviate(prompts.get(i)) + "); use critic_type: v, or make empty answers rarer "
                        + "(a reward for non-empty answers, a larger max_new_tokens)");
            }
            return ValueHeads.values(backbone(i).model(), heads.get(i), Collections.nCopies(q ? k : 1, promptIds.get(i)),
                    q ? responses.get(i) : Collections.nCopies(1, new long[0]), actors.padIds()[i], k);
        });
        return new Critic.Values(values.fromOwners(Codecs.DOUBLES).toArray(new double[0][]), null); // from the owners
    }

    @Override
    public Map<String, TrainerCheckpoint.Part> agentParts(int agent) {
        return Map.of("value_head_" + agent, ValueHeads.checkpointPart("value_head_" + agent, heads.get(agent)));
    }

    @Override
    public void save(Path dir, IntFunction<Path> actorDirs, boolean writes) {
        for (int i : writes ? heads.indices() : List.<Integer>of()) {
            saveBackbone(i, actorDirs.apply(i));
            ValueHeads.save(headDir(actorDirs.apply(i)), heads.get(i), config.criticType(), IACTrainer.ALGORITHM_NAME);
        }
    }

    /** Saves agent {@code i}'s critic model beside its actor (nothing for a head on the actor). */
    void saveBackbone(int i, Path actorDir) {
    }

    @Override
    public void loadValueHeads(Path savedDir, IntFunction<Path> actorDirs) {
        for (int i : heads.indices()) { // the agents split: each head's owner restores it
            Path headDir = headDir(actorDirs.apply(i));
            ValueHeads.requireInfo(headDir, config.criticType(), widthField);
            heads.get(i).restore(headDir);
        }
    }

    @Override
    public void close() {
        heads.values().forEach(ValueHead::close);
    }
}
