package comlrl.trainers.preference;

import comlrl.data.Stateful;
import comlrl.logging.ConsoleProgress;
import comlrl.logging.MetricsLogger;
import comlrl.model.io.ModelDirs;
import comlrl.distributed.RankWork;
import comlrl.generation.SeedStream;
import comlrl.report.RewardDistribution;
import comlrl.rl.PairSelection;
import comlrl.rl.ReplaySampling;
import comlrl.trainers.common.Trainer;
import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.trainers.common.TrainerParts;
import comlrl.reward.RewardFunction;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.reinforce.Centralization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.function.IntSupplier;

/**
 * The iterative trainers (reference §7.4: MADPOIter, MARLHFIter): {@code num_iterations} rounds
 * (numbered from 1) of
 * <ol>
 *   <li>per item {@code preference_num_candidates} candidates of the agents and
 *       {@code comparator_num_candidates} of the comparator ({@link IterationComparators}), scored;
 *       candidate k of each side forms pair k ({@link PairSelection#aligned});</li>
 *   <li>the pairs are written as replay shard {@code iteration_NNNN.json} (text only);</li>
 *   <li>training pairs are sampled from the shards ({@code preference_replay_mode}, {@link PreferenceReplay})
 *       and re-tokenised;</li>
 *   <li>the stage trains on them ({@link #runIteration});</li>
 *   <li>the {@code iter/*} metrics (and reward histograms) are logged; with {@code policy_checkpoint_dir}
 *       or the history comparator the agents are saved as {@code initial/agent_i} (before iteration 1)
 *       and {@code iteration_NNNN/agent_i}.</li>
 * </ol>
 * Checkpoints hold the stage's state, the shards written so far, the comparator's and replay's seed
 * streams and the policy snapshots the history comparator will still read; a resumed run rewrites
 * the replay directory from them, repeating exactly what an uninterrupted run does.
 *
 * @param <C> the trainer's config
 * @param <S> the stage trainer
 */
abstract class IterativeTrainer<C extends IterativePreferenceConfig, S extends PreferenceTrainer<?>> extends StagedTrainer<C> {
    /** The trainer each iteration trains with (its agents, steps, evaluation and checkpoints are this one's). */
    final S stage;
    private Path replayDir;
    private final boolean replayInOutput;
    private final Path policyDir;
    private final SeedStream comparatorSeeds;
    private final SeedStream replaySeeds;
    private final IterationComparators comparators;
    private final double[] rewardRange;
    /** Temporary replay or policy directories (no output directory), deleted by close. */
    private final List<Path> scratch = new ArrayList<>();
    /** A ddp run's processes: rank 0 writes the shards and histograms and prints; every process keeps the shards. */
    private final RankWork work;
    /** This run's shards by iteration (as written, or restored): what replay draws from. */
    private final java.util.TreeMap<Integer, List<PreferenceReplay.ReplayRecord>> shards = new java.util.TreeMap<>();

    /** When this run's first iteration started (nanoTime) and the iterations done before it. */
    private long runStart;
    private int runFrom;

    /** One iteration's new pairs and the training pairs sampled from the replay. */
    record Iteration(PreferenceCollector.Round round, List<PreferencePair> training) {
    }

