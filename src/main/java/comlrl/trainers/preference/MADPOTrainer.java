package comlrl.trainers.preference;

import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.data.TaskSet;
import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.reward.RewardFunction;
import comlrl.rl.PairSelection;
import comlrl.tensor.AdamW;
import comlrl.trainers.AgentSources;
import comlrl.trainers.common.EpochProgress;
import comlrl.distributed.HeldAgents;
import comlrl.trainers.common.JointEvaluator;
import comlrl.reward.JointRewarder;
import comlrl.trainers.common.JointRollout;
import comlrl.logging.MetricsLogger;
import comlrl.generation.PromptEncoder;
import comlrl.distributed.RankWork;
import comlrl.generation.SeedStream;
import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.trainers.common.TrainerParts;
import comlrl.trainers.common.TrainerSettings;
import comlrl.utils.Formatters;
import comlrl.utils.RewardProcessor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Random;

/**
 * Multi-agent DPO (reference §7.2): an offline preference set built once from the initial policy,
 * then epochs of per-agent DPO updates on it.
 * <ol>
 *   <li>Per training item every agent samples {@code preference_num_candidates} completions; candidate
 *       k is the aligned joint response (c_0^k, …, c_{N−1}^k), scored by the task reward.</li>
 *   <li>Pairs (w, l) with r_w &gt; r_l are chosen by {@code pair_selection} ({@link PairSelection#pairs}).</li>
 *   <li>Per batch of {@code train_batch_size} pairs, each agent i steps on
 *       {@code L_i = mean −log σ(β·(Δ_i + Σ_{j≠i} sg(Δ_j)))} with
 *       {@code Δ_j = log π_j(w_j|x_j) − log π_j(l_j|x_j)} ({@link MADPOLoss}, {@link MADPOStep}); with
 *       {@code dpo_reference: frozen_initial} each Δ is relative to the initial policy.</li>
 * </ol>
 * The epochs run in {@link EpochProgress} over one epoch's batches ({@link Batches}). Evaluation runs
 * before every {@code eval_interval}-th update ({@code updates_seen}, counted across epochs);
 * {@code env_step} advances by {@code environment_steps_per_pair} per pair when {@code use_environment_step}.
 */
public final class MADPOTrainer extends PreferenceTrainer<MADPOConfig> {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MADPO";

    /** The agents, their optimizers and reference, executor and logger, freed together. */
    private final TrainerParts parts;
    /** The agents this process holds (every agent, except in the agents split of a ddp run). */
    private final HeldAgents<CausalLm> agents;
    private final Dataset evalDataset;
    private final SeedStream seeds;
    private final MetricsLogger logger;
    private final JointEvaluator evaluator;
    /** Epochs done and {@code env_step} (checkpointed), and the loop over {@link Batches}. */
    private final EpochProgress progress;
    private final MADPOStep step;

    private final PreferenceCollector collector;
    private long updatesSeen;
    /** While {@link #trainOn} runs an iteration's epochs: the iterations done before it; else -1. */
    private int iterationsBefore = -1;

