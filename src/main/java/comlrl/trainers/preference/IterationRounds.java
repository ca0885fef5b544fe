package comlrl.trainers.preference;

import comlrl.data.Stateful;
import comlrl.data.TaskItem;
import comlrl.data.TaskSet;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.reward.RewardFunction;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.trainers.Devices;
import comlrl.trainers.common.AgentGeneration;
import comlrl.trainers.common.MetricsLogger;
import comlrl.trainers.common.SeedStream;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerCheckpoint;
import comlrl.trainers.preference.comparator.ApiComparator;
import comlrl.trainers.preference.comparator.ApiComparatorSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.IntSupplier;

/**
 * What the iterative trainers (MADPOIter, MARLHFIter) do around their training step, once (reference
 * §7.4): the comparator of each iteration ({@code comparator_policy}), the current-vs-comparator
 * pairs, the replay shards and the training pairs sampled from them, the {@code iter/*} metrics and
 * reward histograms, the policy checkpoints, and the checkpoint state of all of it (the shards
 * written so far and the comparator's and replay's seed streams).
 *
 * <p>Comparators: {@code current} samples the live agents from the comparator's own seed stream;
 * {@code current_copy} the same agents (frozen copies on {@code comparator_devices} when those
 * differ from the agents' devices); {@code model} frozen models loaded once; {@code history} the
 * policy saved after iteration {@code idx − comparator_history_k} (the newest earlier one saved,
 * else the initial policy); {@code api} an HTTP service ({@link ApiComparator}).
 */
final class IterationRounds implements AutoCloseable {
    private final IterativePreferenceConfig args;
    private Path replayDir;
    private final boolean replayInOutput;
    private final Path policyDir;
    private final SeedStream comparatorSeeds;
    private final SeedStream replaySeeds;
    private final ApiComparator api;
    private final double[] rewardRange;
    private List<CausalLm> fixedComparators = List.of();
    private comlrl.trainers.reinforce.CentralizedAdapter adapter = new comlrl.trainers.reinforce.TaggedCentralizedAdapter();
    /**
     * This process's share of a ddp run: the comparator generates on rank 0 (once, as in one process:
     * an API comparator is called once per prompt), or in the agents split each process generates the
     * comparator candidates of the agents it holds (an API comparator still on rank 0); only rank 0
     * writes the replay shards, reward histograms and prints; every process keeps the shards.
     */
    private comlrl.trainers.common.RankWork work = comlrl.trainers.common.RankWork.single(0);
    /** This run's shards by iteration (as written to the replay directory, or restored): what replay draws from. */
    private final java.util.TreeMap<Integer, List<PreferenceReplay.ReplayRecord>> shards = new java.util.TreeMap<>();

    /** One iteration's new pairs and the training pairs sampled from the replay. */
    record Iteration(PreferenceCollector.Round round, List<PreferencePair> training) {
    }

    /**
     * Checks what can be checked before any model loads (the API comparator's settings and key, the
     * reward range for histograms) and picks the directories.
     */
    IterationRounds(IterativePreferenceConfig args, Path outputDir, RewardFunction reward, Map<String, ?> wandbConfig) {
        this.args = args;
        this.rewardRange = reward == null ? null : reward.rewardRange();
        if (args.logRewardDistribution() && (rewardRange == null || rewardRange.length != 2)) {
            throw new IllegalArgumentException("log_reward_distribution requires a reward function that states its range "
                    + "(RewardFunction.rewardRange(), e.g. [0, 1] for length_ratio); " + reward
                    + " does not; set log_reward_distribution to false");
        }
        Path base = outputBase(outputDir, wandbConfig, System.getenv("SLURM_JOB_ID"));
        this.replayInOutput = args.preferenceReplayDir() == null && outputDir != null;
        this.replayDir = args.preferenceReplayDir() != null ? Path.of(args.preferenceReplayDir())
                : base != null ? base.resolve("preference_replay") : temporaryDir("preference_replay");
        boolean savesPolicies = args.policyCheckpointDir() != null || args.comparatorPolicy() == ComparatorPolicy.HISTORY;
        this.policyDir = !savesPolicies ? null : args.policyCheckpointDir() != null ? Path.of(args.policyCheckpointDir())
                : base != null ? base.resolve("policy_checkpoints") : temporaryDir("policy_checkpoints");
        this.comparatorSeeds = new SeedStream(-args.seed());
        this.replaySeeds = new SeedStream(args.seed() ^ 0x7265706C6179L);
        this.api = args.comparatorPolicy() == ComparatorPolicy.API
                ? new ApiComparator(ApiComparatorSettings.fromMap(args.comparatorApiFields())) : null;
    }