    /**
     * Checks what can be checked before any model loads, picks the directories, builds the stage with
     * {@code buildStage} and loads the comparator's frozen models; on a failure closes what was opened.
     */
    IterativeTrainer(PreferenceBuilder<C, ?> b, String configName, Function<IterativeTrainer<C, S>, S> buildStage) {
        super(b, configName);
        if (trainDataset == null) {
            throw new IllegalArgumentException("train_dataset must be provided");
        }
        RewardFunction reward = b.get(TrainerSettings.REWARD_FUNC);
        this.rewardRange = reward == null ? null : reward.rewardRange();
        if (args.logRewardDistribution() && (rewardRange == null || rewardRange.length != 2)) {
            throw new IllegalArgumentException("log_reward_distribution requires a reward function that states its range "
                    + "(RewardFunction.rewardRange(), e.g. [0, 1] for length_ratio); " + reward
                    + " does not; set log_reward_distribution to false");
        }
        Path outputDir = b.get(TrainerSettings.OUTPUT_DIR);
        Path base = outputBase(outputDir, b.get(TrainerSettings.WANDB_CONFIG), System.getenv("SLURM_JOB_ID"));
        this.replayInOutput = args.preferenceReplayDir() == null && outputDir != null;
        this.replayDir = args.preferenceReplayDir() != null ? Path.of(args.preferenceReplayDir())
                : base != null ? base.resolve("preference_replay") : temporaryDir("preference_replay");
        boolean savesPolicies = args.policyCheckpointDir() != null || args.comparatorPolicy() == ComparatorPolicy.HISTORY;
        this.policyDir = !savesPolicies ? null : args.policyCheckpointDir() != null ? Path.of(args.policyCheckpointDir())
                : base != null ? base.resolve("policy_checkpoints") : temporaryDir("policy_checkpoints");
        this.comparatorSeeds = new SeedStream(-args.seed());
        this.replaySeeds = new SeedStream(args.seed() ^ 0x7265706C6179L);
        this.comparators = new IterationComparators(args, policyDir, b.get(Centralization.ADAPTER));
        S built = null;
        try {
            built = buildStage.apply(this);
            this.work = built.collector().work(); // a ddp run: the stage's processes
            comparators.loadFixedComparators(work, built.collector().agents(), b.get(TrainerSettings.DTYPE));
        } catch (RuntimeException | Error e) {
            TrainerParts.free(e, built, comparators);
            scratch.forEach(ModelDirs::deleteRecursively);
            throw e;
        }
        this.stage = built;
    }

    /** Iteration {@code iteration} (from 1): its pairs, the stage's training on them, its metrics. */
    abstract void runIteration(int iteration);

    /** Iterations completed (restored by a resume). */
    public abstract int iterationsDone();

    @Override
    public Path outputDir() {
        return stage.outputDir();
    }

    @Override
    MetricsLogger logger() {
        return stage.logger();
    }

    @Override
    PreferenceCollector collector() {
        return stage.collector();
    }

    /**
     * Moves the outputs as the stage does; a replay directory inside the output directory moves with
     * them (the earlier run's shards stay as they were). Policy checkpoints stay: the history
     * comparator reads the earlier ones.
     */
    @Override
    void relocateOutput(Path checkpoint) {
        stage.relocateOutput(checkpoint);
        if (replayInOutput && outputDir() != null) {
            replayDir = outputDir().resolve("preference_replay");
        }
    }

    /** Where the replay shards are. */
    public Path replayDir() {
        return replayDir;
    }

    /** Where the policy checkpoints are (null when none are written). */
    public Path policyCheckpointDir() {
        return policyDir;
    }

    @Override
    Trainer stage() {
        return stage;
    }

    /** Refuses a checkpoint extension: an iterative trainer is not run as another's stage. */
    static void refuseExtension(TrainerSettings settings, String algorithm) {
        settings.refuse(algorithm, "it is not run as another trainer's stage; its checkpoints hold its own rounds",
                TrainerSettings.CHECKPOINT_EXTENSION);
    }

    /**
     * Where the replay and policy checkpoints go when their own fields are unset (reference §7.4): the
     * output directory; else {@code wandb_config["output_dir"]}; else {@code config_sections.output.base_dir}
     * or {@code wandb_config["dir"]}, in {@code job_<SLURM_JOB_ID>} when that is set; else null (a
     * temporary directory, deleted by {@link #close}; the reference writes to the working directory).
     */
    static Path outputBase(Path outputDir, Map<String, ?> wandbConfig, String slurmJobId) {
        if (outputDir != null) {
            return outputDir;
        }
        if (wandbConfig == null) {
            return null;
        }
        if (wandbConfig.get("output_dir") != null) {
            return Path.of(String.valueOf(wandbConfig.get("output_dir")));
        }
        Object base = wandbConfig.get("config_sections") instanceof Map<?, ?> sections
                && sections.get("output") instanceof Map<?, ?> output ? output.get("base_dir") : null;
        if (base == null) {
            base = wandbConfig.get("dir");
        }
        if (base == null) {
            return null;
        }
        Path dir = Path.of(String.valueOf(base));
        return slurmJobId == null || slurmJobId.isBlank() ? dir : dir.resolve("job_" + slurmJobId);
    }

