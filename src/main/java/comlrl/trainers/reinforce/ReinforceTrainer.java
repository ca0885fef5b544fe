package comlrl.trainers.reinforce;

import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.data.TaskItem;
import comlrl.distributed.HeldAgents;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.FinishReason;
import comlrl.generation.SeedStream;
import comlrl.logging.MetricsLogger;
import comlrl.model.DecoderLm;
import comlrl.rl.DynamicSampling;
import comlrl.rl.JointMode;
import comlrl.rl.RolloutNode;
import comlrl.rl.Stats;
import comlrl.rl.TreeReturns;
import comlrl.tensor.AdamW;
import comlrl.trainers.AgentSources;
import comlrl.trainers.Devices;
import comlrl.trainers.common.EpochProgress;
import comlrl.trainers.common.EpochTrainer;
import comlrl.trainers.common.JointEvaluator;
import comlrl.reward.JointRewarder;
import comlrl.trainers.common.JointRollout;
import comlrl.trainers.common.TrainerParts;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.common.Transitions;
import comlrl.utils.Formatters;
import comlrl.utils.TrainerFields;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.IntStream;

/**
 * The trainer of the MAGRPO family ({@link MAGRPOTrainer} and its variants, {@link CentralizedMAGRPOTrainer}):
 * N agents, each sampling G completions per rollout-tree node; joint rewards turned into
 * advantages per agent ({@code advantage_mode}); one REINFORCE step per minibatch of nodes, one AdamW
 * per agent.
 *
 * <p>Call order: build → {@link #train()} (or with checkpoints) → {@link #evaluate(int)} →
 * {@link #saveModel(Path)} → {@link #close()}. The trainer owns the agents' native memory.
 *
 * <p>Differences from the Python reference, on purpose: padding never enters the loss (reference
 * bug 6); metric keys also exist per agent ({@code agent_i/turn_t/...}, bug 9), and agents drained
 * together log one event whose aggregate keys average over them; {@code eval_num_samples} must be
 * at least 1 (bug 11); sampling is seeded ({@code seed}) and therefore repeatable.
 */
public abstract class ReinforceTrainer extends EpochTrainer {
    protected final MAGRPOConfig args;
    private final String algorithmName;
    /** The agents, their generate settings, references, executor and share of the run, freed on close. */
    private final TrainerParts parts;
    private final HeldAgents<CausalLm> agents;
    private final HeldAgents<AdamW> optimizers;
    private final JointRewarder rewarder;
    private final SeedStream seeds;
    private final MetricsLogger logger;
    /** The rollout engine of training (with the references); evaluation's is the same without them. */
    private final JointRollout rollout;
    private final JointEvaluator evaluator;
    /** Sees each agent's accumulated gradients before its optimizer step (tests only). */
    private final BiConsumer<Integer, DecoderLm> gradientObserver;
    /** Epochs done and {@code env_step} (saved in checkpoints), and the outer loop. */
    private final EpochProgress progress;
    private final AgentBuffers buffers;
    private final UpdateMetrics updateMetrics;
    private final DynamicSampling dynamicSampling;

