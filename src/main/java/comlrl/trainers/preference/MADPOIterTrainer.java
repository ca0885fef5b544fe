package comlrl.trainers.preference;

import comlrl.data.Stateful;
import comlrl.data.TaskItem;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.tensor.Device;
import comlrl.trainers.Devices;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.common.AgentGeneration;
import comlrl.trainers.common.MetricsLogger;
import comlrl.trainers.common.SeedStream;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerCheckpoint;
import comlrl.trainers.preference.comparator.ApiComparator;
import comlrl.trainers.preference.comparator.ApiComparatorSettings;
import comlrl.utils.CollaborationMode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Iterative multi-agent DPO (reference §7.4): {@code num_iterations} rounds of preference
 * collection against a comparator policy, each followed by DPO training.
 * <ol>
 *   <li>Per item the agents sample {@code preference_num_candidates} candidates and the comparator
 *       ({@code comparator_policy}) {@code comparator_num_candidates}; both are scored by the task
 *       reward; candidate k of the current policy is paired with candidate k of the comparator (the
 *       higher processed reward wins, ties dropped), ordered by {@code pair_selection} and capped at
 *       {@code preference_pairs_per_sample}.</li>
 *   <li>The pairs are written as shard {@code iteration_NNNN.json} of the replay directory (text only).</li>
 *   <li>The training pairs are sampled from the shards ({@code preference_replay_mode}: weights
 *       over shards, then records without replacement, {@link PreferenceReplay}) and re-tokenised.</li>
 *   <li>{@code num_train_epochs} epochs of MADPO's update on them ({@link MADPOTrainer}, the same
 *       loss and evaluation schedule by updates seen).</li>
 *   <li>With {@code policy_checkpoint_dir} or the history comparator, the agents are saved as
 *       {@code initial/agent_i} (before iteration 1) and {@code iteration_NNNN/agent_i}.</li>
 * </ol>
 * Iterations are numbered from 1. Comparators: {@code current} samples the live agents from the
 * comparator's own seed stream; {@code current_copy} the same agents (frozen copies on
 * {@code comparator_devices} when they differ from the agents' devices); {@code model} frozen
 * models loaded once; {@code history} the policy saved after iteration {@code idx − comparator_history_k}
 * (the newest earlier one saved, else the initial policy). Checkpoints ({@code checkpoint-N}, N =
 * iterations done) hold MADPO's state, the replay shards written so far and the seed streams; a
 * resumed run rewrites the replay directory from them, so it repeats exactly what an uninterrupted
 * run does.
 *
 * {@code api} asks an HTTP service ({@link ApiComparator}) for each agent's candidates.
 *
 * With {@code log_reward_distribution} each iteration logs 16-bin histograms of the current and the
 * comparator candidates' raw rewards over the reward function's range ({@link RewardDistribution}:
 * {@code iter/reward_distribution/*} metrics, {@code reward_distributions/iteration_NNNN.json} and
 * line and bar plots as SVG files in the run directory).
 *
 * <p>Not yet here: centralized collaboration or comparator generation (refused with a message
 * before any model loads), and the histogram of the selected pairs.
 */
public final class MADPOIterTrainer implements Trainer {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MADPOIter";

    /** The MADPO fields the per-iteration DPO training takes from this config (not the pair selection: that is aligned here). */
    private static final Set<String> NOT_MAPPED = Set.of("pair_selection", "preference_pairs_per_sample");

    private final MADPOIterConfig args;
    private final MADPOTrainer dpo;
    private final MetricsLogger logger;
    private final ResumeOutput output;
    private final SeedStream comparatorSeeds;
    private final SeedStream replaySeeds;
    private final Path replayDir;
    private final Path policyDir;
    private final List<CausalLm> fixedComparators; // comparator_policy model
    private final ApiComparator api; // comparator_policy api
    private final double[] rewardRange;
    private final comlrl.data.TaskSet trainDataset;
    private final java.io.PrintStream console;
    private long totalPairs;

    private MADPOIterTrainer(Builder b) {
        if (b.args == null) {
            throw new IllegalArgumentException("args (a MADPOIterConfig) must be provided");
        }
        this.args = b.args;
        refuseMissing(args);
        if (b.trainDataset() == null) {
            throw new IllegalArgumentException("train_dataset must be provided");
        }
        this.trainDataset = b.trainDataset();
        this.rewardRange = b.rewardFunc() == null ? null : b.rewardFunc().rewardRange();
        if (args.logRewardDistribution() && (rewardRange == null || rewardRange.length != 2)) {
            throw new IllegalArgumentException("log_reward_distribution requires a reward function that states its range "
                    + "(RewardFunction.rewardRange(), e.g. [0, 1] for length_ratio); " + b.rewardFunc()
                    + " does not; set log_reward_distribution to false");
        }
        this.console = b.console();
        this.output = new ResumeOutput(b.outputDir());
        this.replayDir = args.preferenceReplayDir() != null ? Path.of(args.preferenceReplayDir())
                : b.outputDir() != null ? b.outputDir().resolve("preference_replay") : temporaryDir("preference_replay");
        boolean savesPolicies = args.policyCheckpointDir() != null || args.comparatorPolicy() == ComparatorPolicy.HISTORY;
        this.policyDir = !savesPolicies ? null : args.policyCheckpointDir() != null ? Path.of(args.policyCheckpointDir())
                : b.outputDir() != null ? b.outputDir().resolve("policy_checkpoints") : temporaryDir("policy_checkpoints");
        this.comparatorSeeds = new SeedStream(-args.seed());
        this.replaySeeds = new SeedStream(args.seed() ^ 0x7265706C6179L);
        // the API comparator's settings (and its key) are checked before any model loads
        this.api = args.comparatorPolicy() == ComparatorPolicy.API
                ? new ApiComparator(ApiComparatorSettings.fromMap(args.comparatorApiFields())) : null;
        this.logger = new MetricsLogger(b.outputDir(), b.sinks(), args.loggingSteps(), b.logHistoryLimit());
        MADPOTrainer inner = null;
        List<CausalLm> fixed = List.of();
        try {
            // the DPO stage logs into this trainer's logger; the output directory (and its resume-* rule) is this trainer's
            MADPOTrainer.Builder builder = b.copyInto(MADPOTrainer.builder()).outputDir(null).args(dpoConfig(args));
            if (b.agentModel != null) {
                builder.agentModel(b.agentModel);
            }
            if (b.numAgents != null) {
                builder.numAgents(b.numAgents);
            }
            if (b.evalLogger != null) {
                builder.evalLogger(b.evalLogger).evalAggregator(b.evalAggregator);
            }
            inner = builder.sharedLogger(logger).checkpointExtension(checkpointExtension()).build();
            if (args.comparatorPolicy() == ComparatorPolicy.MODEL) {
                fixed = loadComparators(inner.policies(), args.comparatorAgents() != null ? args.comparatorAgents()
                        : Collections.nCopies(inner.policies().size(), args.comparatorModelName()), b);
            }
        } catch (RuntimeException | Error e) {
            fixed.forEach(CausalLm::close);
            if (inner != null) {
                inner.close();
            }
            if (api != null) {
                api.close();
            }
            logger.close();
            throw e;
        }
        this.dpo = inner;
        this.fixedComparators = fixed;
    }

    /** Refuses what is not built yet, before any model loads. */
    private static void refuseMissing(MADPOIterConfig args) {
        if (args.collaborationMode() == CollaborationMode.CENTRALIZED
                || args.comparatorGenerationMode() == CollaborationMode.CENTRALIZED) {
            throw new IllegalArgumentException("centralized collaboration and comparator_generation_mode: centralized are "
                    + "not available in MADPOIter yet; use decentralized");
        }
    }

    /** MADPO's config for the per-iteration DPO epochs: this config's values of MADPO's fields. */
    static MADPOConfig dpoConfig(MADPOIterConfig args) {
        Map<String, Object> all = args.toMap();
        Map<String, Object> fields = new LinkedHashMap<>();
        for (String key : MADPOConfig.keys()) {
            if (!NOT_MAPPED.contains(key) && all.get(key) != null) {
                fields.put(key, all.get(key));
            }
        }
        return MADPOConfig.fromMap(fields);
    }

    private static Path temporaryDir(String name) {
        try {
            return Files.createTempDirectory("comlrl-" + name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a directory for " + name + ": " + e.getMessage(), e);
        }
    }

    /** Frozen comparator models (comparator_policy model), on comparator_devices or the agents' devices. */
    private List<CausalLm> loadComparators(List<CausalLm> agents, List<String> sources, Builder b) {
        List<Device> devices = args.comparatorDevices() != null
                ? Devices.resolve(args.comparatorDevices(), agents.size(), "comparator_devices")
                : agents.stream().map(a -> a.model().device()).toList();
        List<CausalLm> out = new ArrayList<>();
        try {
            for (int i = 0; i < sources.size(); i++) {
                out.add(CausalLm.load(sources.get(i), b.dtype(), devices.get(i)));
            }
        } catch (RuntimeException | Error e) {
            out.forEach(CausalLm::close);
            throw e;
        }
        return out;
    }

    public static Builder builder() {
        return new Builder();
    }

    public MADPOIterConfig args() {
        return args;
    }

    /** Iterations completed (restored by a resume). */
    public int iterationsDone() {
        return dpo.progress();
    }

    /** Where the replay shards are. */
    public Path replayDir() {
        return replayDir;
    }

    /** Where the policy checkpoints are (null when none are written). */
    public Path policyCheckpointDir() {
        return policyDir;
    }

    public List<Map<String, Double>> logHistory() {
        return logger.history();
    }

    /** Where outputs go now: the output directory, or its {@code resume-*} subdirectory after a resume. */
    public Path outputDir() {
        return output.dir();
    }

    @Override
    public long envStep() {
        return dpo.envStep();
    }

    @Override
    public List<CausalLm> policies() {
        return dpo.policies();
    }

    @Override
    public List<GenerationSettings.Resolved> generationSettings() {
        return dpo.generationSettings();
    }

    // ------------------------------------------------------------------ training

    /**
     * Runs iterations {@code done+1 .. num_iterations}, writing {@code checkpoint-N} every
     * {@code checkpointInterval} iterations and after the last.
     */
    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        if (checkpointInterval < 1) {
            throw new IllegalArgumentException("checkpoint_interval must be >= 1, got " + checkpointInterval);
        }
        if (resumeFromCheckpoint != null) {
            resumeFrom(resumeFromCheckpoint);
        }
        if (iterationsDone() >= args.numIterations()) {
            console.printf(Locale.ROOT, "Nothing to train: %d of num_iterations=%d iterations are already done (the "
                    + "checkpoint's progress); raise num_iterations to train further.%n", iterationsDone(),
                    args.numIterations());
            return;
        }
        if (policyDir != null && iterationsDone() == 0) {
            savePolicies(policyDir.resolve("initial"));
        }
        for (int iteration = iterationsDone() + 1; iteration <= args.numIterations(); iteration++) {
            runIteration(iteration);
            if (checkpointDir != null && (iteration % checkpointInterval == 0 || iteration == args.numIterations())) {
                dpo.saveCheckpoint(checkpointDir);
            }
        }
    }

    private void runIteration(int iteration) {
        PreferenceCollector.Round round;
        try (ComparatorSource comparator = comparatorFor(iteration)) {
            round = dpo.collector().collectAgainst(trainDataset, comparator, args.comparatorNumCandidates(),
                    comparatorSeeds);
        }
        PreferenceReplay.writeShard(replayDir, iteration, round.records());
        totalPairs += round.records().size();
        List<PreferenceReplay.Shard> shards = PreferenceReplay.listShards(replayDir).stream()
                .filter(s -> s.iteration() <= iteration).toList();
        List<List<PreferenceReplay.ReplayRecord>> records = shards.stream().map(PreferenceReplay.Shard::records).toList();
        int lastNonEmpty = 0;
        for (List<PreferenceReplay.ReplayRecord> r : records) {
            lastNonEmpty = r.isEmpty() ? lastNonEmpty : r.size();
        }
        double[] weights = PreferenceReplay.shardWeights(args.preferenceReplayMode(), shards.size(),
                args.preferenceReplayK(), args.preferenceReplayLambda());
        int size = PreferenceReplay.sampleSize(args.preferenceReplaySampleSize(), round.records().size(), lastNonEmpty);
        List<PreferenceReplay.ReplayRecord> sampled = PreferenceReplay.sample(records, weights, size,
                new Random(replaySeeds.next()));
        List<PreferencePair> training = sampled.stream().map(dpo.collector()::fromRecord).toList();
        dpo.trainOn(training, iteration);
        Map<String, Double> metrics = new LinkedHashMap<>();
        metrics.put("iter/current_iteration", (double) iteration);
        metrics.put("iter/current_preference_pairs", (double) round.records().size());
        metrics.put("iter/total_preference_pairs", (double) totalPairs);
        metrics.put("iter/train_preference_pairs", (double) training.size());
        metrics.put("iter/current_reward_mean", mean(round.currentRewards()));
        metrics.put("iter/comparator_reward_mean", mean(round.comparatorRewards()));
        if (args.logRewardDistribution()) {
            RewardDistribution d = RewardDistribution.of(iteration, doubles(round.currentRewards()),
                    doubles(round.comparatorRewards()), rewardRange[0], rewardRange[1]);
            metrics.putAll(d.metrics("iter/reward_distribution"));
            if (output.dir() != null) {
                d.writeJson(output.dir());
                d.writeSvgs(output.dir());
            }
        }
        logger.log(dpo.envStep(), metrics);
        console.printf(Locale.ROOT, "Iteration %d/%d: %d new pairs (current reward %.4f vs comparator %.4f), trained on %d%n",
                iteration, args.numIterations(), round.records().size(), mean(round.currentRewards()),
                mean(round.comparatorRewards()), training.size());
        if (policyDir != null) {
            savePolicies(policyDir.resolve(PreferenceReplay.shardName(iteration).replace(".json", "")));
        }
    }

    private static double[] doubles(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static double mean(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).filter(Double::isFinite).average().orElse(0);
    }

    /** The comparator of iteration {@code iteration} (1-based). */
    private ComparatorSource comparatorFor(int iteration) {
        List<CausalLm> agents = dpo.policies();
        return switch (args.comparatorPolicy()) {
            case CURRENT -> frozen(agents, false, true);
            case CURRENT_COPY -> currentCopy(agents);
            case MODEL -> frozen(fixedComparators, false, false);
            case HISTORY -> frozen(loadHistory(iteration), true, true);
            case API -> apiSource();
        };
    }

    /**
     * The API comparator: per agent one call for {@code n} completions of its prompt text, with the
     * item's fields and this config's sampling settings (the service's own randomness is not ours to seed).
     */
    private ComparatorSource apiSource() {
        ApiComparator.Sampling sampling = new ApiComparator.Sampling(args.maxNewTokens(), args.temperature(), args.topP(),
                args.topK());
        return (item, promptTexts, promptIds, n, seeds) -> {
            List<List<String>> out = new ArrayList<>();
            for (int i = 0; i < promptTexts.size(); i++) {
                out.add(api.generate(promptTexts.get(i), i, n, item.asMap(), sampling));
            }
            return out;
        };
    }

    /** The live agents, or frozen copies of them on comparator_devices when those differ from the agents'. */
    private ComparatorSource currentCopy(List<CausalLm> agents) {
        if (args.comparatorDevices() == null) {
            return frozen(agents, false, true);
        }
        List<Device> devices = Devices.resolve(args.comparatorDevices(), agents.size(), "comparator_devices");
        boolean same = true;
        for (int i = 0; i < agents.size(); i++) {
            same &= agents.get(i).model().device().equals(devices.get(i));
        }
        if (same) {
            return frozen(agents, false, true);
        }
        List<CausalLm> copies = new ArrayList<>();
        for (int i = 0; i < agents.size(); i++) {
            CausalLm a = agents.get(i);
            copies.add(new CausalLm(a.source(), a.model().frozenCopy(devices.get(i)), a.tokenizer(), a.generationConfig()));
        }
        return frozen(copies, true, true);
    }

    /**
     * The policy saved after iteration {@code iteration − comparator_history_k}; when that one is
     * missing, the newest saved before it; else the initial policy.
     */
    private List<CausalLm> loadHistory(int iteration) {
        Path dir = historyDirectory(policyDir, iteration, args.comparatorHistoryK());
        List<CausalLm> out = new ArrayList<>();
        List<CausalLm> agents = dpo.policies();
        try {
            for (int i = 0; i < agents.size(); i++) {
                out.add(CausalLm.load(dir.resolve("agent_" + i).toString(), agents.get(i).model().dtype(),
                        agents.get(i).model().device()));
            }
        } catch (RuntimeException | Error e) {
            out.forEach(CausalLm::close);
            throw e;
        }
        return out;
    }

    /**
     * The history comparator's directory for {@code iteration}: {@code iteration_(idx−k)}, else the
     * newest existing {@code iteration_j} with j &lt; idx − k, else {@code initial}.
     */
    static Path historyDirectory(Path policyDir, int iteration, int k) {
        for (int j = iteration - k; j >= 1; j--) {
            Path d = policyDir.resolve(PreferenceReplay.shardName(j).replace(".json", ""));
            if (Files.isDirectory(d)) {
                return d;
            }
        }
        return policyDir.resolve("initial");
    }

    /**
     * A comparator sampling {@code models} with their generation settings for comparator_num_candidates.
     *
     * @param agentsTokens whether the models read the agents' prompt ids (copies and earlier states of
     *        the agents); else each encodes the prompt text with its own tokenizer
     */
    private ComparatorSource frozen(List<CausalLm> models, boolean owned, boolean agentsTokens) {
        int n = args.comparatorNumCandidates();
        List<GenerationSettings.Resolved> settings = new ArrayList<>();
        for (int i = 0; i < models.size(); i++) {
            settings.add(AgentGeneration.resolve(i, models.get(i), args.generationKwargs(), args.temperature(),
                    args.topP(), args.topK(), args.maxNewTokens(), n));
        }
        return new ComparatorSource() {
            @Override
            public List<List<String>> generate(TaskItem item, List<String> promptTexts, List<long[]> promptIds, int count,
                    long[] seeds) {
                List<List<String>> out = new ArrayList<>();
                for (int i = 0; i < models.size(); i++) {
                    // a comparator model of its own may have another tokenizer: it encodes the prompt itself
                    long[] ids = agentsTokens ? promptIds.get(i) : models.get(i).encode(promptTexts.get(i));
                    List<Completion> c = models.get(i).generator().generate(List.of(ids), settings.get(i).sampling(),
                            seeds[i]).get(0);
                    out.add(c.stream().map(Completion::text).toList());
                }
                return out;
            }

            @Override
            public void close() {
                if (owned) {
                    models.forEach(CausalLm::close);
                }
            }
        };
    }

    private void savePolicies(Path dir) {
        dpo.saveModel(dir);
    }

    // ------------------------------------------------------------------ checkpoints

    /** The replay shards and the seed streams, in every checkpoint MADPO writes for this trainer. */
    private TrainerCheckpoint.Extension checkpointExtension() {
        TrainerCheckpoint.Part replay = new TrainerCheckpoint.Part() {
            @Override
            public void save(Path dir) {
                Path to = dir.resolve("preference_replay");
                for (PreferenceReplay.Shard s : PreferenceReplay.listShards(replayDir)) {
                    if (s.iteration() <= iterationsDone()) {
                        PreferenceReplay.writeShard(to, s.iteration(), s.records());
                    }
                }
            }

            @Override
            public void restore(Path dir) {
                Path from = dir.resolve("preference_replay");
                List<PreferenceReplay.Shard> saved = Files.isDirectory(from) ? PreferenceReplay.listShards(from) : List.of();
                for (PreferenceReplay.Shard s : PreferenceReplay.listShards(replayDir)) {
                    try {
                        Files.delete(s.file()); // a shard written after this checkpoint is written again
                    } catch (IOException e) {
                        throw new UncheckedIOException("Cannot reset " + s.file() + ": " + e.getMessage(), e);
                    }
                }
                for (PreferenceReplay.Shard s : saved) {
                    PreferenceReplay.writeShard(replayDir, s.iteration(), s.records());
                }
                totalPairs = saved.stream().mapToLong(s -> s.records().size()).sum();
            }
        };
        Stateful progress = new Stateful() {
            @Override
            public Map<String, Object> stateDict() {
                return Map.of("comparator_seed_position", comparatorSeeds.position(), "replay_seed_position",
                        replaySeeds.position());
            }

            @Override
            public void loadStateDict(Map<String, ?> state) {
                comparatorSeeds.restore(((Number) state.get("comparator_seed_position")).longValue());
                replaySeeds.restore(((Number) state.get("replay_seed_position")).longValue());
            }
        };
        return new TrainerCheckpoint.Extension(ALGORITHM_NAME, Map.of("preference_replay", replay),
                Map.of("madpo_iter_progress", progress));
    }

    /**
     * Restores a checkpoint of a MADPOIter run (MADPO's state, the replay shards, the seed streams);
     * outputs go to a {@code resume-*} subdirectory when the output directory had files.
     */
    @Override
    public void resumeFrom(Path checkpoint) {
        output.onResume(checkpoint, logger);
        dpo.resumeFrom(checkpoint);
    }

    @Override
    public Path saveCheckpoint(Path root) {
        return dpo.saveCheckpoint(root);
    }

    @Override
    public Map<String, Double> evaluate() {
        return dpo.evaluate();
    }

    @Override
    public void saveModel(Path dir) {
        dpo.saveModel(dir);
    }

    @Override
    public void close() {
        fixedComparators.forEach(CausalLm::close);
        if (api != null) {
            api.close();
        }
        dpo.close();
        logger.close();
    }

    // ------------------------------------------------------------------ builder

    /** Builds a {@link MADPOIterTrainer}; names follow the reference's constructor keywords. */
    public static final class Builder extends TrainerBuilder<Builder> {
        String agentModel;
        Integer numAgents;
        MADPOIterConfig args;
        EvalLogger evalLogger;
        EvalAggregator evalAggregator;

        private Builder() {
        }

        @Override
        protected Builder self() {
            return this;
        }

        public Builder agentModel(String agentModel) {
            this.agentModel = agentModel;
            return this;
        }

        public Builder numAgents(int numAgents) {
            this.numAgents = numAgents;
            return this;
        }

        public Builder args(MADPOIterConfig args) {
            this.args = args;
            return this;
        }

        public Builder evalLogger(EvalLogger evalLogger) {
            this.evalLogger = evalLogger;
            return this;
        }

        public Builder evalAggregator(EvalAggregator evalAggregator) {
            this.evalAggregator = evalAggregator;
            return this;
        }

        public MADPOIterTrainer build() {
            return new MADPOIterTrainer(this);
        }
    }
}
