package comlrl.trainers.actorcritic;

import comlrl.distributed.Codecs;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.CausalLmWithValueHead;
import comlrl.model.ValueHead;
import comlrl.tensor.AdamW;
import comlrl.tensor.Rng;
import comlrl.trainers.common.AgentSet;
import comlrl.checkpoint.TrainerCheckpoint;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/**
 * MAAC's one centralised critic (reference §5.6): a model with a value head that values the joint
 * input ({@link MAACTrainer#criticInput}, agent 0's tokenizer) at its last token (V: one value for every
 * generation; Q: one per aligned joint action k), the same for every agent. After the actor's step,
 * every agent minibatch takes a critic step on
 * <pre>
 *   value_loss_coef · value_loss,   value_loss = (1/|B|) Σ_j (y_j − V(joint_j))²     (no clipping)
 * </pre>
 * In the agents split every process holds the critic and steps its copy on every agent's minibatches.
 */
final class CentralCritic implements Critic {
    private final MAACConfig config;
    private final Actors actors;
    private final AgentSet model;
    private final ValueHead head;
    private final AdamW optimizer;

    private CentralCritic(MAACConfig config, Actors actors, AgentSet model, ValueHead head, AdamW optimizer) {
        this.config = config;
        this.actors = actors;
        this.model = model;
        this.head = head;
        this.optimizer = optimizer;
    }

    /** Takes the critic {@code model} (on every process), with a head of {@code width} (null or 0: linear). */
    static CentralCritic create(MAACConfig c, Actors actors, AgentSet model, Integer width) {
        ValueHead head = null;
        try {
            ValueHeads.requireVocabulary("The MAAC critic", model.get(0),
                    actors.lms().map(lm -> lm.tokenizer().vocabSize()).fromOwners(Codecs.INT).get(0), "agent 0's",
                    "critic_model");
            try (Rng rng = new Rng(c.seed() ^ PerAgentCritics.HEAD_SEED)) {
                head = ValueHead.forBackbone(model.get(0).model(), width == null ? 0 : width, rng);
            }
            return new CentralCritic(c, actors, model, head, ValueHeads.adamW(actors.work(), model.get(0).model(), head,
                    c.criticLearningRate()));
        } catch (RuntimeException | Error e) {
            if (head != null) {
                head.close();
            }
            model.close();
            throw e;
        }
    }

    @Override
    public Critic.Values values(int turn, List<String> prompts, List<long[]> promptIds,
            List<List<long[]>> responses, List<List<String>> texts) {
        boolean q = config.criticType().readsResponse();
        int k = texts.get(0).size();
        RankWork work = actors.work();
        // agent 0's tokenizer encodes the critic's input; in the agents split rank 0 (agent 0's) encodes it for all
        List<long[]> joint = !work.distributed() || work.splitsRows()
                ? jointIds(prompts, texts, q, k) : work.onMain("encoding the critic's input of a turn",
                        () -> jointIds(prompts, texts, q, k), Codecs.listOf(Codecs.LONGS));
        int rows = q ? k : 1;
        double[] v = ValueHeads.values(model.get(0).model(), head, joint.subList(0, rows),
                Collections.nCopies(rows, new long[0]), actors.padIds()[0], k);
        double[][] values = IntStream.range(0, actors.lms().size()).mapToObj(i -> v.clone()).toArray(double[][]::new);
        return new Critic.Values(values, IntStream.range(0, k).mapToObj(g -> joint.get(q ? g : 0)).toList());
    }

    /** The critic's input ids per generation g (agent 0's tokenizer); Q: with joint action g. */
    private List<long[]> jointIds(List<String> prompts, List<List<String>> texts, boolean q, int k) {
        return IntStream.range(0, k).mapToObj(g -> actors.lms().get(0).encode(MAACTrainer.criticInput(prompts,
                q ? texts.stream().map(agentTexts -> agentTexts.get(g)).toList() : null))).toList();
    }

    @Override
    public Losses update(int agent, List<RolloutSample> mb, HeldAgents<AdamW> actorOptimizers) {
        MinibatchSteps steps = actors.steps();
        // the agents split: only the actor's owner steps it (the others' actor_loss is not used)
        double actorLoss = actors.work().ownsAgent(agent) ? steps.actorStep(agent, actors.lms().get(agent), mb,
                actorOptimizers.get(agent), config.gradientCheckpointing()) : Double.NaN;
        double valueLoss = steps.criticStep(agent, model.get(0).model(), head, actors.padIds()[0],
                RolloutSample::jointInputIds, s -> new long[0], mb, optimizer, config.valueLossCoef(),
                config.gradientCheckpointing());
        return new Losses(actorLoss, valueLoss);
    }

    @Override
    public boolean sharedByAgents() {
        return true;
    }

    @Override
    public List<CausalLmWithValueHead> views() {
        return List.of(new CausalLmWithValueHead(model.get(0), head));
    }

    @Override
    public List<TrainerCheckpoint.ShapeGroup> shapes() {
        return List.of(TrainerCheckpoint.ShapeGroup.of("critic_shapes", "critic", List.of(model.get(0).model())));
    }

    /** Every process holds the same critic: rank 0 writes it, every process restores it. */
    @Override
    public Map<String, TrainerCheckpoint.Part> sharedParts() {
        Map<String, TrainerCheckpoint.Part> parts = Critic.modelParts("", "the critic", model.get(0), optimizer, head);
        parts.replaceAll((name, part) -> TrainerCheckpoint.writtenByMain(part, actors.work()));
        return parts;
    }

    /** {@code dir/critic/}: the backbone with {@code value_head.*} (written by rank 0). */
    @Override
    public void save(Path dir, IntFunction<Path> actorDirs, boolean writes) {
        if (actors.work().isMain()) {
            Path criticDir = dir.resolve("critic");
            model.get(0).save(criticDir);
            ValueHeads.save(criticDir, head, config.criticType(), MAACTrainer.ALGORITHM_NAME);
        }
    }

    /** Restores {@code critic/value_head.*}; fails on another width or {@code critic_type}. */
    @Override
    public void loadValueHeads(Path savedDir, IntFunction<Path> actorDirs) {
        Path dir = savedDir.resolve("critic");
        ValueHeads.requireInfo(dir, config.criticType(), "critic_value_head_hidden_dim");
        head.restore(dir);
    }

    @Override
    public void requireOutside(Path dir, String what) {
        model.requireOutside(dir, what);
    }

    @Override
    public void close() {
        optimizer.close();
        head.close();
        model.close();
    }
}
