package comlrl.trainers.actorcritic;

import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.model.ValueHead;
import comlrl.tensor.AdamW;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.common.AgentSet;
import comlrl.trainers.common.RankWork;
import comlrl.trainers.common.TrainerCheckpoint;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Multi-Agent Actor-Critic (reference §5.6): decentralised actors and one centralised critic that
 * values the joint input, tokenised with agent 0's tokenizer:
 * <pre>
 *   V:  "[Agent 0] p_0\n\n[Agent 1] p_1 ..."
 *   Q:  the same + "\n\n[Joint Action]\n\n[Agent 0 action]\nc_0\n\n[Agent 1 action]\nc_1 ..."
 * </pre>
 * value read at the last token (V: one value shared by every generation; Q: one per aligned joint
 * action k). Agent i's target is built from its own shaped reward and the joint value
 * ({@link ActorCriticLoss}). Each agent minibatch takes an actor step on {@code actor_loss} and a
 * critic step on {@code value_loss_coef · value_loss} (no clipping), so the critic steps once per
 * agent minibatch; agents are updated one after the other.
 */
public final class MAACTrainer extends ActorCriticTrainerBase {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MAAC";

    private final MAACConfig config;
    private final AgentSet criticSet;
    private final ValueHead head;
    private final List<AdamW> actorOptimizers = new ArrayList<>();
    private final AdamW criticOptimizer;
    private final List<CausalLmWithValueHead> actorsView = new ArrayList<>();
    private final List<CausalLmWithValueHead> criticsView;

    public static Builder<MAACTrainer> builder() {
        return new Builder<>(MAACTrainer::create);
    }

    private static MAACTrainer create(Builder<MAACTrainer> b) {
        if (!(b.args instanceof MAACConfig c)) {
            throw new IllegalArgumentException("args must be a MAACConfig (MAACConfig.builder()...build() or "
                    + "MAACConfig.fromMap(...)), got " + (b.args == null ? "null" : b.args.getClass().getSimpleName()));
        }
        requireCommon(b, ALGORITHM_NAME);
        ActorCriticSources.Sources sources = ActorCriticSources.maac(c, b.agentModel(), b.agents(), b.tokenizers(),
                b.criticModel(), b.critics());
        b.requireTaskData();
        RankWork work = RankWork.forRun(c.parallelTraining(), c.ddpSplit(), c.numAgents(), b.distributed());
        try {
            return new MAACTrainer(b, c, sources, ActorCriticSources.place(c, work.device()), work);
        } catch (RuntimeException | Error e) {
            work.close();
            throw e;
        }
    }