    private Path temporaryDir(String name) {
        try {
            Path dir = Files.createTempDirectory("comlrl-" + name + "-");
            scratch.add(dir);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a directory for " + name + ": " + e.getMessage(), e);
        }
    }

    /** Steps 1–3 of iteration {@code iteration}: its pairs by {@code collector}, its shard, the training pairs. */
    Iteration collect(int iteration, PreferenceCollector collector) {
        PreferenceCollector.Round round;
        try (ComparatorSource comparator = comparators.forIteration(iteration, collector.agents())) {
            // the pairing rule is the iterative config's (the trainer's own config keeps MADPO's defaults)
            round = collector.collectAgainst(trainDataset, comparator, args.comparatorNumCandidates(), comparatorSeeds,
                    args.pairSelection(), args.preferencePairsPerSample());
        }
        if (work.isMain()) {
            PreferenceReplay.writeShard(replayDir, iteration, round.records());
        }
        shards.put(iteration, List.copyOf(round.records()));
        List<List<PreferenceReplay.ReplayRecord>> records = new ArrayList<>(shards.headMap(iteration, true).values());
        int lastNonEmpty = records.stream().filter(r -> !r.isEmpty()).reduce((a, b) -> b).map(List::size).orElse(0);
        double[] weights = ReplaySampling.shardWeights(args.preferenceReplayMode(), records.size(),
                args.preferenceReplayK(), args.preferenceReplayLambda());
        int size = ReplaySampling.sampleSize(args.preferenceReplaySampleSize(), round.records().size(), lastNonEmpty);
        List<PreferenceReplay.ReplayRecord> sampled = ReplaySampling.sample(records, weights, size,
                new Random(replaySeeds.next()));
        return new Iteration(round, collector.fromRecords(sampled));
    }

    /** Step 5: logs the {@code iter/*} metrics at the stage's env step, prints a line, saves the policies. */
    void finish(int iteration, Iteration it) {
        Path outputDir = outputDir();
        PreferenceCollector.Round round = it.round();
        Map<String, Double> metrics = new LinkedHashMap<>();
        metrics.put("iter/current_iteration", (double) iteration);
        metrics.put("iter/current_preference_pairs", (double) round.records().size());
        metrics.put("iter/total_preference_pairs", (double) shards.values().stream().mapToLong(List::size).sum());
        metrics.put("iter/train_preference_pairs", (double) it.training().size());
        metrics.put("iter/current_reward_mean", mean(round.currentRewards()));
        metrics.put("iter/comparator_reward_mean", mean(round.comparatorRewards()));
        if (args.logRewardDistribution()) {
            RewardDistribution d = RewardDistribution.of(iteration, doubles(round.currentRewards()),
                    doubles(round.comparatorRewards()), rewardRange[0], rewardRange[1]);
            metrics.putAll(d.metrics("iter/reward_distribution"));
            if (outputDir != null && work.isMain()) {
                d.writeJson(outputDir);
                d.writeSvgs(outputDir);
            }
            // the same over the selected pairs' two sides (metrics only)
            RewardDistribution selected = RewardDistribution.of(iteration, doubles(round.selectedCurrentRewards()),
                    doubles(round.selectedComparatorRewards()), rewardRange[0], rewardRange[1]);
            metrics.putAll(selected.metrics("iter/selected_reward_distribution"));
            metrics.put("iter/selected_reward_distribution/pair_count", (double) round.records().size());
        }
        logger().log(envStep(), metrics);
        if (work.isMain()) {
            console.printf(Locale.ROOT, "Iteration %d/%d: %d new pairs (current reward %.4f vs comparator %.4f), trained "
                    + "on %d | %s%n", iteration, args.numIterations(), round.records().size(), mean(round.currentRewards()),
                    mean(round.comparatorRewards()), it.training().size(), overall((System.nanoTime() - runStart) / 1e9,
                    iteration - runFrom, args.numIterations() - iteration));
        }
        savePolicies(IterationComparators.snapshotName(iteration));
    }