    /**
     * Where the replay and policy checkpoints go when their own fields are unset (reference §7.4
     * "output directories", with the run directory first): the trainer's output directory; else
     * {@code wandb_config["output_dir"]}; else {@code config_sections.output.base_dir} or
     * {@code wandb_config["dir"]}, in {@code job_<SLURM_JOB_ID>} when that variable is set; else null
     * (a temporary directory; the reference writes to the working directory).
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

    private static Path temporaryDir(String name) {
        try {
            return Files.createTempDirectory("comlrl-" + name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a directory for " + name + ": " + e.getMessage(), e);
        }
    }

    /** The processes of a ddp run (see {@link #work}); call before {@link #loadFixedComparators}. Returns this. */
    IterationRounds in(comlrl.trainers.common.RankWork work) {
        this.work = work;
        return this;
    }

    /**
     * With comparator_policy model: loads the frozen comparators, on comparator_devices or the agents'
     * devices (in a ddp run on rank 0, which generates the comparator's candidates; with the agents
     * split each process those of its agents).
     */
    void loadFixedComparators(List<CausalLm> agents, DType dtype) {
        if (args.comparatorPolicy() != ComparatorPolicy.MODEL || !work.isMain() && !byAgent()) {
            return;
        }
        List<String> sources = args.comparatorAgents() != null ? args.comparatorAgents()
                : java.util.Collections.nCopies(agents.size(), args.comparatorModelName());
        List<Device> devices = args.comparatorDevices() != null
                ? Devices.resolve(args.comparatorDevices(), agents.size(), "comparator_devices")
                : agents.stream().map(a -> a == null ? null : a.model().device()).toList();
        List<CausalLm> out = new ArrayList<>();
        try {
            for (int i = 0; i < sources.size(); i++) { // the agents split: the comparators of this process's agents
                out.add(byAgent() && !work.ownsAgent(i) ? null : CausalLm.load(sources.get(i), dtype, devices.get(i)));
            }
        } catch (RuntimeException | Error e) {
            closeAll(out);
            throw e;
        }
        this.fixedComparators = out;
    }

    /** Whether this is a process of a ddp run with the agents split (each holds some of the agents). */
    private boolean byAgent() {
        return work.distributed() && !work.splitsRows();
    }

    private static void closeAll(List<CausalLm> models) {
        models.stream().filter(java.util.Objects::nonNull).forEach(CausalLm::close);
    }

    /** With comparator_generation_mode centralized: how the joint prompt is built and its completion split (§7.5). */
    void centralizedAdapter(comlrl.trainers.reinforce.CentralizedAdapter adapter) {
        this.adapter = java.util.Objects.requireNonNull(adapter, "centralized adapter");
    }

    /**
     * A resumed run writes into {@code resumeOutput} (its {@code resume-*} subdirectory): a replay
     * directory inside the output directory moves there, so the earlier run's shards stay as they
     * were (the checkpoint's shards are restored into the new one). Policy checkpoints stay where
     * they are: the history comparator reads the earlier ones.
     */
    void followOutput(Path resumeOutput) {
        if (replayInOutput && resumeOutput != null) {
            replayDir = resumeOutput.resolve("preference_replay");
        }
    }

    Path replayDir() {
        return replayDir;
    }