    private MAACTrainer(Builder<MAACTrainer> b, MAACConfig c, ActorCriticSources.Sources sources,
            ActorCriticSources.Placement placement, RankWork work) {
        super(b, c, ALGORITHM_NAME, sources, placement, work);
        this.config = c;
        AgentSet loaded = null;
        ValueHead made = null;
        AdamW criticOpt = null;
        try {
            loaded = loadCritics(b, sources.critics(), placement.critics(), i -> true); // on every process
            long vocab = fromOwners(agents, lm -> lm.tokenizer().vocabSize())[0];
            if (loaded.get(0).model().config().vocabSize() < vocab) {
                throw new IllegalArgumentException("The MAAC critic (" + loaded.get(0).source() + ") has vocab_size "
                        + loaded.get(0).model().config().vocabSize() + " but reads agent 0's token ids, up to "
                        + (vocab - 1) + "; give a critic of agent 0's model family (critic_model)");
            }
            Integer width = b.get(Builder.CRITIC_VALUE_HEAD_HIDDEN_DIM) != null
                    ? b.get(Builder.CRITIC_VALUE_HEAD_HIDDEN_DIM) : c.criticValueHeadHiddenDim();
            try (Rng rng = new Rng(c.seed() ^ 0x5EEDC0FFEEL)) {
                made = ValueHead.forBackbone(loaded.get(0).model(), width == null ? 0 : width, rng);
            }
            for (int i = 0; i < numAgents; i++) { // null for another process's agent (the agents split)
                actorOptimizers.add(agents.get(i) == null ? null
                        : work.adamW(agents.get(i).model().parameters(), c.agentLearningRate(), 0.01));
                actorsView.add(agents.get(i) == null ? null : new CausalLmWithValueHead(agents.get(i), null));
            }
            List<Tensor> params = new ArrayList<>(loaded.get(0).model().parameters());
            params.addAll(made.parameters());
            criticOpt = work.adamW(params, c.criticLearningRate(), 0.01);
            loaded.requireOutside(outputDir, "output_dir");
        } catch (RuntimeException | Error e) {
            closeActorOptimizers();
            if (criticOpt != null) {
                criticOpt.close();
            }
            if (made != null) {
                made.close();
            }
            if (loaded != null) {
                loaded.close();
            }
            super.close();
            throw e;
        }
        this.criticSet = loaded;
        this.head = made;
        this.criticOptimizer = criticOpt;
        this.criticsView = List.of(new CausalLmWithValueHead(criticSet.get(0), head));
        Map<String, TrainerCheckpoint.Part> parts = new LinkedHashMap<>();
        for (int i = 0; i < numAgents; i++) {
            if (agents.get(i) == null) {
                continue; // the agents split: its owner writes and restores it
            }
            parts.put("agent_" + i, TrainerCheckpoint.weights("agent_" + i, "agent " + i, agents.get(i)));
            parts.put("optimizer_" + i, TrainerCheckpoint.optimizer("optimizer_" + i + ".safetensors",
                    actorOptimizers.get(i)));
        }
        // every process holds the same critic: rank 0 writes it, every process restores it
        parts.put("critic", TrainerCheckpoint.writtenByMain(
                TrainerCheckpoint.weights("critic", "the critic", criticSet.get(0)), work));
        parts.put("critic_optimizer", TrainerCheckpoint.writtenByMain(
                TrainerCheckpoint.optimizer("critic_optimizer.safetensors", criticOptimizer), work));
        parts.put("value_head", TrainerCheckpoint.writtenByMain(IACTrainer.valueHeadPart("value_head", head), work));
        initCheckpoint(List.of(TrainerCheckpoint.ShapeGroup.of("model_shapes", "agent", actorModels(), work),
                TrainerCheckpoint.ShapeGroup.of("critic_shapes", "critic", List.of(criticSet.get(0).model()))), parts);
    }

    public MAACConfig config() {
        return config;
    }

    /** The actors (no value heads); null for other processes' agents in the agents split. */
    public List<CausalLmWithValueHead> agents() {
        return Collections.unmodifiableList(actorsView);
    }

    /** The one centralised critic with its value head. */
    public List<CausalLmWithValueHead> critics() {
        return criticsView;
    }

