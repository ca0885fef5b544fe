package comlrl.trainers.preference;

import comlrl.trainers.common.TrainerSettings;
import comlrl.data.Stateful;
import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.logging.ConsoleProgress;
import comlrl.data.TaskItem;
import comlrl.reward.JointRewardModel;
import comlrl.reward.RewardFunction;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.trainers.actorcritic.ActorCriticTrainerBase;
import comlrl.distributed.AgentExecutor;
import comlrl.trainers.common.AgentGeneration;
import comlrl.trainers.common.AgentSet;
import comlrl.distributed.HeldAgents;
import comlrl.reward.JointRewarder;
import comlrl.logging.MetricsLogger;
import comlrl.generation.PromptEncoder;
import comlrl.distributed.RankWork;
import comlrl.generation.SeedStream;
import comlrl.trainers.common.Trainer;
import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.trainers.common.TrainerParts;
import comlrl.utils.CollaborationMode;
import comlrl.utils.Formatters;
import comlrl.utils.RewardProcessor;
import comlrl.utils.RewardProcessors;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * Multi-agent RLHF (reference §7.3): learn a joint reward model from preferences labelled by the
 * task reward, then train the agents against it with an RL backend.
 * <ol>
 *   <li><b>Preferences</b>: MADPO's offline preference set from the initial policy, labelled by the
 *       task reward and its processor.</li>
 *   <li><b>Reward model</b>: a {@link JointRewardModel} (backbone {@code reward_model_name}, or the
 *       first actor's model) trained with the Bradley–Terry loss {@code −mean log σ(s(w) − s(l))} for
 *       {@code reward_num_train_epochs}; saved to {@code <output_dir>/reward_model/}.</li>
 *   <li><b>Policy learning</b>: the {@code rl_algorithm} trainer ({@link MARLHFBackend}) with the
 *       reward model's score {@code r_k = s(jointText(formatter_i(item), c_i^k))} as the reward
 *       (unprocessed); evaluation always uses the task reward (processed).</li>
 * </ol>
 * Checkpoints are the RL trainer's plus the preference set, the reward model and its AdamW, and the
 * stage reached; {@code checkpoint-0} is written after the preference set and again after the
 * reward model, then one per RL epoch. With {@code collaboration_mode: centralized} one actor
 * answers the adapter's joint prompt (§7.5) in every stage; the task reward scores the roles' parts.
 *
 * <p>Where we differ from the reference: a {@code reward_model_device} naming a CUDA device that
 * this machine lacks fails before any model loads; in a ddp run a CUDA {@code reward_model_device}
 * means each process's own GPU.
 */
public final class MARLHFTrainer extends StagedTrainer<MARLHFConfig> {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MARLHF";
    /** Where the learned reward model goes in the output directory, the saved models and checkpoints. */
    public static final String REWARD_MODEL_DIR = "reward_model";

    /** How far the preference-learning stages got (saved in checkpoints). */
    enum Stage {
        START, PREFERENCES, REWARD_MODEL
    }

    private final Trainer rl;
    private JointRewardModel rewardModel;
    /** A fresh reward model: the backbone from its source, a new head drawn from the seed given. */
    private final java.util.function.LongFunction<JointRewardModel> freshRewardModel;
    private final TrainerCheckpoint.Extension outerExtension;
    private final PreferenceCollector learnedCollector;
    private final MetricsLogger logger;
    private final SeedStream seeds;
    private final AgentExecutor executor;
    private final PreferenceCollector collector;
    /** Where the preference and reward-model stages show their progress, or null. */
    private final PrintStream progress;
    private Stage stage = Stage.START;
    /** A ddp run's processes: every one trains the same reward model on the same pairs; rank 0 writes it. */
    private final RankWork work;

    private MARLHFTrainer(Builder b) {
        super(b, "MARLHFConfig");
        b.requireRewardAndTrainData(); // the task reward labels the preference pairs and scores evaluation
        boolean centralized = args.collaborationMode() == CollaborationMode.CENTRALIZED;
        // centralized: one actor answers the adapter's joint prompt for every role (reference §7.5)
        int numAgents = centralized ? 1 : b.resolvedNumAgents(args.numAgents());
        String rewardSource = rewardModelSource(args, b.agentSource(), settings.get(TrainerSettings.AGENTS));
        comlrl.tensor.DType dtype = settings.get(TrainerSettings.DTYPE);
        this.outerExtension = settings.get(TrainerSettings.CHECKPOINT_EXTENSION);
        Device requested = args.rewardModelDevice() == null ? null : Device.parse(args.rewardModelDevice());
        if (requested != null && requested.isCuda() && requested.index() >= Engine.cudaDeviceCount()) {
            throw new IllegalArgumentException("reward_model_device is \"" + args.rewardModelDevice() + "\" (default "
                    + "\"cuda:0\") but this machine has " + Engine.cudaDeviceCount() + " CUDA device(s); set "
                    + "reward_model_device: cpu, or null for the agents' device");
        }
        this.seeds = new SeedStream(args.seed() ^ 0x5DEECE66DL);
        RewardProcessor processor = settings.rewardProcessor();
        Formatters formatters = Formatters.fromArgument(settings.get(TrainerSettings.FORMATTERS), numAgents);
        RewardFunction taskReward = settings.get(TrainerSettings.REWARD_FUNC);
        RewardFunction evalReward = java.util.Objects.requireNonNullElse(settings.get(TrainerSettings.EVAL_REWARD_FUNC),
                taskReward);
        RewardProcessor evalProcessor = java.util.Objects.requireNonNullElse(
                settings.get(TrainerSettings.EVAL_REWARD_PROCESSOR), processor);
        RewardFunction learned = (completions, items) -> scoreAligned(rewardModel, formatters, completions, items);
        settings.requireTaskData();
        this.work = RankWork.forRun(args.parallelTraining(), args.ddpSplit(), numAgents,
                settings.get(TrainerSettings.DISTRIBUTED));
        this.logger = b.stageLogger(b.runName, work.isMain());
        logger.labelReward("reward (learned)"); // the RL stage's training reward is the reward model's score
        this.progress = settings.get(TrainerSettings.VERBOSE) && work.isMain() ? console : null;
        Trainer inner = null;
        AgentExecutor exec = null;
        try {
            inner = MARLHFBackend.build(args, b, numAgents, work, logger,
                    new MARLHFBackend.Rewards(learned, evalReward, evalProcessor, formatters), checkpointExtension());
            HeldAgents<CausalLm> policies = HeldAgents.of(inner.policies(), work); // the agents split: this process's
            Device rd = requested != null ? requested : policies.values().stream().findFirst()
                    .map(p -> p.model().device()).orElse(Device.CPU);
            // a ddp process keeps its reward model on its own GPU (the default cuda:0 would put every one on GPU 0)
            Device rewardDevice = work.device() != null && rd.isCuda() ? work.device() : rd;
            this.freshRewardModel = seed -> JointRewardModel.fromCausalLm(rewardSource, dtype, rewardDevice, seed,
                    args.rewardFreezeBackbone(), args.rewardMaxLength(), args.rewardLearningRate());
            this.rewardModel = freshRewardModel.apply(args.seed());
            HeldAgents<GenerationSettings.Resolved> generation = policies.mapIndexed((i, p) -> AgentGeneration.resolve(i,
                    p, args, args.preferenceNumCandidates()));
            exec = AgentExecutor.create(numAgents, AgentSet.runsInParallel(args.parallelTraining(),
                    policies.values().stream().map(p -> p.model().device()).toList()));
            PromptEncoder encoder = settings.promptEncoder();
            // the same collection labelled by the task reward (processed), or by the reward model (raw)
            this.collector = new PreferenceCollector(args, policies, generation, formatters, encoder, new JointRewarder(
                    taskReward, processor, numAgents, args.preferenceNumCandidates(), ALGORITHM_NAME,
                    args.skipNonfiniteSamples()), exec, seeds, null, work);
            this.learnedCollector = new PreferenceCollector(args, policies, generation, formatters, encoder,
                    new JointRewarder(learned, RewardProcessors.identity(), numAgents, args.preferenceNumCandidates(),
                            ALGORITHM_NAME, args.skipNonfiniteSamples()), exec, seeds, null, work);
            if (progress != null) {
                collector.showProgress(progress);
                learnedCollector.showProgress(progress);
            }
        } catch (RuntimeException | Error e) {
            TrainerParts.free(e, exec, rewardModel, inner, logger, work); // as close() frees them
            throw e;
        }
        this.rl = inner;
        this.executor = exec;
    }

    /** MARLHFIter: a fresh reward model in place of this one (reference §7.4 step 4). */
    void reloadRewardModel() {
        JointRewardModel fresh = freshRewardModel.apply(seeds.next());
        rewardModel.close();
        rewardModel = fresh;
    }

    /** The preference-set builder labelled by the task reward. */
    @Override
    PreferenceCollector collector() {
        return collector;
    }

    /** The same labelled by the current reward model (MARLHFIter's preference_scoring_reward: reward_model). */
    PreferenceCollector learnedCollector() {
        return learnedCollector;
    }

    @Override
    MetricsLogger logger() {
        return logger;
    }

    /** {@code reward_model_name}, else the first actor's model id or directory. */
    private static String rewardModelSource(MARLHFConfig args, String agentModel, List<?> agents) {
        if (args.rewardModelName() != null) {
            return args.rewardModelName();
        }
        String first = MARLHFBackend.firstActorSource(agentModel, agents);
        if (first == null) {
            throw new IllegalArgumentException("reward_model_name must be provided when agent models are objects.");
        }
        return first;
    }

    /** The preference set, the reward model with its optimizer, and the stage, in every checkpoint. */
    private TrainerCheckpoint.Extension checkpointExtension() {
        Map<String, TrainerCheckpoint.Part> parts = new LinkedHashMap<>();
        parts.put("preference_pairs", PreferenceCollector.checkpointPart(() -> collector));
        // the reward model (MARLHFIter replaces it): its weights as reward_model/, its AdamW as reward_optimizer
        parts.put(REWARD_MODEL_DIR, TrainerCheckpoint.Part.of(dir -> rewardModel.save(dir.resolve(REWARD_MODEL_DIR)),
                dir -> {
                    Path d = dir.resolve(REWARD_MODEL_DIR);
                    if (!Files.isDirectory(d)) {
                        throw new IllegalArgumentException(dir + " has no " + REWARD_MODEL_DIR + "/ directory (the "
                                + "reward model of a MARLHF run)");
                    }
                    rewardModel.loadWeights(d);
                }));
        Supplier<TrainerCheckpoint.Part> optimizer = () -> TrainerCheckpoint.optimizer("reward_optimizer.safetensors",
                rewardModel.optimizer());
        parts.put("reward_optimizer", TrainerCheckpoint.Part.of(dir -> optimizer.get().save(dir),
                dir -> optimizer.get().restore(dir)));
        Stateful progress = new Stateful() {
            @Override
            public Map<String, Object> stateDict() {
                return Map.of("stage", stage.name().toLowerCase(Locale.ROOT), "seed_position", seeds.position());
            }

            @Override
            public void loadStateDict(Map<String, ?> state) {
                stage = Stage.valueOf(String.valueOf(state.get("stage")).toUpperCase(Locale.ROOT));
                seeds.restore(((Number) state.get("seed_position")).longValue());
            }
        };
        // the same on every process: rank 0 writes them, every process restores them
        parts.replaceAll((name, part) -> TrainerCheckpoint.writtenByMain(part, work));
        // MARLHFIter runs this trainer per iteration: its state joins ours, under its algorithm name
        TrainerCheckpoint.Extension outer = outerExtension != null ? outerExtension
                : new TrainerCheckpoint.Extension(ALGORITHM_NAME, Map.of(), Map.of());
        parts.putAll(outer.parts());
        Map<String, Stateful> states = new LinkedHashMap<>(outer.states());
        states.put("marlhf_progress", progress);
        return new TrainerCheckpoint.Extension(outer.algorithm(), parts, states);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The policy-learning trainer ({@code rl_algorithm}). */
    public Trainer rlTrainer() {
        return rl;
    }

    /** The joint reward model (trained once {@link #train()} has passed the reward stage). */
    public JointRewardModel rewardModel() {
        return rewardModel;
    }

    /** The preference pairs (0 before {@link #train()} builds them). */
    public int numPairs() {
        return collector.numPairs();
    }

    // ------------------------------------------------------------------ training

    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        if (checkpointInterval < 1) {
            throw new IllegalArgumentException("checkpoint_interval must be >= 1, got " + checkpointInterval);
        }
        if (resumeFromCheckpoint != null) {
            resumeFrom(resumeFromCheckpoint);
        }
        logger.timeRun(() -> trainStages(checkpointDir, checkpointInterval));
    }

    /** The stages still to do: preferences, the reward model, the RL epochs (a checkpoint after each). */
    private void trainStages(Path checkpointDir, int checkpointInterval) {
        if (stage == Stage.START) {
            List<PreferencePair> pairs = collector.preferenceSet(trainDataset);
            stage = Stage.PREFERENCES;
            logger.log(envStep(), Map.of("preference/num_pairs", (double) pairs.size(),
                    "preference/candidate_reward_mean", pairs.stream()
                            .mapToDouble(PreferencePair::candidateRewardMean).average().orElse(0)));
            if (checkpointDir != null) {
                rl.saveCheckpoint(checkpointDir);
            }
        }
        if (stage == Stage.PREFERENCES) {
            trainRewardModel(collector.pairs());
            stage = Stage.REWARD_MODEL;
            if (checkpointDir != null) {
                rl.saveCheckpoint(checkpointDir);
            }
        }
        rl.train(checkpointDir, checkpointInterval, null);
    }

    /**
     * The Bradley–Terry stage on {@code set}'s joint texts, then the model saved in the output directory;
     * logs {@code reward_model/loss} (the last epoch's mean) and {@code reward_model/accuracy} on the set.
     */
    void trainRewardModel(List<PreferencePair> set) {
        List<String> winners = set.stream().map(PreferencePair::winnerJointText).toList();
        List<String> losers = set.stream().map(PreferencePair::loserJointText).toList();
        ConsoleProgress bar = progress == null ? null
                : new ConsoleProgress(progress, (long) args.rewardNumTrainEpochs() * set.size(), "reward model", null);
        double[] losses = rewardModel.train(winners, losers, args.rewardNumTrainEpochs(), args.rewardTrainBatchSize(),
                seeds.next(), pairs -> {
                    if (bar != null) {
                        bar.advance(pairs);
                    }
                });
        double accuracy = rewardModel.accuracy(winners, losers, args.rewardTrainBatchSize());
        Map<String, Double> metrics = new LinkedHashMap<>();
        metrics.put("reward_model/loss", losses[losses.length - 1]);
        metrics.put("reward_model/accuracy", accuracy);
        logger.log(envStep(), metrics);
        if (work.isMain()) {
            console.printf(Locale.ROOT, "Reward model: %d pairs, %d epoch(s), loss %.4f, pair accuracy %.3f%n",
                    set.size(), losses.length, losses[losses.length - 1], accuracy);
        }
        if (outputDir() != null && work.isMain()) {
            rewardModel.save(outputDir().resolve(REWARD_MODEL_DIR));
        }
    }

    // ------------------------------------------------------------------ evaluation, saving

    /** Writes the agents as the backend saves them, and {@code dir/reward_model/}. */
    @Override
    public void saveModel(Path dir) {
        rl.saveModel(dir);
        if (work.isMain()) {
            rewardModel.save(dir.resolve(REWARD_MODEL_DIR));
        }
        work.barrier();
    }

    @Override
    Trainer stage() {
        return rl;
    }

    @Override
    public void close() {
        TrainerParts.free(null, executor, rewardModel, rl, logger, work); // the logger throws when a sink could not write
    }

    // ------------------------------------------------------------------ builder

    /** Builds a {@link MARLHFTrainer}; names follow the reference's constructor keywords. */
    public static final class Builder extends PreferenceBuilder.Rlhf<MARLHFConfig, Builder> {
        /** The algorithm the run is recorded and logged as (MARLHFIter when it is that trainer's stage). */
        String runName = ALGORITHM_NAME;

        private Builder() {
        }

        /** Builds the trainer; centralized, it sees the one actor's settings and a metrics callback per role. */
        public MARLHFTrainer build() {
            return build((centralization, actor) -> {
                ActorCriticTrainerBase.MetricsCallback callback = actor.get(ActorCriticTrainerBase.Builder.METRICS_CALLBACK);
                return callback == null ? actor : actor.with(ActorCriticTrainerBase.Builder.METRICS_CALLBACK,
                        MARLHFBackend.perRole(callback, centralization));
            }, () -> new MARLHFTrainer(this));
        }
    }

    /** The learned reward of K aligned joint responses of one item: the reward model's score of {@link #jointTexts}. */
    private static List<Double> scoreAligned(JointRewardModel model, Formatters formatters, List<List<String>> completions,
            List<TaskItem> items) {
        if (items.size() != 1) {
            throw new IllegalArgumentException("the learned reward scores one task item at a time, got " + items.size());
        }
        List<String> texts = jointTexts(formatters, completions, items.get(0));
        return Arrays.stream(model.score(texts, texts.size())).boxed().toList();
    }

    /** The joint text of each aligned joint response k: {@code jointText([formatter_i(item)]_i, [c_i^k]_i)}. */
    static List<String> jointTexts(Formatters formatters, List<List<String>> completions, TaskItem item) {
        List<String> prompts = IntStream.range(0, completions.size()).mapToObj(i -> formatters.format(i, item))
                .toList();
        return IntStream.range(0, completions.get(0).size())
                .mapToObj(k -> JointRewardModel.jointText(prompts, completions.stream().map(c -> c.get(k)).toList())).toList();
    }
}