    /**
     * Runs the checks that need no model, joins the other processes of a ddp run, then loads the agents,
     * optimizers, references, logger, rollout engine, evaluator and checkpoint (freed if any of it fails).
     */
    protected ReinforceTrainer(ReinforceBuilder<?> b, String algorithmName) {
        if (b.args() == null) {
            throw new IllegalArgumentException("args (an MAGRPOConfig) must be provided");
        }
        b.requireCommon(algorithmName, b.args().numTurns());
        this.args = b.args();
        this.algorithmName = algorithmName;
        TrainerSettings settings = b.settings();
        // the constructor's num_agents wins; without it the agents list's length, else the config's num_agents
        int count = b.resolvedNumAgents(args.numAgents());
        if (count < 1) {
            throw new IllegalArgumentException("num_agents must be >= 1, got " + count);
        }
        if ((settings.get(TrainerSettings.EVAL_LOGGER) == null) != (settings.get(TrainerSettings.EVAL_AGGREGATOR) == null)) {
            throw new IllegalArgumentException("eval_logger and eval_aggregator must be given together");
        }
        Formatters formatters = Formatters.fromArgument(settings.get(TrainerSettings.FORMATTERS), count);
        List<Object> sources = AgentSources.resolve("agents", settings.get(TrainerSettings.AGENT_MODEL),
                settings.get(TrainerSettings.AGENTS), count, "num_agents");
        TrainerSettings.Rewarders rewarders = settings.rewarders(count, args.numGenerations(), algorithmName,
                args.skipNonfiniteSamples());
        this.rewarder = rewarders.training();
        Transitions transitions = new Transitions(settings.get(TrainerSettings.EXTERNAL_TRANSITION), count);
        this.gradientObserver = b.gradientObserver;
        this.seeds = new SeedStream(args.seed());
        // every check that can fail without a model has run; join the other processes (ddp), then load
        // (and free what was loaded on failure)
        this.parts = TrainerParts.join(settings, args, sources, args.numGenerations(), (work, devices) ->
                !args.referenceKlEnabled() ? null : args.referenceDevices() == null || work.device() != null ? devices
                        : Devices.resolve(args.referenceDevices(), count, "reference_devices"));
        this.agents = parts.agents;
        try {
            this.optimizers = parts.adamW(args.agentLearningRate());
            this.logger = parts.openLogger(settings.metricsLogger(args.loggingSteps(), algorithmName,
                    parts.trackedConfig(args.toMap()), parts.work.isMain()));
            JointRollout evalRollout = JointRollout.of(agents.asList(), parts.generation.asList(), formatters,
                    settings.promptEncoder(), parts.executor, parts.work)
                    .withTransitions(transitions, args.externalPromptPassthrough());
            this.evaluator = new JointEvaluator(settings, evalRollout, JointEvaluator.team(
                    rewarders.evaluation().averagingAgentRewards()), // per-agent rewards: evaluation logs their team mean
                    seeds, args.numTurns(), args.evalBatchSize()).generations(args.get(TrainerFields.EVAL_NUM_GENERATIONS));
            this.rollout = evalRollout.withReferences(parts.references);
            TrainerCheckpoint checkpoint = new TrainerCheckpoint(algorithmName, count, args.numTrainEpochs(),
                    args.saveTotalLimit(), List.of(TrainerCheckpoint.ShapeGroup.of("model_shapes", "agent",
                            agents.map(CausalLm::model))), TrainerCheckpoint.agentParts(agents, optimizers),
                    settings.statefulParts(TrainerSettings.TRAIN_DATASET, TrainerSettings.EVAL_DATASET,
                            TrainerSettings.REWARD_FUNC, TrainerSettings.REWARD_PROCESSOR,
                            TrainerSettings.EXTERNAL_TRANSITION, TrainerSettings.EVAL_LOGGER,
                            TrainerSettings.EVAL_AGGREGATOR),
                    seeds, logger, parts.work).extendedBy(settings.get(TrainerSettings.CHECKPOINT_EXTENSION));
            this.updateMetrics = new UpdateMetrics(args.referenceKlCoef(), args.referenceKlEnabled(),
                    settings.console(), parts.work.isMain(), args.dynamicSampling());
            this.dynamicSampling = new DynamicSampling(args.dynamicSampling(), args.dynamicSamplingMaxDraws());
            this.buffers = new AgentBuffers(agents, args.rolloutBufferSize(), args.trainBatchSize(), seeds,
                    parts.executor, this::step, updated -> TrainerParts.releaseDecodeWeights(agents, updated), updateMetrics, args.numIterations(), (agent, s) -> MAGRPOLoss
                            .behaviourLogprobs(agents.get(agent).model(), s, agents.get(agent).padId(), parts.work));
            this.progress = new EpochProgress(parts.loop(args.evalInterval()), checkpoint, parts.actors, this::evaluate,
                    this::trainItem, this::flushAll);
        } catch (RuntimeException | Error e) {
            parts.closeAfter(e);
            throw e;
        }
    }

    public MAGRPOConfig args() {
        return args;
    }

    /** The agents, in order; in the agents split of a ddp run, null for those another process holds. */
    public List<CausalLm> agents() {
        return agents.asList();
    }

    public int numAgents() {
        return agents.size();
    }

    @Override
    protected final EpochProgress progress() {
        return progress;
    }

    @Override
    protected final TrainerParts parts() {
        return parts;
    }