    /** Where policy checkpoints go, or null when none are written. */
    Path policyDir() {
        return policyDir;
    }

    /**
     * Steps 1–3 of iteration {@code iteration}: the comparator's and the current policy's candidates
     * ranked into pairs by {@code collector}, written as the iteration's shard, and the training pairs
     * drawn from the shards by {@code preference_replay_mode}, re-tokenised.
     */
    Iteration collect(int iteration, List<CausalLm> agents, PreferenceCollector collector, TaskSet items) {
        PreferenceCollector.Round round;
        // a ddp run: the comparator is rank 0's (the collector asks it there and sends its candidates), or
        // with the agents split every process's, for the agents it holds (an API comparator: rank 0's)
        boolean here = work.isMain() || byAgent() && args.comparatorPolicy() != ComparatorPolicy.API;
        try (ComparatorSource comparator = here ? comparatorFor(iteration, agents) : ELSEWHERE) {
            // the pairing rule is the iterative config's (the trainer's own config keeps MADPO's defaults)
            round = collector.collectAgainst(items, comparator, args.comparatorNumCandidates(), comparatorSeeds,
                    args.pairSelection(), args.preferencePairsPerSample());
        }
        if (work.isMain()) {
            PreferenceReplay.writeShard(replayDir, iteration, round.records());
        }
        shards.put(iteration, List.copyOf(round.records()));
        List<List<PreferenceReplay.ReplayRecord>> records = new ArrayList<>(shards.headMap(iteration, true).values());
        int lastNonEmpty = 0;
        for (List<PreferenceReplay.ReplayRecord> r : records) {
            lastNonEmpty = r.isEmpty() ? lastNonEmpty : r.size();
        }
        double[] weights = PreferenceReplay.shardWeights(args.preferenceReplayMode(), records.size(),
                args.preferenceReplayK(), args.preferenceReplayLambda());
        int size = PreferenceReplay.sampleSize(args.preferenceReplaySampleSize(), round.records().size(), lastNonEmpty);
        List<PreferenceReplay.ReplayRecord> sampled = PreferenceReplay.sample(records, weights, size,
                new Random(replaySeeds.next()));
        return new Iteration(round, collector.fromRecords(sampled));
    }

    /**
     * After the iteration's training: logs the {@code iter/*} metrics (and reward histograms, with
     * their files in {@code outputDir}) at {@code envStep}, prints a line, saves the policy checkpoint.
     */
    void finish(int iteration, Iteration it, MetricsLogger logger, long envStep, PrintStream console, Path outputDir,
            Trainer trainer) {
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
        logger.log(envStep, metrics);
        if (work.isMain()) {
            console.printf(Locale.ROOT, "Iteration %d/%d: %d new pairs (current reward %.4f vs comparator %.4f), trained "
                    + "on %d%n", iteration, args.numIterations(), round.records().size(), mean(round.currentRewards()),
                    mean(round.comparatorRewards()), it.training().size());
        }
        savePolicies(trainer, iterationName(iteration));
    }