    /**
     * Runs iterations {@code iterationsDone()+1 .. num_iterations}, writing {@code checkpoint-N} every
     * {@code checkpointInterval} iterations and after the last.
     */
    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        if (resumeFromCheckpoint != null) {
            resumeFrom(resumeFromCheckpoint);
        }
        logger().timeRun(() -> runIterations(iterationsDone(), checkpointDir, checkpointInterval));
    }

    private void runIterations(int done, Path checkpointDir, int checkpointInterval) {
        if (checkpointInterval < 1) {
            throw new IllegalArgumentException("checkpoint_interval must be >= 1, got " + checkpointInterval);
        }
        if (done >= args.numIterations()) {
            if (!work.isMain()) {
                return;
            }
            console.printf(Locale.ROOT, "Nothing to train: %d of num_iterations=%d iterations are already done (the "
                    + "checkpoint's progress); raise num_iterations to train further.%n", done, args.numIterations());
            return;
        }
        if (done == 0) {
            savePolicies("initial"); // the initial policy, when policy checkpoints are written
        }
        runStart = System.nanoTime();
        runFrom = done;
        for (int i = done + 1; i <= args.numIterations(); i++) {
            runIteration(i);
            if (checkpointDir != null && (i % checkpointInterval == 0 || i == args.numIterations())) {
                saveCheckpoint(checkpointDir);
            }
        }
    }

    /** The run's progress: {@code elapsed} seconds for {@code run} iterations, {@code ETA = elapsed / run · left}. */
    static String overall(double elapsed, int run, int left) {
        return left == 0 ? "all iterations done in " + ConsoleProgress.clock(elapsed)
                : String.format(Locale.ROOT, "elapsed %s, ETA %s for %d more iteration%s", ConsoleProgress.clock(elapsed),
                        ConsoleProgress.clock(elapsed / run * left), left, left == 1 ? "" : "s");
    }

    private void savePolicies(String name) {
        if (policyDir != null) {
            saveModel(policyDir.resolve(name));
        }
    }

    private static double[] doubles(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static double mean(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).filter(Double::isFinite).average().orElse(0);
    }

    // ------------------------------------------------------------------ checkpoints

    /**
     * The checkpoint extension: the shards up to {@code iterationsDone}, the seed streams, the history
     * comparator's snapshots and {@code more}; restoring rewrites the replay directory from them.
     */
    TrainerCheckpoint.Extension extension(String algorithm, IntSupplier iterationsDone, Map<String, Stateful> more) {
        TrainerCheckpoint.Part replay = TrainerCheckpoint.Part.of(dir -> {
            Path to = dir.resolve("preference_replay");
            shards.headMap(iterationsDone.getAsInt(), true).forEach((i, r) -> PreferenceReplay.writeShard(to, i, r));
        }, dir -> {
            Path from = dir.resolve("preference_replay");
            List<PreferenceReplay.Shard> saved = Files.isDirectory(from) ? PreferenceReplay.listShards(from) : List.of();
            shards.clear();
            if (!work.isMain()) { // rank 0 rewrites the replay directory
                saved.forEach(sh -> shards.put(sh.iteration(), sh.records()));
                return;
            }
            for (PreferenceReplay.Shard s : PreferenceReplay.listShards(replayDir)) {
                try {
                    Files.delete(s.file());
                } catch (IOException e) {
                    throw new UncheckedIOException("Cannot reset " + s.file() + ": " + e.getMessage(), e);
                }
            }
            for (PreferenceReplay.Shard s : saved) {
                PreferenceReplay.writeShard(replayDir, s.iteration(), s.records());
                shards.put(s.iteration(), s.records());
            }
        });
        Stateful progress = Counters.of("comparator_seed_position", comparatorSeeds::position, comparatorSeeds::restore)
                .and("replay_seed_position", replaySeeds::position, replaySeeds::restore);
        Map<String, TrainerCheckpoint.Part> parts = new LinkedHashMap<>();
        parts.put("preference_replay", replay);
        if (args.comparatorPolicy() == ComparatorPolicy.HISTORY) {
            parts.put(IterationComparators.HISTORY_DIR, comparators.historySnapshots(iterationsDone));
        }
        Map<String, Stateful> states = new LinkedHashMap<>(Map.of("iteration_progress", progress));
        states.putAll(more);
        return new TrainerCheckpoint.Extension(algorithm, parts, states);
    }

    /** Frees the comparators and the stage, and deletes the temporary replay and policy directories. */
    @Override
    public void close() {
        try {
            TrainerParts.free(null, comparators, stage);
        } finally {
            scratch.forEach(ModelDirs::deleteRecursively);
        }
    }
}
