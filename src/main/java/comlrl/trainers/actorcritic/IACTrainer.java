package comlrl.trainers.actorcritic;

import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.model.ValueHead;
import comlrl.tensor.AdamW;
import comlrl.tensor.GradMode;
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
 * Independent Actor-Critic (reference §5.5): every agent learns its own value function, either a
 * separate critic model with a value head ({@code use_separate_critic: true}, one critic per agent,
 * fed its actor's token ids) or a value head on the actor's own backbone (false: one model, one
 * optimizer). One minibatch update of agent i ({@link ActorCriticLoss} has the formulas):
 * <pre>
 *   separate:  actor  ← AdamW(∇ actor_loss),   critic ← AdamW(∇ value_loss_coef · value_loss)
 *   shared:    model  ← AdamW(∇ (actor_loss + value_loss_coef · value_loss)),  value error clipped
 *              by value_clip_range around V_old
 * </pre>
 * with the critic's value at the prompt's last token ({@code critic_type: v}) or at the response's
 * last token ({@code q}).
 *
 * <pre>{@code
 * try (IACTrainer trainer = IACTrainer.builder().agentModel("builtin:tiny").criticModel("builtin:tiny")
 *         .rewardFunc(reward).trainDataset(train).args(IACConfig.builder().numAgents(2).numTurns(1).build())
 *         .build()) {
 *     trainer.train();
 *     trainer.saveModel(Path.of("out"));
 * }
 * }</pre>
 */
public final class IACTrainer extends ActorCriticTrainerBase {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "IAC";

    private final IACConfig config;
    private final AgentSet criticSet;                 // null with value heads on the actors
    private final List<CausalLmWithValueHead> actorsWithHeads = new ArrayList<>();
    private final List<CausalLmWithValueHead> criticsWithHeads = new ArrayList<>();
    private final List<ValueHead> heads = new ArrayList<>(); // per agent: the critic's (separate) or the actor's
    private final List<AdamW> actorOptimizers = new ArrayList<>();
    private final List<AdamW> criticOptimizers = new ArrayList<>();

    public static Builder<IACTrainer> builder() {
        return new Builder<>(IACTrainer::create);
    }

    private static IACTrainer create(Builder<IACTrainer> b) {
        if (!(b.args instanceof IACConfig c)) {
            throw new IllegalArgumentException("args must be an IACConfig (IACConfig.builder()...build() or "
                    + "IACConfig.fromMap(...)), got " + (b.args == null ? "null" : b.args.getClass().getSimpleName()));
        }
        requireCommon(b, ALGORITHM_NAME);
        if (!c.useSeparateCritic() && b.criticLoraAgents() != null) {
            throw new IllegalArgumentException("critic_lora makes separate critics LoRA critics, but use_separate_critic "
                    + "is false (the value head sits on each actor); set use_separate_critic: true or remove critic_lora");
        }
        ActorCriticSources.Sources sources = ActorCriticSources.iac(c, b.agentModel(), b.agents(), b.tokenizers(),
                b.criticModel(), b.critics());
        b.requireTaskData();
        RankWork work = RankWork.forRun(c.parallelTraining(), c.ddpSplit(), c.numAgents(), b.distributed());
        try {
            return new IACTrainer(b, c, sources, ActorCriticSources.place(c, work.device()), work);
        } catch (RuntimeException | Error e) {
            work.close();
            throw e;
        }
    }

    private IACTrainer(Builder<IACTrainer> b, IACConfig c, ActorCriticSources.Sources sources,
            ActorCriticSources.Placement placement, RankWork work) {
        super(b, c, ALGORITHM_NAME, sources, placement, work);
        this.config = c;
        AgentSet loaded = null;
        try {
            if (c.useSeparateCritic()) {
                loaded = loadCritics(b, sources.critics(), placement.critics(), work::ownsAgent);
                for (int i = 0; i < numAgents; i++) {
                    if (loaded.get(i) != null) {
                        requireVocabulary(i, loaded.get(i));
                    }
                }
            }
            List<CausalLm> backbones = c.useSeparateCritic() ? loaded.models() : agents;
            // every head's hidden size, so that each process draws the heads' initial values in one order
            long[] inputs = fromOwners(backbones, lm -> lm.model().config().hiddenSize());
            Integer width = c.useSeparateCritic() ? c.criticValueHeadHiddenDim() : c.valueHeadHiddenDim();
            try (Rng rng = new Rng(c.seed() ^ 0x5EEDC0FFEEL)) {
                for (int i = 0; i < numAgents; i++) {
                    if (backbones.get(i) != null) {
                        heads.add(ValueHead.forBackbone(backbones.get(i).model(), width == null ? 0 : width, rng));
                    } else { // another process's head: the same draws, kept nowhere
                        ValueHead.create((int) inputs[i], width == null ? 0 : width, comlrl.tensor.DType.F32,
                                comlrl.tensor.Device.CPU, rng).close();
                        heads.add(null);
                    }
                }
            }
            for (int i = 0; i < numAgents; i++) {
                if (agents.get(i) == null) { // the agents split: another process's agent
                    actorOptimizers.add(null);
                    actorsWithHeads.add(null);
                    if (c.useSeparateCritic()) {
                        criticOptimizers.add(null);
                        criticsWithHeads.add(null);
                    }
                    continue;
                }
                List<Tensor> actorParams = new ArrayList<>(agents.get(i).model().parameters());
                if (!c.useSeparateCritic()) {
                    actorParams.addAll(heads.get(i).parameters());
                }
                actorOptimizers.add(work.adamW(actorParams, c.agentLearningRate(), 0.01));
                actorsWithHeads.add(new CausalLmWithValueHead(agents.get(i), c.useSeparateCritic() ? null : heads.get(i)));
                if (c.useSeparateCritic()) {
                    List<Tensor> criticParams = new ArrayList<>(loaded.get(i).model().parameters());
                    criticParams.addAll(heads.get(i).parameters());
                    criticOptimizers.add(work.adamW(criticParams, c.criticLearningRate(), 0.01));
                    criticsWithHeads.add(new CausalLmWithValueHead(loaded.get(i), heads.get(i)));
                }
            }
            if (loaded != null) {
                loaded.requireOutside(outputDir, "output_dir");
            }
        } catch (RuntimeException | Error e) {
            closeAll();
            closeCritics(loaded);
            super.close();
            throw e;
        }
        this.criticSet = loaded;
        List<TrainerCheckpoint.ShapeGroup> shapes = new ArrayList<>();
        shapes.add(TrainerCheckpoint.ShapeGroup.of("model_shapes", "agent", actorModels(), work));
        if (criticSet != null) {
            shapes.add(TrainerCheckpoint.ShapeGroup.of("critic_shapes", "critic", modelsOf(criticSet.models()), work));
        }
        initCheckpoint(shapes, checkpointParts());
    }

    /** A separate critic reads its actor's token ids, so its vocabulary must cover them. */
    private void requireVocabulary(int i, CausalLm critic) {
        long actorVocab = agents.get(i).tokenizer().vocabSize();
        long criticVocab = critic.model().config().vocabSize();
        if (criticVocab < actorVocab) {
            throw new IllegalArgumentException("critic " + i + " (" + critic.source() + ") has vocab_size " + criticVocab
                    + " but agent " + i + "'s tokenizer makes ids up to " + (actorVocab - 1) + ": a separate critic reads "
                    + "its actor's token ids; give it a critic of the actor's model family (critic_model/critics)");
        }
    }

    private Map<String, TrainerCheckpoint.Part> checkpointParts() {
        Map<String, TrainerCheckpoint.Part> parts = new LinkedHashMap<>();
        for (int i = 0; i < numAgents; i++) {
            if (agents.get(i) == null) {
                continue; // the agents split: its owner writes and restores it
            }
            parts.put("agent_" + i, TrainerCheckpoint.weights("agent_" + i, "agent " + i, agents.get(i)));
            parts.put("optimizer_" + i, TrainerCheckpoint.optimizer("optimizer_" + i + ".safetensors",
                    actorOptimizers.get(i)));
            if (criticSet != null) {
                parts.put("critic_" + i, TrainerCheckpoint.weights("critic_" + i, "critic " + i, criticSet.get(i)));
                parts.put("critic_optimizer_" + i, TrainerCheckpoint.optimizer("critic_optimizer_" + i + ".safetensors",
                        criticOptimizers.get(i)));
            }
            parts.put("value_head_" + i, valueHeadPart("value_head_" + i, heads.get(i)));
        }
        return parts;
    }

    /** A value head in {@code checkpoint/dirName/}. */
    static TrainerCheckpoint.Part valueHeadPart(String dirName, ValueHead head) {
        return new TrainerCheckpoint.Part() {
            @Override
            public void save(Path dir) {
                head.save(dir.resolve(dirName));
            }

            @Override
            public void restore(Path dir) {
                head.restore(dir.resolve(dirName));
            }
        };
    }

    public IACConfig config() {
        return config;
    }

    /**
     * The actors; each carries its value head when {@code use_separate_critic} is false. In a ddp run
     * with the agents split, null for the agents other processes hold.
     */
    public List<CausalLmWithValueHead> agents() {
        return Collections.unmodifiableList(actorsWithHeads);
    }

    /**
     * The separate critics with their value heads (empty with value heads on the actors); null for
     * other processes' agents in the agents split.
     */
    public List<CausalLmWithValueHead> critics() {
        return Collections.unmodifiableList(criticsWithHeads);
    }

    // ------------------------------------------------------------------ critic

    @Override
    protected CriticValues criticValues(int turn, List<String> prompts, List<long[]> promptIds,
            List<List<long[]>> responses, List<List<String>> texts) {
        boolean q = config.criticType().readsResponse();
        List<double[]> values = executor.map(i -> {
            if (agents.get(i) == null) {
                return null; // the agents split: its owner values it
            }
            int k = responses.get(i).size();
            DecoderLm model = criticModel(i);
            long pad = padId(i);
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
            return valuesOf(model, heads.get(i), Collections.nCopies(q ? k : 1, promptIds.get(i)),
                    q ? responses.get(i) : Collections.nCopies(1, new long[0]), pad, k);
        });
        return new CriticValues(values.toArray(new double[0][]), null);
    }

    /** Values at each row's last token without gradients; one row broadcast to {@code k} when given one. */
    static double[] valuesOf(DecoderLm model, ValueHead head, List<long[]> prompts, List<long[]> responses, long pad,
            int k) {
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Tensor hidden = Scorer.hidden(model, prompts, responses, pad);
            Tensor v = head.forward(hidden).select(1, hidden.size(1) - 1).toFloat();
            double[] values = v.toDoubleArray();
            if (values.length == k) {
                return values;
            }
            double[] out = new double[k];
            java.util.Arrays.fill(out, values[0]);
            return out;
        }
    }

    private DecoderLm criticModel(int i) {
        return criticSet != null ? criticSet.get(i).model() : agents.get(i).model();
    }

    private static String abbreviate(String text) {
        String oneLine = text.replace("\n", "\\n");
        return "\"" + (oneLine.length() > 60 ? oneLine.substring(0, 57) + "..." : oneLine) + "\"";
    }

    // ------------------------------------------------------------------ update

    @Override
    protected boolean parallelUpdates() {
        return true;
    }

    @Override
    protected boolean discountedReturns() {
        return true;
    }

    @Override
    protected UpdateResult update(int agent, List<RolloutSample> mb) {
        boolean q = config.criticType().readsResponse();
        long pad = padId(agent);
        DecoderLm actor = agents.get(agent).model();
        ValueHead head = heads.get(agent);
        List<RolloutSample> mine = local(mb); // a ddp process's share; every sample in one process
        List<long[]> prompts = mine.stream().map(RolloutSample::promptIds).toList();
        List<long[]> responses = mine.stream().map(RolloutSample::responseIds).toList();
        double[] adv = mine.stream().mapToDouble(RolloutSample::normalizedAdvantage).toArray();
        double[] targets = mine.stream().mapToDouble(RolloutSample::valueTarget).toArray();
        double[] old = mine.stream().mapToDouble(RolloutSample::oldValue).toArray();
        int n = mb.size();
        double coef = config.valueLossCoef();
        boolean ckpt = config.gradientCheckpointing();
        if (criticSet == null) {
            // one backbone: one step on actor_loss + coef · value_loss
            AdamW opt = actorOptimizers.get(agent);
            double[] parts = new double[2];
            opt.zeroGrad();
            try (Scope s = Scope.open()) {
                double total = 0;
                if (!mine.isEmpty()) {
                    Tensor a = Tensor.ofDoubles(adv, actor.device()).to(comlrl.tensor.DType.F32);
                    total = Scorer.backward(actor, prompts, responses, pad, true, sc -> {
                        Tensor actorLoss = meanOverMinibatch(sc.sequenceLogprobs().mul(a).neg(), n);
                        long len = sc.hidden().size(1);
                        long[] pos = valuePositions(mine, len, q, true);
                        Tensor v = ValueHead.valuesAt(head.forward(sc.hidden()), pos).toFloat();
                        Tensor valueLoss = meanOverMinibatch(
                                ActorCriticLoss.valueErrors(v, targets, old, config.valueClipRange()), n);
                        parts[0] = actorLoss.item();
                        parts[1] = valueLoss.item();
                        return actorLoss.add(valueLoss.mul(coef));
                    }, ckpt);
                }
                double[] sums = sumOverRanks(new double[] {total, parts[0], parts[1]});
                total = sums[0];
                parts[0] = sums[1];
                parts[1] = sums[2];
                requireFinite(total, "the loss (actor_loss + value_loss_coef * value_loss)", mb, opt);
            }
            step(agent, "shared", opt, mb);
            return new UpdateResult(parts[0], parts[1]);
        }
        // separate critic: the actor's step, then the critic's
        double actorLoss = actorStep(agent, mb, actorOptimizers.get(agent));
        AdamW criticOpt = criticOptimizers.get(agent);
        criticOpt.zeroGrad();
        double valueLoss;
        try (Scope s = Scope.open()) {
            List<long[]> criticResponses = q ? responses : Collections.nCopies(mine.size(), new long[0]);
            double loss = mine.isEmpty() ? 0 : Scorer.backward(criticSet.get(agent).model(), prompts, criticResponses,
                    pad, false, sc -> {
                        long len = sc.hidden().size(1);
                        Tensor v = head.forward(sc.hidden()).select(1, len - 1).toFloat();
                        return meanOverMinibatch(ActorCriticLoss.valueErrors(v, targets, old, null), n).mul(coef);
                    }, ckpt);
            loss = sumOverRanks(loss);
            requireFinite(loss, "the critic loss", mb, criticOpt);
            valueLoss = loss / coef;
        }
        step(agent, "critic", criticOpt, mb);
        return new UpdateResult(actorLoss, valueLoss);
    }

    // ------------------------------------------------------------------ saving

    /**
     * Writes the reference's layout (§11): with one agent the actor's model directory is {@code dir}
     * itself and a separate critic is {@code dir/critic/}; with N agents {@code dir/agent_i/} and
     * {@code dir/agent_i/critic/}. Each head goes beside its backbone as {@code value_head.safetensors}
     * and {@code value_head.pt} (a state dict {@code torch.load} opens), with {@code value_head.json}
     * recording its width and {@code critic_type} for {@link #loadValueHeads}.
     */
    @Override
    public void saveModel(Path dir) {
        requireOutsideModels(dir, "the save directory");
        if (criticSet != null) {
            criticSet.requireOutside(dir, "the save directory");
        }
        // a ddp run: rank 0 writes every agent (data split), or each process its own (agents split)
        boolean writes = work.isMain() || !work.splitsRows();
        for (int i = 0; i < numAgents && writes; i++) {
            if (agents.get(i) == null) {
                continue;
            }
            Path actorDir = numAgents == 1 ? dir : dir.resolve("agent_" + i);
            agents.get(i).save(actorDir);
            if (criticSet == null) {
                saveHead(heads.get(i), actorDir);
            } else {
                criticSet.get(i).save(actorDir.resolve("critic"));
                saveHead(heads.get(i), actorDir.resolve("critic"));
            }
        }
        work.barrier();
        logger.summary(Map.of("final_model_saved", true)); // W&B's run summary, as the reference logs it
    }

    private void saveHead(ValueHead head, Path dir) {
        ValueHeads.save(dir, head, config.criticType(), ALGORITHM_NAME);
    }

    /**
     * Restores the value heads saved by {@link #saveModel} under {@code savedDir} into this trainer's
     * heads (the reference's {@code value_head.load_state_dict(torch.load(...))} step before
     * {@code train()}). Fails, naming the file, when a head's width or input size differs from this
     * run's ({@code value_head_hidden_dim} / {@code critic_value_head_hidden_dim}), or when the saved
     * run used another {@code critic_type}.
     */
    public void loadValueHeads(Path savedDir) {
        for (int i = 0; i < numAgents; i++) {
            Path actorDir = numAgents == 1 ? savedDir : savedDir.resolve("agent_" + i);
            Path headDir = criticSet == null ? actorDir : actorDir.resolve("critic");
            if (heads.get(i) == null) {
                continue; // the agents split: its owner restores it
            }
            ValueHeads.requireInfo(headDir, config.criticType(),
                    criticSet == null ? "value_head_hidden_dim" : "critic_value_head_hidden_dim");
            heads.get(i).restore(headDir);
        }
    }

    @Override
    public void close() {
        closeAll();
        closeCritics(criticSet);
        super.close();
    }

    /** The optimizers and heads (null for other processes' agents in the agents split). */
    private void closeAll() {
        actorOptimizers.stream().filter(java.util.Objects::nonNull).forEach(AdamW::close);
        criticOptimizers.stream().filter(java.util.Objects::nonNull).forEach(AdamW::close);
        heads.stream().filter(java.util.Objects::nonNull).forEach(ValueHead::close);
    }

    private static void closeCritics(AgentSet set) {
        if (set != null) {
            set.close();
        }
    }
}