    /**
     * The critic's input text (reference {@code _build_critic_input}): every agent's prompt, and for a
     * Q critic the joint action.
     */
    public static String criticInput(List<String> prompts, List<String> actions) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < prompts.size(); i++) {
            parts.add("[Agent " + i + "] " + prompts.get(i));
        }
        String text = String.join("\n\n", parts);
        if (actions == null) {
            return text;
        }
        List<String> joint = new ArrayList<>();
        joint.add("[Joint Action]");
        for (int i = 0; i < actions.size(); i++) {
            joint.add("[Agent " + i + " action]\n" + actions.get(i));
        }
        return text + "\n\n" + String.join("\n\n", joint);
    }

    @Override
    protected CriticValues criticValues(int turn, List<String> prompts, List<long[]> promptIds,
            List<List<long[]>> responses, List<List<String>> texts) {
        boolean q = config.criticType().readsResponse();
        int k = texts.get(0).size();
        // agent 0's tokenizer encodes the critic's input; in the agents split rank 0 (agent 0's) encodes it for all
        List<long[]> joint = agents.get(0) != null && (!work.distributed() || work.splitsRows())
                ? jointIds(prompts, texts, q, k) : work.onMain("encoding the critic's input of a turn",
                        () -> jointIds(prompts, texts, q, k), RankWork.listOf(RankWork.LONGS));
        int rows = q ? k : 1;
        double[] v = IACTrainer.valuesOf(criticSet.get(0).model(), head, joint.subList(0, rows),
                Collections.nCopies(rows, new long[0]), padId(0), k);
        double[][] values = new double[numAgents][];
        for (int i = 0; i < numAgents; i++) {
            values[i] = v.clone();
        }
        List<long[]> perGeneration = new ArrayList<>();
        for (int g = 0; g < k; g++) {
            perGeneration.add(joint.get(q ? g : 0));
        }
        return new CriticValues(values, perGeneration);
    }

    /** The critic's input ids per generation g (agent 0's tokenizer). */
    private List<long[]> jointIds(List<String> prompts, List<List<String>> texts, boolean q, int k) {
        List<long[]> joint = new ArrayList<>();
        for (int g = 0; g < k; g++) {
            List<String> actions = null;
            if (q) {
                actions = new ArrayList<>();
                for (int i = 0; i < numAgents; i++) {
                    actions.add(texts.get(i).get(g));
                }
            }
            joint.add(agents.get(0).encode(criticInput(prompts, actions)));
        }
        return joint;
    }

    @Override
    protected boolean parallelUpdates() {
        return false; // one critic for every agent
    }

    /** Every process steps its copy of the critic on every agent's minibatches (the agents split). */
    @Override
    protected boolean updatesEveryAgent() {
        return true;
    }

    @Override
    protected boolean discountedReturns() {
        return false;
    }

    @Override
    protected UpdateResult update(int agent, List<RolloutSample> mb) {
        int n = mb.size();
        List<RolloutSample> mine = local(mb); // a ddp process's share; every sample in one process
        double[] targets = mine.stream().mapToDouble(RolloutSample::valueTarget).toArray();
        double[] old = mine.stream().mapToDouble(RolloutSample::oldValue).toArray();
        // the agents split: only the actor's owner steps it (the others' actor_loss is not used)
        double actorLoss = agents.get(agent) == null ? Double.NaN : actorStep(agent, mb, actorOptimizers.get(agent));
        criticOptimizer.zeroGrad();
        double valueLoss;
        double coef = config.valueLossCoef();
        try (Scope s = Scope.open()) {
            double loss = mine.isEmpty() ? 0 : Scorer.backward(criticSet.get(0).model(),
                    mine.stream().map(RolloutSample::jointInputIds).toList(), Collections.nCopies(mine.size(), new long[0]),
                    padId(0), false, sc -> {
                        long len = sc.hidden().size(1);
                        Tensor v = head.forward(sc.hidden()).select(1, len - 1).toFloat();
                        return meanOverMinibatch(ActorCriticLoss.valueErrors(v, targets, old, null), n).mul(coef);
                    }, config.gradientCheckpointing());
            loss = sumOverRanks(loss);
            requireFinite(loss, "the critic loss", mb, criticOptimizer);
            valueLoss = loss / coef;
        }
        step(agent, "critic", criticOptimizer, mb);
        return new UpdateResult(actorLoss, valueLoss);
    }

    /**
     * Writes {@code dir/agent_i/} (backbones, with tokenizers), {@code dir/critic/} (the critic's
     * backbone) with {@code value_head.safetensors}, {@code value_head.pt} and {@code value_head.json}.
     */
    @Override
    public void saveModel(Path dir) {
        requireOutsideModels(dir, "the save directory");
        criticSet.requireOutside(dir, "the save directory");
        for (int i = 0; i < numAgents; i++) { // a ddp run: rank 0 (data split) or each agent's owner (agents split)
            if (agents.get(i) != null && (work.isMain() || !work.splitsRows())) {
                agents.get(i).save(dir.resolve("agent_" + i));
            }
        }
        if (work.isMain()) { // the critic, which every process holds
            Path criticDir = dir.resolve("critic");
            criticSet.get(0).save(criticDir);
            ValueHeads.save(criticDir, head, config.criticType(), ALGORITHM_NAME);
        }
        work.barrier();
        logger.summary(Map.of("final_model_saved", true)); // W&B's run summary, as the reference logs it
    }

    /**
     * Restores the critic's value head saved by {@link #saveModel} under {@code savedDir}
     * ({@code critic/value_head.*}); fails on another width ({@code model_config}'s
     * {@code critic_value_head_hidden_dim}) or {@code critic_type}.
     */
    public void loadValueHeads(Path savedDir) {
        Path dir = savedDir.resolve("critic");
        ValueHeads.requireInfo(dir, config.criticType(), "critic_value_head_hidden_dim");
        head.restore(dir);
    }

    private void closeActorOptimizers() {
        actorOptimizers.stream().filter(java.util.Objects::nonNull).forEach(AdamW::close);
    }

    @Override
    public void close() {
        closeActorOptimizers();
        if (criticOptimizer != null) {
            criticOptimizer.close();
        }
        if (head != null) {
            head.close();
        }
        if (criticSet != null) {
            criticSet.close();
        }
        super.close();
    }
}
