package comlrl.trainers.reinforce;

import comlrl.checkpoint.Checkpoints;
import comlrl.data.Dataset;
import comlrl.data.TaskSet;
import comlrl.data.TaskItem;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.logging.MetricSink;
import comlrl.model.DecoderLm;
import comlrl.reward.RewardFunction;
import comlrl.rl.JointMode;
import comlrl.rl.Returns;
import comlrl.rl.RolloutNode;
import comlrl.rl.Stats;
import comlrl.rl.TreeReturns;
import comlrl.tensor.AdamW;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.trainers.AgentSources;
import comlrl.trainers.Devices;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.ExternalTransition;
import comlrl.trainers.common.AgentExecutor;
import comlrl.trainers.common.AgentGeneration;
import comlrl.trainers.common.AgentSet;
import comlrl.trainers.common.JointRollout;
import comlrl.trainers.common.EpochLoop;
import comlrl.trainers.common.JointEvaluator;
import comlrl.trainers.common.JointRewarder;
import comlrl.trainers.common.MetricsLogger;
import comlrl.trainers.common.PromptEncoder;
import comlrl.trainers.common.RankWork;
import comlrl.trainers.common.ReferencePolicy;
import comlrl.trainers.common.SeedStream;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerCheckpoint;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.common.Transitions;
import comlrl.utils.Formatter;
import comlrl.utils.Formatters;
import comlrl.utils.RewardProcessor;
import comlrl.utils.RewardProcessors;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Multi-Agent Group Relative Policy Optimisation: N agents, each sampling G completions per
 * rollout-tree node; joint rewards turned into group-relative advantages per agent; one REINFORCE
 * step per minibatch of nodes, one AdamW per agent.
 *
 * <p>Call order: build → {@link #train()} (or with checkpoints) → {@link #evaluate(int)} →
 * {@link #saveModel(Path)} → {@link #close()}. The trainer owns the agents' native memory.
 *
 * <p>Differences from the Python reference, on purpose: padding never enters the loss (reference
 * bug 6); metric keys also exist per agent ({@code agent_i/turn_t/...}, bug 9), and agents drained
 * together log one event whose aggregate keys average over them; {@code eval_num_samples} must be
 * at least 1 (bug 11); sampling is seeded ({@code seed}) and therefore repeatable.
 */
public class MAGRPOTrainer implements Trainer {
    protected final MAGRPOConfig args;
    /** What the builder was given besides {@code args} (as this trainer took it). */
    private final TrainerSettings settings;
    private final String algorithmName;
    private final AgentSet actors;
    private final List<CausalLm> agents; // actors.models()
    /** Frozen references for reference-KL shaping, or null when it is off. */
    private ReferencePolicy references;
    private final List<AdamW> optimizers;
    /** Per agent: the generate settings of rollouts, resolved against the agent's generation config. */
    private final List<GenerationSettings.Resolved> generation = new ArrayList<>();
    private final Formatters formatters;
    private final RewardFunction rewardFunc;
    private final RewardProcessor rewardProcessor;
    private final JointRewarder rewarder;
    private final TaskSet trainDataset;
    private final Dataset evalDataset;
    private final ExternalTransition externalTransition;
    private final Transitions transitions;
    private final EvalLogger evalLogger;
    private final EvalAggregator evalAggregator;
    private final MetricsLogger logger;
    private final Path outputDir;
    private final boolean verbose;
    private final PromptEncoder promptEncoder;
    private final PrintStream console;
    private final AgentExecutor executor;
    private final int numAgents;
    private final TrainerCheckpoint checkpoint;
    private final JointEvaluator evaluator;
    /** The rollout engine: each tree node expanded by it. */
    private final JointRollout rollout;
    /** This process's share of a ddp run ({@link RankWork}); one process does everything otherwise. */
    private final RankWork work;

    // training state (saved in checkpoints)
    private long envStep;
    private final SeedStream seeds;
    private int epochsDone;
    /** The task item being rolled out, for messages ("train item 3 of epoch 1", "eval item 0"). */
    private String itemLabel = "a task item";
    /** Each agent's buffered samples and their minibatch updates ({@link #step}). */
    private final AgentBuffers buffers;
    /** The metrics of the updates since the last log event. */
    private final UpdateMetrics updateMetrics;
    /** Sees each agent's accumulated gradients before its optimizer step (tests only). */
    private final java.util.function.BiConsumer<Integer, DecoderLm> gradientObserver;

    protected MAGRPOTrainer(Builder b, String algorithmName) {
        if (b.args == null) {
            throw new IllegalArgumentException("args (an MAGRPOConfig) must be provided");
        }
        if (b.rewardFunc() == null) {
            throw new IllegalArgumentException("reward_func must be provided (a RewardFunction)");
        }
        if (b.trainDataset() == null) {
            throw new IllegalArgumentException("train_dataset must be provided");
        }
        this.args = b.args;
        this.settings = b.settings();
        this.algorithmName = algorithmName;
        // the constructor's num_agents wins; without it the agents list's length, else the config's num_agents
        int count = b.numAgents() != null ? b.numAgents() : b.agents() != null ? b.agents().size() : args.numAgents();
        if (count < 1) {
            throw new IllegalArgumentException("num_agents must be >= 1, got " + count);
        }
        this.numAgents = count;
        if (args.numTurns() > 1 && b.externalTransition() == null) {
            throw new IllegalArgumentException("Multi-turn " + algorithmName + " requires an external_transition.");
        }
        if ((b.evalLogger() == null) != (b.evalAggregator() == null)) {
            throw new IllegalArgumentException("eval_logger and eval_aggregator must be given together");
        }
        this.formatters = Formatters.fromArgument(b.formatters(), count);
        List<Object> sources = AgentSources.resolve("agents", b.agentModel(), b.agents(), count, "num_agents");
        this.rewardFunc = b.rewardFunc();
        this.rewardProcessor = b.rewardProcessor() == null ? RewardProcessors.identity() : b.rewardProcessor();
        this.rewarder = new JointRewarder(rewardFunc, rewardProcessor, count, args.numGenerations(), algorithmName,
                args.skipNonfiniteSamples());
        this.trainDataset = b.trainDataset();
        this.evalDataset = b.evalDataset();
        this.externalTransition = b.externalTransition();
        this.transitions = new Transitions(externalTransition, count);
        this.evalLogger = b.evalLogger();
        this.evalAggregator = b.evalAggregator();
        this.outputDir = b.outputDir();
        this.verbose = b.verbose();
        this.promptEncoder = new PromptEncoder(b.chatTemplate(), b.systemPrompt());
        this.console = b.console();
        this.gradientObserver = b.gradientObserver;
        if (b.logHistoryLimit() < 0) {
            throw new IllegalArgumentException("log_history_limit must be >= 0, got " + b.logHistoryLimit());
        }
        this.seeds = new SeedStream(args.seed());
        // every check that can fail without a model has run; join the other processes (ddp), then load
        // (and free what was loaded on failure)
        b.requireTaskData();
        this.work = RankWork.forRun(args.parallelTraining(), args.ddpSplit(), count, b.distributed());
        List<Device> devices = AgentSet.placement(args.agentDevices(), count, "agent_devices", args.parallelTraining(),
                work.device());
        List<Device> refDevices = !args.referenceKlEnabled() || args.referenceDevices() == null || work.device() != null
                ? devices : Devices.resolve(args.referenceDevices(), count, "reference_devices");
        try {
            this.actors = AgentSet.load("agent", sources, b.dtype(), devices, b.loraAgents(), args.seed(), null,
                    work::ownsAgent);
        } catch (RuntimeException | Error e) {
            work.close();
            throw e;
        }
        this.agents = actors.models(); // in the agents split, null for the agents of other processes
        this.optimizers = new ArrayList<>();
        this.executor = AgentExecutor.create(count, AgentSet.runsInParallel(args.parallelTraining(), devices));
        MetricsLogger metrics = null;
        TrainerCheckpoint.ShapeGroup shapes = null;
        try {
            if (args.referenceKlEnabled()) {
                references = new ReferencePolicy(agents.stream().map(a -> a == null ? null : a.model()).toList(), refDevices);
            }
            for (int i = 0; i < count; i++) {
                generation.add(agents.get(i) == null ? null : resolveGeneration(i, agents.get(i)));
            }
            for (CausalLm a : agents) {
                optimizers.add(a == null ? null : work.adamW(a.model().parameters(), args.agentLearningRate(), 0.01));
            }
            actors.requireOutside(outputDir, "output_dir");
            List<Object> described = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                described.add(agents.get(i) != null ? agents.get(i) : sources.get(i));
            }
            metrics = b.metricsLogger(args.loggingSteps(), algorithmName, TrainerBuilder.trackedConfig(args.toMap(),
                    described), work.isMain());
            shapes = TrainerCheckpoint.ShapeGroup.of("model_shapes", "agent",
                    agents.stream().map(a -> a == null ? null : a.model()).toList(), work);
        } catch (RuntimeException | Error e) {
            closeModels();
            throw e;
        }
        this.logger = metrics;
        JointRewarder evalRewarder = b.evalRewardFunc() == null && b.evalRewardProcessor() == null ? rewarder
                : new JointRewarder(b.evalRewardFunc() == null ? rewardFunc : b.evalRewardFunc(),
                b.evalRewardProcessor() == null ? rewardProcessor : b.evalRewardProcessor(), count, args.numGenerations(), algorithmName, args.skipNonfiniteSamples());
        this.evaluator = new JointEvaluator(evalDataset, agents, generation, formatters, promptEncoder, evalRewarder, transitions,
                executor, seeds, evalLogger, evalAggregator, args.numTurns(), args.evalBatchSize(),
                args.externalPromptPassthrough()).in(work);
        this.rollout = JointRollout.of(agents, generation, formatters, promptEncoder, executor)
                .withTransitions(transitions, args.externalPromptPassthrough()).withReferences(references).in(work);
        this.checkpoint = new TrainerCheckpoint(algorithmName, count, args.numTrainEpochs(), args.saveTotalLimit(),
                List.of(shapes),
                checkpointParts(), TrainerCheckpoint.statefulParts("train_dataset", trainDataset, "eval_dataset", evalDataset,
                        "reward_func", rewardFunc, "reward_processor", rewardProcessor, "external_transition",
                        externalTransition, "eval_logger", evalLogger, "eval_aggregator", evalAggregator),
                seeds, logger).in(work).extendedBy(b.checkpointExtension());
        this.updateMetrics = new UpdateMetrics(args.referenceKlCoef(), args.referenceKlEnabled(), console, work.isMain());
        this.buffers = new AgentBuffers(count, args.rolloutBufferSize(), args.trainBatchSize(), seeds, executor, work,
                this::step, updateMetrics);
    }

    /**
     * Per agent: its weights ({@code agent_i/}) and AdamW state ({@code optimizer_i.safetensors});
     * in the agents split, of this process's agents.
     */
    private Map<String, TrainerCheckpoint.Part> checkpointParts() {
        Map<String, TrainerCheckpoint.Part> parts = new LinkedHashMap<>();
        for (int i = 0; i < numAgents; i++) {
            if (agents.get(i) == null) {
                continue;
            }
            parts.put("agent_" + i, TrainerCheckpoint.weights("agent_" + i, "agent " + i, agents.get(i)));
            parts.put("optimizer_" + i, TrainerCheckpoint.optimizer("optimizer_" + i + ".safetensors", optimizers.get(i)));
        }
        return parts;
    }

    /** Agent {@code i}'s rollout settings ({@link AgentGeneration}). */
    private GenerationSettings.Resolved resolveGeneration(int i, CausalLm agent) {
        return AgentGeneration.resolve(i, agent, args.generationKwargs(), args.temperature(), args.topP(), args.topK(),
                args.maxNewTokens(), args.numGenerations());
    }

    public static Builder builder() {
        return new Builder(b -> new MAGRPOTrainer(b, "MAGRPO"));
    }

    /**
     * The builder of {@code algorithm}'s trainer: {@link #builder()}, {@link MAREINFORCETrainer#builder()},
     * {@link MAReMaxTrainer#builder()} or {@link MARLOOTrainer#builder()}. The centralized variant needs an
     * adapter: use {@link CentralizedMAGRPOTrainer#builder()}.
     */
    public static Builder builderFor(ReinforceAlgorithm algorithm) {
        return switch (algorithm) {
            case MAGRPO -> builder();
            case MAREINFORCE -> MAREINFORCETrainer.builder();
            case MAREMAX -> MAReMaxTrainer.builder();
            case MARLOO -> MARLOOTrainer.builder();
            case CENTRALIZED_MAGRPO -> CentralizedMAGRPOTrainer.builder(); // tagged adapter unless replaced
        };
    }

    /**
     * For the variants' constructors: fails unless {@code b}'s args are of the variant's config type
     * (a null args fails later with the common message).
     */
    static Builder requireConfig(Builder b, Class<? extends MAGRPOConfig> type, ReinforceAlgorithm algorithm) {
        if (b.args != null && !type.isInstance(b.args)) {
            String name = algorithm.configTypeName();
            throw new IllegalArgumentException(algorithm.displayName() + "Trainer requires a " + name
                    + " (advantage_mode \"" + algorithm.defaultAdvantageMode() + "\" by default), got a "
                    + b.args.algorithm().configTypeName() + "; build one with " + name + ".builder() or "
                    + name + ".fromMap(...)");
        }
        return b;
    }

    // ------------------------------------------------------------------ public API

    public MAGRPOConfig args() {
        return args;
    }

    /** The builder's settings as this trainer received them (a centralized actor's, after the wrapper). */
    public TrainerSettings settings() {
        return settings;
    }

    /** The agents, in order; in the agents split of a ddp run, null for those another process holds. */
    public List<CausalLm> agents() {
        return Collections.unmodifiableList(agents);
    }

    public int numAgents() {
        return numAgents;
    }

    @Override
    public List<CausalLm> policies() {
        return agents();
    }

    @Override
    public Path saveCheckpoint(Path root) {
        return checkpoint.save(root, new TrainerCheckpoint.Progress(epochsDone, envStep));
    }

    @Override
    public long envStep() {
        return envStep;
    }

    public String algorithmName() {
        return algorithmName;
    }

    /**
     * Each agent's generate settings (rollouts and evaluation) with the source of every value: the
     * run config, the agent's generation_config.json (or config.json), or transformers' default.
     */
    @Override
    public List<GenerationSettings.Resolved> generationSettings() {
        return Collections.unmodifiableList(generation);
    }

    /**
     * The latest metric events logged (training and evaluation), oldest first, each with its
     * {@code env_step}: at most {@link Builder#logHistoryLimit(int)} of them, so memory stays flat on
     * long runs; {@code metrics.jsonl} has every event.
     */
    public List<Map<String, Double>> logHistory() {
        return logger.history();
    }

    /** {@link Builder#logHistoryLimit(int)}'s default. */
    public static final int DEFAULT_LOG_HISTORY = 1000;

    /**
     * Trains, optionally resuming from {@code resumeFromCheckpoint} (a {@code checkpoint-N}
     * directory, see {@link #resumeFrom(Path)}); {@code num_train_epochs} counts the whole run,
     * including completed epochs. Checkpoints beyond {@code save_total_limit} are deleted oldest first.
     */
    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        if (resumeFromCheckpoint != null) {
            resumeFrom(resumeFromCheckpoint);
        }
        trainUntil(args.numTrainEpochs(), checkpointDir, checkpointInterval);
    }

    /**
     * Trains epochs {@code done+1 .. epochs} (a trainer that runs this one in stages, such as an
     * iterative one, passes its own total), with checkpoints as {@link #train(Path, int, Path)}.
     */
    @Override
    public void trainUntil(int epochs, Path checkpointDir, int checkpointInterval) {
        java.util.function.IntConsumer epochDone = EpochLoop.checkpointing(done -> epochsDone = done, checkpointDir,
                checkpointInterval, epochs, checkpoint, () -> envStep);
        actors.requireOutside(checkpointDir, "checkpoint directory");
        EpochLoop.run(trainDataset, evalDataset != null, args.evalInterval(), epochsDone, epochs, console,
                logger, verbose && work.isMain(), EpochLoop.Body.of(this::evaluate, (item, label) -> {
                    itemLabel = label;
                    trainItem(item);
                }, this::flushAll, epochDone));
    }

    /** Updates every agent from what its buffer still holds (end of an epoch). */
    private void flushAll() {
        buffers.drainAll();
        updateMetrics.flush(logger);
    }

    /** Evaluates on the first {@code eval_num_samples} items of the evaluation set. */
    @Override
    public Map<String, Double> evaluate() {
        return evaluate(args.evalNumSamples());
    }

    /**
     * Evaluates on the first {@code numEvalSamples} evaluation items: one completion per agent per
     * turn, all turns run. Returns {@code eval/turn_t/reward_mean}, {@code eval/turn_t/expected_return}
     * and the custom metrics; {@code {}} without an evaluation set.
     */
    public Map<String, Double> evaluate(int numEvalSamples) {
        Map<String, Double> metrics = evaluator.evaluate(numEvalSamples);
        if (!metrics.isEmpty()) {
            logger.log(envStep, metrics);
        }
        return metrics;
    }

    /**
     * Writes {@code dir/agent_i/} for each agent: a Hugging Face model directory loadable as an agent,
     * each replaced atomically (a failure leaves the previous one whole). {@code dir} may not be, or
     * lie inside, a directory an agent was loaded from.
     */
    @Override
    public void saveModel(Path dir) {
        actors.requireOutside(dir, "the save directory");
        // ddp: rank 0 writes every agent (data split), or each process its own (agents split)
        boolean writes = work.isMain() || !work.splitsRows();
        for (int i = 0; i < numAgents; i++) {
            if (writes && agents.get(i) != null) {
                agents.get(i).save(dir.resolve("agent_" + i));
            }
        }
        work.barrier(); // every agent is saved when any process returns
        logger.summary(Map.of("final_model_saved", true)); // W&B's run summary, as the reference logs it
    }

    @Override
    public void close() {
        try {
            logger.close(); // throws when a sink could not write (after the models are freed below)
        } finally {
            closeModels();
        }
    }

    private void closeModels() {
        executor.close();
        optimizers.stream().filter(java.util.Objects::nonNull).forEach(AdamW::close);
        if (references != null) {
            references.close();
        }
        actors.close(); // the models loaded here; models passed in belong to the caller
        work.close();
    }

    // ------------------------------------------------------------------ rollout tree

    /** A node of the rollout tree: the turn sampled and scored ({@code [K]} joint rewards), its children ({@code [] or [K]}). */
    private record Node(JointRollout.Turn turn, double[] rewards, long envStep, List<Node> children) {
    }

    private void trainItem(TaskItem item) {
        Node root = buildNode(rollout.start(item, itemLabel));
        TreeReturns returns = TreeReturns.compute(toRolloutNode(root));
        List<NodeSample> samples = new ArrayList<>();
        collectSamples(root, returns, samples);
        samples.sort((a, b) -> Long.compare(a.envStep(), b.envStep()));
        buffers.add(samples);
        updateMetrics.flush(logger);
    }

    /**
     * Expands the node of {@code state} ({@link JointRollout#expand}: G completions per agent, the K
     * joint actions' rewards), then, below the last turn and unless the node's mean reward exceeds
     * {@code early_termination_threshold}, one child per joint action, depth first.
     */
    private Node buildNode(JointRollout.TurnState state) {
        JointMode mode = args.jointMode();
        int g = args.numGenerations();
        JointRollout.Scored<double[]> node = rollout.expand(state, seeds, g,
                JointRollout.Scoring.jointActions(rewarder, mode));
        envStep += node.rewards().length;
        long step = envStep;
        Double threshold = args.earlyTerminationThreshold();
        boolean terminated = threshold != null && Stats.mean(node.rewards()) > threshold;
        List<Node> children = new ArrayList<>();
        if (state.turn() < args.numTurns() - 1 && !terminated) {
            for (int j = 0; j < node.rewards().length; j++) {
                children.add(buildNode(rollout.next(node.turn(), mode.completionIndices(j, g, numAgents))));
            }
        }
        return new Node(node.turn(), node.rewards(), step, List.copyOf(children));
    }

    /**
     * Token ids of agent {@code agent}'s prompt ({@link PromptEncoder}).
     */
    long[] encodePrompt(int agent, String text) {
        return promptEncoder.encode(agents.get(agent), text);
    }

    /** {@link ReferencePolicy#kls(DecoderLm, DecoderLm, long[], List, long)}. */
    static double[] referenceKls(DecoderLm policy, DecoderLm reference, long[] promptIds, List<long[]> completions,
            long pad) {
        return ReferencePolicy.kls(policy, reference, promptIds, completions, pad);
    }

    private RolloutNode toRolloutNode(Node n) {
        List<RolloutNode> children = new ArrayList<>();
        for (Node c : n.children()) {
            children.add(toRolloutNode(c));
        }
        return RolloutNode.of(n.rewards(), children);
    }

    private void collectSamples(Node n, TreeReturns r, List<NodeSample> out) {
        double[][] perAgent = r.perAgentReturns(args.jointMode(), args.numGenerations(), numAgents);
        JointRollout.Turn turn = n.turn();
        for (int i = 0; i < numAgents; i++) {
            List<long[]> ys = turn.completions().get(i).stream().map(Completion::tokenIds).toList();
            out.add(new NodeSample(i, turn.state().turn(), turn.promptIds().get(i), ys, perAgent[i],
                    turn.referenceKls() == null ? null : turn.referenceKls()[i], Stats.mean(n.rewards()), r.meanReturn(),
                    n.envStep(), turn.state().label()));
        }
        for (int c = 0; c < n.children().size(); c++) {
            collectSamples(n.children().get(c), r.children().get(c), out);
        }
    }

    // ------------------------------------------------------------------ updates

    /**
     * One optimizer step on a minibatch of NodeSamples: ∇ L_B accumulated sample by sample
     * ({@link MAGRPOLoss}, formula there), then one AdamW step.
     *
     * <p>Nothing non-finite reaches the weights: a sample with a NaN/Inf return or loss, or a
     * minibatch whose accumulated gradient is not finite, stops training with an error before the
     * step; with {@code skip_nonfinite_samples} such samples (or that minibatch) are left out and counted.
     */
    private void step(int agent, List<NodeSample> minibatch, TurnStats stats) {
        DecoderLm model = agents.get(agent).model();
        AdamW opt = optimizers.get(agent);
        long pad = agents.get(agent).padId();
        List<NodeSample> kept = new ArrayList<>();
        for (NodeSample s : minibatch) {
            if (s.finite()) {
                kept.add(s);
            } else if (args.skipNonfiniteSamples()) {
                stats.skip();
            } else {
                throw nonFinite(new MAGRPOLoss.NonFiniteException("a return or reference KL is not finite", s).getMessage());
            }
        }
        double[] losses = null;
        while (losses == null && !kept.isEmpty()) {
            opt.zeroGrad();
            try {
                losses = MAGRPOLoss.accumulate(model, kept, args, pad, work);
            } catch (MAGRPOLoss.NonFiniteException e) {
                if (!args.skipNonfiniteSamples()) {
                    opt.zeroGrad();
                    throw nonFinite(e.getMessage());
                }
                kept.remove(e.sample()); // again without it (the weights depend on |B|)
                stats.skip();
            }
        }
        if (losses == null) {
            opt.zeroGrad();
            return;
        }
        if (work.splitsRows()) {
            work.sumGradients(model); // the whole minibatch's gradient on every process
        }
        if (!opt.gradientsFinite()) {
            opt.zeroGrad();
            if (!args.skipNonfiniteSamples()) {
                throw nonFinite("the gradient of agent " + agent + "'s loss is not finite for a minibatch of "
                        + kept.size() + " samples from " + kept.get(0).item() + " (losses " + java.util.Arrays.toString(losses)
                        + ")");
            }
            kept.forEach(s -> stats.skip());
            return;
        }
        if (gradientObserver != null) {
            gradientObserver.accept(agent, model);
        }
        work.step(opt); // (a ZeRO shard: its parameters' updates, sent to the other processes)
        opt.zeroGrad(); // free the gradients now: the next agent's step does not hold them too
        for (int j = 0; j < kept.size(); j++) {
            stats.add(kept.get(j), losses[j], args.referenceKlEnabled());
        }
    }

    private static IllegalStateException nonFinite(String detail) {
        return new IllegalStateException("Training stopped: " + detail + ". No optimizer step used it, so the weights "
                + "and the last checkpoint are intact; fix the reward or its processor, or set "
                + "skip_nonfinite_samples: true to leave such samples out of the update.");
    }

    // ------------------------------------------------------------------ checkpoints

    /**
     * Restores a {@code checkpoint-N} directory written by this trainer: weights, optimizer states,
     * progress, seeds, the log gate and stateful parts; cuts {@code metrics.jsonl} back to the events
     * logged before the checkpoint (a run stopped later logged more, which the resumed run repeats).
     * Called by {@link #train(Path, int, Path)}; call it first to evaluate the restored weights before
     * training on. Fails, before changing anything, on a checkpoint of another algorithm, agent count or
     * model shape.
     */
    @Override
    public void resumeFrom(Path checkpoint) {
        TrainerCheckpoint.Progress p = this.checkpoint.restore(checkpoint);
        epochsDone = p.epochsDone();
        envStep = p.envStep();
    }

    // ------------------------------------------------------------------ builder

    /**
     * Builds a trainer; the names follow the reference's constructor keywords. Extended only in this
     * package ({@link CentralizedMAGRPOTrainer.Builder}).
     */
    public static class Builder extends TrainerBuilder<Builder> {
        private final java.util.function.Function<Builder, ? extends MAGRPOTrainer> factory;
        MAGRPOConfig args;
        java.util.function.BiConsumer<Integer, DecoderLm> gradientObserver;

        Builder(java.util.function.Function<Builder, ? extends MAGRPOTrainer> factory) {
            this.factory = factory;
        }

        @Override
        protected Builder self() {
            return this;
        }

        /** Homogeneous agents: one model id or directory, loaded once per agent. */
        public Builder agentModel(String agentModel) {
            return set(TrainerSettings.AGENT_MODEL, agentModel);
        }

        public Builder numAgents(int numAgents) {
            return set(TrainerSettings.NUM_AGENTS, numAgents);
        }

        public Builder externalTransition(ExternalTransition externalTransition) {
            return set(TrainerSettings.EXTERNAL_TRANSITION, externalTransition);
        }

        public Builder evalLogger(EvalLogger evalLogger) {
            return set(TrainerSettings.EVAL_LOGGER, evalLogger);
        }

        public Builder evalAggregator(EvalAggregator evalAggregator) {
            return set(TrainerSettings.EVAL_AGGREGATOR, evalAggregator);
        }

        public Builder args(MAGRPOConfig args) {
            this.args = args;
            return this;
        }

        /** Sees each agent's accumulated gradients just before its optimizer step (for tests). */
        Builder gradientObserver(java.util.function.BiConsumer<Integer, DecoderLm> observer) {
            this.gradientObserver = observer;
            return this;
        }

        public MAGRPOTrainer build() {
            refuseCritics();
            return factory.apply(this);
        }

        /** The MAGRPO family trains no critic and uses its agents' own tokenizers. */
        void refuseCritics() {
            settings().refuse("The MAGRPO family", "it trains no critic and uses each agent's own tokenizer",
                    TrainerSettings.CRITIC_MODEL, TrainerSettings.CRITICS, TrainerSettings.CRITIC_LORA,
                    TrainerSettings.TOKENIZERS);
        }
    }
}