    public String algorithmName() {
        return algorithmName;
    }

    /** Updates every agent from what its buffer still holds (end of an epoch); dynamic sampling's count starts afresh. */
    private void flushAll() {
        buffers.drainAll();
        dynamicSampling.drained();
        updateMetrics.flush(logger);
        updateMetrics.flushDropped(logger, progress.envStep());
    }

    /** Evaluates on the first {@code eval_num_samples} items of the evaluation set. */
    @Override
    public Map<String, Double> evaluate() {
        return evaluate(args.evalNumSamples());
    }

    /**
     * Evaluates on the first {@code numEvalSamples} evaluation items, one completion per agent per turn:
     * {@code eval/turn_t/reward_mean}, {@code eval/turn_t/expected_return} and the custom metrics
     * ({@code {}} without an evaluation set).
     */
    public Map<String, Double> evaluate(int numEvalSamples) {
        return evaluator.evaluate(numEvalSamples, logger, progress.envStep());
    }

    /**
     * Writes {@code dir/agent_i/}, a Hugging Face model directory, for each agent, each replaced atomically;
     * {@code dir} may not be, or lie inside, a directory an agent was loaded from.
     */
    @Override
    public void saveModel(Path dir) {
        parts.actors.saveAgents(agents, parts.work, dir);
        logger.summary(Map.of("final_model_saved", true)); // W&B's run summary, as the reference logs it
    }

    // ------------------------------------------------------------------ rollout tree

    /**
     * A node of the rollout tree: the turn sampled and scored ({@code [K]} team rewards r_k; with per-agent
     * rewards r_k = (1/N) Σ_i r_{i,k}), agent i's rewards r_{i,k} ({@code [N][K]}, null when every joint action
     * got a team reward), its children ({@code [] or [K]}).
     */
    private record Node(JointRollout.Turn turn, double[] rewards, double[][] agentRewards, long envStep,
            List<Node> children) {
        boolean anyAgentRewards() {
            return agentRewards != null || children.stream().anyMatch(Node::anyAgentRewards);
        }

        /** Agent i's reward of each joint action: its own, or the team's. */
        double[] rewardsOf(int agent) {
            return agentRewards == null ? rewards : agentRewards[agent];
        }
    }

    /**
     * Trains on one task item: its rollout tree ({@link #buildNode}), the undiscounted returns of every
     * joint action ({@link TreeReturns}) and each agent's returns per completion, buffered for the updates:
     * <pre>
     *   leaf:      R_k = r_k
     *   internal:  R_k = r_k + mean_l( R^{child k}_l )
     *   aligned:   R_i[k] = R_k          cross: R_i[k] = Σ_{j : j_i = k} R_j     (JointMode)
     * </pre>
     * With {@code dynamic_sampling} an item whose joint returns are all equal at every node may be
     * dropped instead ({@link DynamicSampling}).
     */
    private void trainItem(TaskItem item, String label) {
        Node root = buildNode(rollout.start(item, label));
        TreeReturns returns = TreeReturns.compute(toRolloutNode(root, -1));
        List<TreeReturns> byAgent = agentReturns(root);
        if (dynamicSampling.drop(byAgent != null ? byAgent : List.of(returns))) {
            updateMetrics.dropped(); // the epoch's next item takes its place in the buffers
            return;
        }
        List<NodeSample> samples = new ArrayList<>();
        collectSamples(root, returns, byAgent, samples);
        samples.sort((a, b) -> Long.compare(a.envStep(), b.envStep()));
        if (buffers.add(samples)) {
            dynamicSampling.drained();
        }
        updateMetrics.flush(logger);
    }

    /**
     * Expands the node of {@code state} (G completions per agent, the K joint actions' rewards), then,
     * below the last turn and unless the node's mean team reward exceeds
     * {@code early_termination_threshold}, one child per joint action, depth first.
     */
    private Node buildNode(JointRollout.TurnState state) {
        JointMode mode = args.jointMode();
        int g = args.numGenerations();
        JointRollout.Scored<double[][]> node = rollout.expand(state, seeds, g,
                JointRollout.Scoring.jointActionsPerAgent(rewarder, mode));
        double[] rewards = node.rewards()[0];   // [K] team rewards
        double[][] agentRewards = node.rewards().length == 1 ? null                  // [N][K]
                : Arrays.copyOfRange(node.rewards(), 1, node.rewards().length);
        long step = progress.advance(rewards.length);
        Double threshold = args.earlyTerminationThreshold();
        boolean terminated = threshold != null && Stats.mean(rewards) > threshold;
        List<Node> children = new ArrayList<>();
        if (state.turn() < args.numTurns() - 1 && !terminated) {
            for (int j = 0; j < rewards.length; j++) {
                children.add(buildNode(rollout.next(node.turn(), mode.completionIndices(j, g, agents.size()))));
            }
        }
        return new Node(node.turn(), rewards, agentRewards, step, List.copyOf(children));
    }