    /**
     * The iteration loop: iterations {@code done+1 .. num_iterations}, each run by {@code iteration},
     * with {@code trainer}'s checkpoint every {@code checkpointInterval} iterations and after the
     * last; the initial policy is saved first when none is done. Prints why nothing is trained when
     * every iteration is already done.
     */
    void runIterations(int done, Path checkpointDir, int checkpointInterval, PrintStream console, Trainer trainer,
            java.util.function.IntConsumer iteration) {
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
            saveInitial(trainer);
        }
        for (int i = done + 1; i <= args.numIterations(); i++) {
            iteration.accept(i);
            if (checkpointDir != null && (i % checkpointInterval == 0 || i == args.numIterations())) {
                trainer.saveCheckpoint(checkpointDir);
            }
        }
    }

    /** Before iteration 1: the initial policy, when policy checkpoints are written. */
    void saveInitial(Trainer trainer) {
        savePolicies(trainer, "initial");
    }

    private void savePolicies(Trainer trainer, String name) {
        if (policyDir != null) {
            trainer.saveModel(policyDir.resolve(name));
        }
    }

    private static String iterationName(int iteration) {
        return PreferenceReplay.shardName(iteration).replace(".json", "");
    }

    private static double[] doubles(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static double mean(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).filter(Double::isFinite).average().orElse(0);
    }

    /** The comparator of the other processes of a ddp run: rank 0's generates (never asked). */
    private static final ComparatorSource ELSEWHERE = (item, promptTexts, promptIds, n, seeds) -> {
        throw new IllegalStateException("the comparator generates on rank 0");
    };

    /** The comparator of iteration {@code iteration} (1-based). */
    ComparatorSource comparatorFor(int iteration, List<CausalLm> agents) {
        ComparatorSource source = switch (args.comparatorPolicy()) {
            case CURRENT -> frozen(agents, false, true);
            case CURRENT_COPY -> currentCopy(agents);
            case MODEL -> frozen(fixedComparators, false, false);
            case HISTORY -> frozen(loadHistory(iteration, agents), true, true);
            case API -> apiSource();
        };
        // with centralized collaboration the one actor's prompt is already the adapter's joint prompt
        boolean jointPrompt = args.comparatorGenerationMode() == comlrl.utils.CollaborationMode.CENTRALIZED
                && args.collaborationMode() != comlrl.utils.CollaborationMode.CENTRALIZED;
        return jointPrompt ? centralized(source) : source;
    }

    /**
     * Centralized comparator generation (reference §7.4, §7.5): agent
     * {@code comparator_centralized_agent_index} of {@code perAgent} answers the adapter's joint prompt
     * {@code build_prompt(item, [formatter_i(item)])} {@code n} times; each completion is split by
     * {@code parse_completion} into the N roles' outputs (exactly N; a completion the adapter cannot
     * parse gives N empty outputs).
     */
    private ComparatorSource centralized(ComparatorSource perAgent) {
        int j = args.comparatorCentralizedAgentIndex();
        return new ComparatorSource() {
            @Override
            public List<List<String>> generate(TaskItem item, List<String> promptTexts, List<long[]> promptIds, int n,
                    long[] seeds) {
                int roles = promptTexts.size();
                if (perAgent.perProcess() && !work.ownsAgent(j)) { // the agents split: agent j's process answers
                    return java.util.Collections.nCopies(roles, null);
                }
                String prompt = adapter.buildPrompt(item, List.copyOf(promptTexts));
                List<String> joint = perAgent.generateOne(j, item, prompt, n, seeds[j]);
                List<List<String>> out = new ArrayList<>();
                for (int r = 0; r < roles; r++) {
                    out.add(new ArrayList<>());
                }
                for (String completion : joint) {
                    List<String> parts;
                    try {
                        parts = adapter.parseCompletion(completion, item, roles);
                    } catch (RuntimeException e) {
                        parts = java.util.Collections.nCopies(roles, "");
                    }
                    if (parts == null || parts.size() != roles) {
                        throw new IllegalArgumentException("the centralized adapter split a comparator completion into "
                                + (parts == null ? "null" : parts.size() + " parts") + "; it must return exactly " + roles
                                + " strings (one per role)");
                    }
                    for (int r = 0; r < roles; r++) {
                        out.get(r).add(parts.get(r));
                    }
                }
                return out;
            }

            @Override
            public boolean perProcess() {
                return perAgent.perProcess();
            }

            @Override
            public void close() {
                perAgent.close();
            }
        };
    }

    /**
     * The API comparator: per agent one call for {@code n} completions of its prompt text, with the
     * item's fields and this config's sampling settings (the service's own randomness is not ours to seed).
     */
    private ComparatorSource apiSource() {
        ApiComparator.Sampling sampling = new ApiComparator.Sampling(args.maxNewTokens(), args.temperature(), args.topP(),
                args.topK());
        return new ComparatorSource() {
            @Override
            public List<List<String>> generate(TaskItem item, List<String> promptTexts, List<long[]> promptIds, int n,
                    long[] seeds) {
                List<List<String>> out = new ArrayList<>();
                for (int i = 0; i < promptTexts.size(); i++) {
                    out.add(api.generate(promptTexts.get(i), i, n, item.asMap(), sampling));
                }
                return out;
            }

            @Override
            public List<String> generateOne(int agent, TaskItem item, String prompt, int n, long seed) {
                return api.generate(prompt, agent, n, item.asMap(), sampling);
            }
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
            same &= agents.get(i) == null || agents.get(i).model().device().equals(devices.get(i));
        }
        if (same) {
            return frozen(agents, false, true);
        }
        List<CausalLm> copies = new ArrayList<>();
        for (int i = 0; i < agents.size(); i++) { // null for another process's agent (the agents split)
            CausalLm a = agents.get(i);
            copies.add(a == null ? null
                    : new CausalLm(a.source(), a.model().frozenCopy(devices.get(i)), a.tokenizer(), a.generationConfig()));
        }
        return frozen(copies, true, true);
    }

    /**
     * The policy saved after iteration {@code iteration − comparator_history_k}; when that one is
     * missing, the newest saved before it; else the initial policy.
     */
    private List<CausalLm> loadHistory(int iteration, List<CausalLm> agents) {
        Path dir = historyDirectory(policyDir, iteration, args.comparatorHistoryK());
        List<CausalLm> out = new ArrayList<>();
        try {
            for (int i = 0; i < agents.size(); i++) { // each process the agents it holds (it saved them)
                out.add(agents.get(i) == null ? null : CausalLm.load(dir.resolve("agent_" + i).toString(),
                        agents.get(i).model().dtype(), agents.get(i).model().device()));
            }
        } catch (RuntimeException | Error e) {
            closeAll(out);
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
            settings.add(models.get(i) == null ? null : AgentGeneration.resolve(i, models.get(i), args.generationKwargs(),
                    args.temperature(), args.topP(), args.topK(), args.maxNewTokens(), n));
        }
        return new ComparatorSource() {
            @Override
            public List<List<String>> generate(TaskItem item, List<String> promptTexts, List<long[]> promptIds, int count,
                    long[] seeds) {
                List<List<String>> out = new ArrayList<>();
                for (int i = 0; i < models.size(); i++) {
                    if (models.get(i) == null) { // the agents split: another process's agent
                        out.add(null);
                        continue;
                    }
                    // a comparator model of its own may have another tokenizer: it encodes the prompt itself
                    long[] ids = agentsTokens ? promptIds.get(i) : models.get(i).encode(promptTexts.get(i));
                    List<Completion> c = models.get(i).generator().generate(List.of(ids), settings.get(i).sampling(),
                            seeds[i]).get(0);
                    out.add(c.stream().map(Completion::text).toList());
                }
                return out;
            }

            @Override
            public List<String> generateOne(int agent, TaskItem item, String prompt, int n, long seed) {
                CausalLm model = models.get(agent);
                GenerationSettings.Resolved joint = AgentGeneration.resolve(agent, model, args.generationKwargs(),
                        args.temperature(), args.topP(), args.topK(), args.maxNewTokens(), n);
                return model.generator().generate(List.of(model.encode(prompt)), joint.sampling(), seed).get(0).stream()
                        .map(Completion::text).toList();
            }

            @Override
            public boolean perProcess() {
                return byAgent();
            }

            @Override
            public void close() {
                if (owned) {
                    closeAll(models);
                }
            }
        };
    }

    // ------------------------------------------------------------------ checkpoints

    /**
     * The replay shards written up to {@code iterationsDone}, the seed streams and, with the history
     * comparator, the policy snapshots it will read ({@link #historySnapshots}), for the checkpoints
     * of the trainer {@code algorithm}; restoring rewrites the replay directory from them (a shard
     * written after the checkpoint is removed, to be written again).
     */
    TrainerCheckpoint.Extension extension(String algorithm, IntSupplier iterationsDone) {
        TrainerCheckpoint.Part replay = new TrainerCheckpoint.Part() {
            @Override
            public void save(Path dir) {
                Path to = dir.resolve("preference_replay");
                shards.headMap(iterationsDone.getAsInt(), true).forEach((i, r) -> PreferenceReplay.writeShard(to, i, r));
            }

            @Override
            public void restore(Path dir) {
                Path from = dir.resolve("preference_replay");
                List<PreferenceReplay.Shard> saved = Files.isDirectory(from) ? PreferenceReplay.listShards(from) : List.of();
                shards.clear();
                if (!work.isMain()) { // a ddp run: rank 0 rewrites the replay directory
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
        Map<String, TrainerCheckpoint.Part> parts = new LinkedHashMap<>();
        parts.put("preference_replay", replay);
        if (args.comparatorPolicy() == ComparatorPolicy.HISTORY) {
            parts.put(HISTORY_DIR, historySnapshots(iterationsDone));
        }
        return new TrainerCheckpoint.Extension(algorithm, parts, Map.of("iteration_progress", progress));
    }

    /** Where a checkpoint keeps the policy snapshots the history comparator will read ({@link #historySnapshots}). */
    static final String HISTORY_DIR = "policy_history";

    /**
     * The policy snapshots that the history comparator of the iterations after the checkpoint reads
     * and that were saved before it: iteration i &gt; done compares against
     * {@link #historyDirectory}(i, k), saved by then when i − k ≤ done, i.e. for i in done+1 .. done+k
     * (at most k snapshots; {@code initial} among them while done &lt; k). Stored as
     * {@code policy_history/<snapshot>/agent_j/}, and written back into the policy directory on
     * restore, so a resumed run compares against the same policies wherever its policy directory is
     * (a fresh output directory included). Rank 0 copies them (every process saved its agents there
     * first); on restore every process waits until they are back.
     */
    private TrainerCheckpoint.Part historySnapshots(IntSupplier iterationsDone) {
        return new TrainerCheckpoint.Part() {
            @Override
            public void save(Path dir) {
                if (!work.isMain()) {
                    return;
                }
                int done = iterationsDone.getAsInt();
                java.util.Set<Path> needed = new java.util.LinkedHashSet<>();
                for (int i = done + 1; i <= done + args.comparatorHistoryK(); i++) {
                    needed.add(historyDirectory(policyDir, i, args.comparatorHistoryK()));
                }
                for (Path snapshot : needed) {
                    for (Path agent : agentDirs(snapshot)) {
                        comlrl.checkpoint.Checkpoints.copyTree(agent, dir.resolve(HISTORY_DIR)
                                .resolve(snapshot.getFileName().toString()).resolve(agent.getFileName().toString()));
                    }
                }
            }

            @Override
            public void restore(Path dir) {
                Path saved = dir.resolve(HISTORY_DIR);
                if (work.isMain() && Files.isDirectory(saved)) {
                    for (Path snapshot : subdirectories(saved)) {
                        for (Path agent : agentDirs(snapshot)) {
                            comlrl.checkpoint.Checkpoints.copyTree(agent, policyDir
                                    .resolve(snapshot.getFileName().toString()).resolve(agent.getFileName().toString()));
                        }
                    }
                }
                work.barrier(); // the agents split: each process loads its own agents' snapshots from there
            }
        };
    }

    /** The {@code agent_j} directories of a policy snapshot (none when it was not saved). */
    private static List<Path> agentDirs(Path snapshot) {
        return subdirectories(snapshot).stream().filter(d -> d.getFileName().toString().startsWith("agent_")).toList();
    }

    private static List<Path> subdirectories(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (java.util.stream.Stream<Path> s = Files.list(dir)) {
            return s.filter(Files::isDirectory).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot list " + dir + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        closeAll(fixedComparators);
        if (api != null) {
            api.close();
        }
    }
}
