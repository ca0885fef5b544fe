package comlrl.trainers.actorcritic;

import comlrl.generation.CausalLm;
import comlrl.model.ValueHead;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.trainers.common.TrainerCheckpoint;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * IAC's critics (reference §5.5): every agent values its own samples with its own value head, on a
 * separate critic model ({@link SeparateCritics}) or on its actor's backbone ({@link ActorValueHeads}).
 * Agent i's value of a turn is read at the last token of its prompt ({@code critic_type: v}, one
 * value for its K generations) or of prompt ⊕ response k ({@code q}).
 */
abstract sealed class PerAgentCritics implements Critic permits SeparateCritics, ActorValueHeads {
    /** The seed offset of the heads' initial values (one draw per agent, in agent order, on every process). */
    static final long HEAD_SEED = 0x5EEDC0FFEEL;

    final IACConfig config;
    final Actors actors;
    /** Per agent: its head (null for the agents other processes hold). */
    final List<ValueHead> heads;

    PerAgentCritics(IACConfig config, Actors actors, List<ValueHead> heads) {
        this.config = config;
        this.actors = actors;
        this.heads = heads;
    }

    /**
     * One head per backbone (null backbones: another process's agent, whose draws are made and
     * dropped so that every process draws the heads in one order), {@code width} 0 or null for one
     * linear layer.
     */
    static List<ValueHead> drawHeads(List<CausalLm> backbones, Integer width, Actors actors, long seed) {
        long[] inputs = actors.work().longsFromOwners(backbones, lm -> lm.model().config().hiddenSize());
        int w = width == null ? 0 : width;
        List<ValueHead> heads = new ArrayList<>();
        try (Rng rng = new Rng(seed ^ HEAD_SEED)) {
            for (int i = 0; i < backbones.size(); i++) {
                if (backbones.get(i) != null) {
                    heads.add(ValueHead.forBackbone(backbones.get(i).model(), w, rng));
                } else {
                    ValueHead.create((int) inputs[i], w, DType.F32, Device.CPU, rng).close();
                    heads.add(null);
                }
            }
        } catch (RuntimeException | Error e) {
            heads.stream().filter(Objects::nonNull).forEach(ValueHead::close);
            throw e;
        }
        return heads;
    }

    /** The model agent {@code i}'s head reads. */
    abstract CausalLm backbone(int i);

    /** Where agent {@code i}'s head is saved, given its actor's directory. */
    abstract Path headDir(Path actorDir);

    @Override
    public Critic.Values values(int turn, List<String> prompts, List<long[]> promptIds,
            List<List<long[]>> responses, List<List<String>> texts) {
        boolean q = config.criticType().readsResponse();
        List<double[]> values = actors.executor().map(i -> {
            if (actors.lms().get(i) == null) {
                return null; // the agents split: its owner values it
            }
            int k = responses.get(i).size();
            if (q) {
                for (int g = 0; g < k; g++) {
                    if (responses.get(i).get(g).length == 0) {
                        throw new IllegalStateException("critic_type \"q\" values the prompt with the response, but agent "
                                + i + " generated an empty response (turn " + (turn + 1) + ", prompt "
                                + abbreviate(prompts.get(i)) + "); use critic_type: v, or make empty answers rarer "
                                + "(a reward for non-empty answers, a larger max_new_tokens)");
                    }
                }
            }
            return ValueHeads.values(backbone(i).model(), heads.get(i), Collections.nCopies(q ? k : 1, promptIds.get(i)),
                    q ? responses.get(i) : Collections.nCopies(1, new long[0]), actors.padIds()[i], k);
        });
        return new Critic.Values(values.toArray(new double[0][]), null);
    }

    private static String abbreviate(String text) {
        String oneLine = text.replace("\n", "\\n");
        return "\"" + (oneLine.length() > 60 ? oneLine.substring(0, 57) + "..." : oneLine) + "\"";
    }

    @Override
    public boolean sharedByAgents() {
        return false;
    }

    @Override
    public Map<String, TrainerCheckpoint.Part> agentParts(int agent) {
        return Map.of("value_head_" + agent, ValueHeads.checkpointPart("value_head_" + agent, heads.get(agent)));
    }

    @Override
    public void save(Path dir, IntFunction<Path> actorDirs, boolean writes) {
        for (int i = 0; i < heads.size() && writes; i++) {
            if (heads.get(i) != null) {
                saveBackbone(i, actorDirs.apply(i));
                ValueHeads.save(headDir(actorDirs.apply(i)), heads.get(i), config.criticType(), IACTrainer.ALGORITHM_NAME);
            }
        }
    }

    /** Saves agent {@code i}'s critic model beside its actor (nothing for a head on the actor). */
    void saveBackbone(int i, Path actorDir) {
    }

    /**
     * Fails, naming the file, when a head's width or input size differs from this run's
     * ({@code value_head_hidden_dim} / {@code critic_value_head_hidden_dim}), or when the saved run used
     * another {@code critic_type}.
     */
    @Override
    public void loadValueHeads(Path savedDir, IntFunction<Path> actorDirs) {
        for (int i = 0; i < heads.size(); i++) {
            if (heads.get(i) == null) {
                continue; // the agents split: its owner restores it
            }
            Path headDir = headDir(actorDirs.apply(i));
            ValueHeads.requireInfo(headDir, config.criticType(), widthField());
            heads.get(i).restore(headDir);
        }
    }

    /** The config key of the heads' width. */
    abstract String widthField();

    @Override
    public void close() {
        heads.stream().filter(Objects::nonNull).forEach(ValueHead::close);
    }
}