    /** The tree of agent {@code agent}'s rewards r_{i,k} (the team's r_k when −1). */
    private static RolloutNode toRolloutNode(Node n, int agent) {
        return RolloutNode.of(agent < 0 ? n.rewards() : n.rewardsOf(agent),
                n.children().stream().map(c -> toRolloutNode(c, agent)).toList());
    }

    /** The returns of each agent's own rewards ({@code [N]} trees) when the reward function gave any; else null. */
    private List<TreeReturns> agentReturns(Node root) {
        return !root.anyAgentRewards() ? null
                : IntStream.range(0, agents.size()).mapToObj(i -> TreeReturns.compute(toRolloutNode(root, i))).toList();
    }

    /**
     * One NodeSample per agent of {@code n} and of every node below it, with agent i's returns per
     * completion R_i[k] and, for {@code credit: counterfactual}, per context R_i[k][c] ({@code [G][C]}).
     * {@code byAgent}: the returns of each agent's own rewards at this node ({@code [N]}; null for team
     * rewards), from which its returns and its logged reward and return then come:
     * <pre>
     *   R_{i,k} = r_{i,k} + mean_l R^{child k}_{i,l}
     *   aligned: R_i[k] = R_{i,k}      cross: R_i[k] = Σ_{j : j_i = k} R_{i,j}      R_i[k][c] = R_{i,j(k,c)}
     *   agent_i/turn_t/reward_mean = mean_k r_{i,k},  agent_i/turn_t/expected_return = mean_k R_{i,k}
     * </pre>
     */
    private void collectSamples(Node n, TreeReturns r, List<TreeReturns> byAgent, List<NodeSample> out) {
        List<TreeReturns> own = byAgent != null ? byAgent : Collections.nCopies(agents.size(), r);
        double[][] perAgent = ownReturns(own, args.jointMode(), args.numGenerations());          // [N][G]
        double[][][] perContext = args.credit() != Credit.COUNTERFACTUAL ? null                  // [N][G][C]
                : ownContextReturns(own, args.jointMode(), args.numGenerations());
        JointRollout.Turn turn = n.turn();
        for (int i = 0; i < agents.size(); i++) {
            List<Completion> cs = turn.completions().get(i);
            List<long[]> ys = cs.stream().map(Completion::tokenIds).toList();
            boolean[] truncated = new boolean[cs.size()];
            for (int k = 0; k < truncated.length; k++) {
                truncated[k] = cs.get(k).finishReason() == FinishReason.LENGTH;
            }
            out.add(new NodeSample(i, turn.state().turn(), turn.promptIds().get(i), ys, perAgent[i],
                    turn.referenceKls() == null ? null : turn.referenceKls()[i], Stats.mean(n.rewardsOf(i)),
                    byAgent == null ? r.meanReturn() : byAgent.get(i).meanReturn(),
                    n.envStep(), turn.state().label(), truncated, perContext == null ? null : perContext[i],
                    args.advantageNormalizationScope() == NormalizationScope.JOINT
                            ? new NodeSample.Peers(perAgent, turn.referenceKls()) : null));
        }
        for (int c = 0; c < n.children().size(); c++) {
            final int child = c;
            collectSamples(n.children().get(c), r.children().get(c),
                    byAgent == null ? null : byAgent.stream().map(t -> t.children().get(child)).toList(), out);
        }
    }

    /**
     * Each agent's returns per completion at one node, {@code [N][G]}, from the returns of its own rewards
     * ({@code own}, {@code [N]}, the team tree N times for team rewards): R_i[k] = perAgentReturns(own_i)[i][k].
     */
    static double[][] ownReturns(List<TreeReturns> own, JointMode mode, int numGenerations) {
        return IntStream.range(0, own.size()).mapToObj(i -> own.get(i).perAgentReturns(mode, numGenerations,
                own.size())[i]).toArray(double[][]::new);
    }