    private MADPOTrainer(Builder b) {
        super(b, "MADPOConfig");
        b.requireRewardAndTrainData();
        boolean centralized = args.collaborationMode() == comlrl.utils.CollaborationMode.CENTRALIZED;
        // centralized: the builder hands over the one actor's settings (Centralization, reference §7.5)
        int count = b.resolvedNumAgents(args.numAgents());
        List<Object> sources = AgentSources.resolve("agents", settings.get(TrainerSettings.AGENT_MODEL),
                settings.get(TrainerSettings.AGENTS), count,
                centralized ? "1 actor (collaboration_mode: centralized)" : "num_agents");
        Formatters formatters = Formatters.fromArgument(settings.get(TrainerSettings.FORMATTERS), count);
        RewardFunction rewardFunc = settings.get(TrainerSettings.REWARD_FUNC);
        RewardProcessor rewardProcessor = settings.rewardProcessor();
        JointRewarder rewarder = new JointRewarder(rewardFunc, rewardProcessor, count, args.preferenceNumCandidates(),
                ALGORITHM_NAME, args.skipNonfiniteSamples());
        this.evalDataset = settings.get(TrainerSettings.EVAL_DATASET);
        PromptEncoder promptEncoder = settings.promptEncoder();
        boolean verbose = settings.get(TrainerSettings.VERBOSE);
        this.seeds = new SeedStream(args.seed());
        this.parts = TrainerParts.join(settings, args, sources, args.preferenceNumCandidates(), (w, devices) ->
                args.dpoReference() == DpoReference.FROZEN_INITIAL ? devices : null);
        RankWork work = parts.work;
        this.agents = parts.agents;
        try {
            HeldAgents<AdamW> optimizers = parts.adamW(args.agentLearningRate());
            this.logger = parts.openLogger(b.stageLogger != null ? b.stageLogger.apply(work.isMain())
                    : settings.metricsLogger(args.loggingSteps(), ALGORITHM_NAME, parts.trackedConfig(args.toMap()),
                            work.isMain()));
            this.step = new MADPOStep(args, agents, optimizers, parts.executor, work, parts.references != null,
                    b.observer);
            this.collector = new PreferenceCollector(args, agents, parts.generation, formatters, promptEncoder, rewarder,
                    parts.executor, seeds, parts.references, work); // references: frozen_initial only
            if (verbose && work.isMain()) {
                collector.showProgress(console);
            }
            this.evaluator = new JointEvaluator(settings, JointRollout.of(agents.asList(), parts.generation.asList(),
                    formatters, promptEncoder, parts.executor, work), JointEvaluator.team(rewarder), seeds, 1,
                    args.evalBatchSize()).generations(args.get(comlrl.utils.TrainerFields.EVAL_NUM_GENERATIONS));
            // per agent this process holds, its weights (agent_i/) and AdamW (optimizer_i.safetensors)
            Map<String, TrainerCheckpoint.Part> saved = new java.util.LinkedHashMap<>();
            for (int i : agents.indices()) {
                saved.putAll(TrainerCheckpoint.agentParts(i, agents.get(i), optimizers.get(i)));
            }
            // the same on every process: rank 0 writes them, every process restores them
            saved.put("preference_pairs", TrainerCheckpoint.writtenByMain(PreferenceCollector.checkpointPart(() -> collector), work));
            TrainerCheckpoint checkpoint = new TrainerCheckpoint(ALGORITHM_NAME, count, args.numTrainEpochs(), args.saveTotalLimit(),
                    List.of(TrainerCheckpoint.ShapeGroup.of("model_shapes", "agent", agents.map(CausalLm::model))), saved,
                    TrainerCheckpoint.statefulParts("madpo_progress", Counters.of("updates_seen", () -> updatesSeen,
                            seen -> updatesSeen = seen), "train_dataset", trainDataset, "eval_dataset", evalDataset,
                            "reward_func", rewardFunc, "reward_processor", rewardProcessor), seeds, logger, work)
                    .extendedBy(settings.get(TrainerSettings.CHECKPOINT_EXTENSION));
            // evaluation is scheduled by updates seen ({@link #trainBatch}), not by the loop's items
            this.progress = new EpochProgress(new EpochProgress.Loop(new Batches(), false, 0, console, logger,
                    verbose && work.isMain()), checkpoint, parts.actors, () -> { }, this::trainBatch, () -> { });
        } catch (RuntimeException | Error e) {
            parts.closeAfter(e);
            throw e;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Each agent; in a ddp run with the agents split, null for the agents other processes hold. */
    public List<CausalLm> agents() {
        return agents.asList();
    }

    @Override
    public long envStep() {
        return progress.envStep();
    }

    @Override
    public List<CausalLm> policies() {
        return agents();
    }

    @Override
    public Path saveCheckpoint(Path root) {
        return progress.save(root);
    }

    /** DPO batches trained on so far (the evaluation schedule's counter). */
    public long updatesSeen() {
        return updatesSeen;
    }

    /** Candidates left out of the preference set because their reward was not finite. */
    public long skippedCandidates() {
        return collector.skippedCandidates();
    }

    /** The preference pairs (empty before {@link #train()} builds them). */
    public int numPairs() {
        return collector.numPairs();
    }

    @Override
    public List<GenerationSettings.Resolved> generationSettings() {
        return parts.generation.asList();
    }

    // ------------------------------------------------------------------ training

    /** Resumes when asked, then the epochs left (the preference set is built when first batched). */
    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        if (resumeFromCheckpoint != null) {
            resumeFrom(resumeFromCheckpoint);
        }
        logger.timeRun(() -> progress.trainUntil(args.numTrainEpochs(), checkpointDir, checkpointInterval));
    }

    /** One epoch's items: the preference set shuffled (a seed drawn per pass), in batches of {@code train_batch_size}. */
    private final class Batches implements TaskSet {
        @Override
        public OptionalInt knownSize() {
            int size = args.trainBatchSize();
            return OptionalInt.of((collector.preferenceSet(trainDataset).size() + size - 1) / size);
        }

        @Override
        public Iterator<TaskItem> iterator() {
            List<PreferencePair> order = new ArrayList<>(collector.preferenceSet(trainDataset));
            Collections.shuffle(order, new Random(seeds.next()));
            int size = args.trainBatchSize();
            return java.util.stream.IntStream.iterate(0, i -> i < order.size(), i -> i + size).mapToObj(i -> TaskItem.of(
                    Map.of("pairs", order.subList(i, Math.min(order.size(), i + size))))).iterator();
        }
    }

    /** MADPOIter: {@code num_train_epochs} epochs on {@code set}, then checkpoints count {@code iterations}. */
    void trainOn(List<PreferencePair> set, int iterations) {
        iterationsBefore = progress.epochsDone();
        if (!set.isEmpty()) {
            collector.keep(set);
            progress.epochsDone(0); // the loop counts this iteration's epochs
            progress.trainUntil(args.numTrainEpochs(), null, 1);
        }
        progress.epochsDone(iterations);
        iterationsBefore = -1;
    }

    /** The completed count (epochs, or MADPOIter's iterations) of the last checkpoint restored or {@link #trainOn}. */
    int progress() {
        return iterationsBefore >= 0 ? iterationsBefore : progress.epochsDone();
    }

    @Override
    MetricsLogger logger() {
        return logger;
    }

    /** Sets what sees each DPO batch before its updates (tests); null for nothing. */
    void observeBatches(java.util.function.Consumer<List<PreferencePair>> observer) {
        step.observeBatches(observer);
    }

    @Override
    PreferenceCollector collector() {
        return collector;
    }

    /** One DPO batch, after the evaluation when {@code updates_seen % eval_interval == 0}. */
    private void trainBatch(TaskItem item, String label) {
        if (evalDataset != null && args.evalInterval() > 0 && updatesSeen % args.evalInterval() == 0) {
            evaluate();
        }
        @SuppressWarnings("unchecked")
        List<PreferencePair> batch = (List<PreferencePair>) item.get("pairs");
        Map<String, Double> metrics = step.train(batch);
        updatesSeen++;
        if (args.useEnvironmentStep()) {
            progress.advance((long) args.environmentStepsPerPair() * batch.size());
        }
        logger.logTrain(progress.envStep(), metrics);
    }

    // ------------------------------------------------------------------ evaluation, saving

    @Override
    public Map<String, Double> evaluate() {
        return evaluate(args.evalNumSamples());
    }

    /** MAGRPO's evaluation ({@link JointEvaluator}) on the first {@code numEvalSamples} items. */
    public Map<String, Double> evaluate(int numEvalSamples) {
        return evaluator.evaluate(numEvalSamples, logger, progress.envStep());
    }

    /** Restores a checkpoint (outputs move as {@link PreferenceTrainer} says). */
    @Override
    public void resumeFrom(Path checkpointPath) {
        relocateOutput(checkpointPath);
        progress.resume(checkpointPath);
    }

    /** Writes {@code dir/agent_i/}, Hugging Face model directories. */
    @Override
    public void saveModel(Path dir) {
        parts.actors.saveAgents(agents, parts.work, dir);
        logger.summary(Map.of("final_model_saved", true)); // W&B's run summary, as the reference logs it
    }

    @Override
    public void close() {
        parts.close(); // the logger, then the optimizers, reference and agents (TrainerParts#close)
    }

    // ------------------------------------------------------------------ builder

    /** Builds a {@link MADPOTrainer}; names follow the reference's constructor keywords. */
    public static final class Builder extends PreferenceBuilder<MADPOConfig, Builder> {
        java.util.function.BiConsumer<Integer, List<comlrl.tensor.Tensor>> observer;
        /** As the iterative trainer's stage: its logger (given whether this process is rank 0); else null. */
        java.util.function.Function<Boolean, MetricsLogger> stageLogger;

        private Builder() {
        }

        Builder observer(java.util.function.BiConsumer<Integer, List<comlrl.tensor.Tensor>> observer) {
            this.observer = observer;
            return this;
        }

        public MADPOTrainer build() {
            settings().refuse(ALGORITHM_NAME, "it evaluates with reward_func and its processor, trains no critic and "
                    + "is single-turn", TrainerSettings.EVAL_REWARD_FUNC, TrainerSettings.EVAL_REWARD_PROCESSOR,
                    TrainerSettings.EXTERNAL_TRANSITION, TrainerSettings.CRITIC_MODEL, TrainerSettings.CRITICS,
                    TrainerSettings.CRITIC_LORA, TrainerSettings.TOKENIZERS,
                    comlrl.trainers.actorcritic.ActorCriticTrainerBase.Builder.METRICS_CALLBACK);
            return build((centralization, actor) -> actor, () -> new MADPOTrainer(this));
        }
    }
}