    /** {@link #ownReturns} per context: {@code R_i[k][c] = contextReturns(own_i)[i][k][c]}, {@code [N][G][C]}. */
    static double[][][] ownContextReturns(List<TreeReturns> own, JointMode mode, int numGenerations) {
        return IntStream.range(0, own.size()).mapToObj(i -> own.get(i).contextReturns(mode, numGenerations,
                own.size())[i]).toArray(double[][][]::new);
    }

    // ------------------------------------------------------------------ updates

    /**
     * One AdamW step on a minibatch B of NodeSamples after ∇ L_B is accumulated sample by sample
     * ({@link MAGRPOLoss}): the weighted log-likelihood with {@code num_iterations} 1 ({@code oldLogprobs}
     * null), else the clipped surrogate of the ratio to π_old (one of the μ passes over B).
     *
     * <p>Nothing non-finite reaches the weights: a sample with a NaN/Inf return or loss, or a minibatch whose
     * gradient is not finite, stops training before the step; with {@code skip_nonfinite_samples} such
     * samples (or that minibatch) are left out and counted.
     */
    private void step(int agent, List<NodeSample> minibatch, List<float[][]> oldLogprobs, TurnStats stats) {
        DecoderLm model = agents.get(agent).model();
        AdamW opt = optimizers.get(agent);
        long pad = agents.get(agent).padId();
        List<NodeSample> kept = new ArrayList<>();
        List<float[][]> keptOld = new ArrayList<>(); // log π_old of the kept samples (μ > 1)
        for (int j = 0; j < minibatch.size(); j++) {
            NodeSample s = minibatch.get(j);
            if (s.finite()) {
                kept.add(s);
                keptOld.add(oldLogprobs == null ? null : oldLogprobs.get(j));
            } else if (args.skipNonfiniteSamples()) {
                stats.skip();
            } else {
                throw nonFinite(new MAGRPOLoss.NonFiniteException("a return or reference KL is not finite", s).getMessage());
            }
        }
        double[] losses = null;
        MAGRPOLoss.ClippedLosses clipped = null;
        while (losses == null && !kept.isEmpty()) {
            opt.zeroGrad();
            try {
                if (oldLogprobs == null) {
                    losses = MAGRPOLoss.accumulate(model, kept, args, pad, parts.work);
                } else {
                    clipped = MAGRPOLoss.accumulateClipped(model, kept, keptOld, args, pad, parts.work);
                    losses = clipped.losses();
                }
            } catch (MAGRPOLoss.NonFiniteException e) {
                if (!args.skipNonfiniteSamples()) {
                    opt.zeroGrad();
                    throw nonFinite(e.getMessage());
                }
                int j = kept.indexOf(e.sample());
                kept.remove(j); // again without it (the weights depend on |B|)
                keptOld.remove(j);
                stats.skip();
            }
        }
        if (losses == null) {
            opt.zeroGrad();
            return;
        }
        if (!TrainerParts.stepIfFinite(parts.work, opt, gradientObserver == null ? null
                : () -> gradientObserver.accept(agent, model))) {
            if (!args.skipNonfiniteSamples()) {
                throw nonFinite("the gradient of agent " + agent + "'s loss is not finite for a minibatch of "
                        + kept.size() + " samples from " + kept.get(0).item() + " (losses " + Arrays.toString(losses)
                        + ")");
            }
            kept.forEach(s -> stats.skip());
            return;
        }
        for (int j = 0; j < kept.size(); j++) {
            stats.add(kept.get(j), losses[j], args.referenceKlEnabled());
        }
        if (clipped != null) {
            stats.addClipped(clipped.tokens(), clipped.lowClipped(), clipped.highClipped());
        }
    }

    private static IllegalStateException nonFinite(String detail) {
        return new IllegalStateException("Training stopped: " + detail + ". No optimizer step used it, so the weights "
                + "and the last checkpoint are intact; fix the reward or its processor, or set "
                + "skip_nonfinite_samples: true to leave such samples out of the update.");
    }
}
