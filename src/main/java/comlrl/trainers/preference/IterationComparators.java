package comlrl.trainers.preference;

import comlrl.data.TaskItem;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.GenerationSettings;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.trainers.Devices;
import comlrl.trainers.common.AgentGeneration;
import comlrl.trainers.common.TrainerParts;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.api.ApiComparator;
import comlrl.generation.api.ApiComparatorSettings;
import comlrl.trainers.reinforce.CentralizedAdapter;
import comlrl.checkpoint.TrainerCheckpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * The comparator of each iteration of an iterative trainer (reference §7.4, {@code comparator_policy}):
 * {@code current} samples the live agents from the comparator's own seed stream; {@code current_copy}
 * the same (frozen copies on {@code comparator_devices} when those differ from the agents' devices);
 * {@code model} frozen models loaded once; {@code history} the policy saved after iteration
 * {@code idx − comparator_history_k}; {@code api} an HTTP service ({@link ApiComparator}). With
 * {@code comparator_generation_mode: centralized} one of them answers the adapter's joint prompt.
 */
final class IterationComparators implements AutoCloseable {
    private final IterativePreferenceConfig args;
    /** Where the policies are saved (the history comparator reads them); null when none are. */
    private final Path policyDir;
    private final ApiComparator api;
    /** comparator_policy model: the frozen comparators of this process's agents; else null. */
    private HeldAgents<CausalLm> fixedComparators;
    /** comparator_generation_mode centralized: builds the joint prompt and splits its completion (§7.5). */
    private final CentralizedAdapter adapter;
    /** A ddp run: the comparator generates on rank 0, or in the agents split per process (API: rank 0). */
    private RankWork work = RankWork.single(0);

    /** Checks the API comparator's settings and key (before any model loads); {@code adapter} null for the tagged one. */
    IterationComparators(IterativePreferenceConfig args, Path policyDir, CentralizedAdapter adapter) {
        this.args = args;
        this.policyDir = policyDir;
        this.adapter = adapter != null ? adapter : new comlrl.trainers.reinforce.TaggedCentralizedAdapter();
        this.api = args.comparatorPolicy() == ComparatorPolicy.API
                ? new ApiComparator(ApiComparatorSettings.fromMap(args.comparatorApiFields())) : null;
        for (int i = 0; api != null && i < args.numAgents(); i++) {
            api.check(apiSampling(i)); // e.g. more stop strings than the API takes
        }
    }

    /** Agent i's sampling settings, sent to the API comparator. */
    private ApiComparator.Sampling apiSampling(int i) {
        return new ApiComparator.Sampling(args.maxNewTokens(i), args.temperature(i), args.topP(i), args.topK(i),
                args.stopStrings(i));
    }

    /**
     * Takes a ddp run's processes and, with comparator_policy model, loads the frozen comparators on
     * comparator_devices or the agents' devices (where they generate: rank 0, or per process).
     */
    void loadFixedComparators(RankWork work, HeldAgents<CausalLm> agents, DType dtype) {
        this.work = work;
        if (args.comparatorPolicy() != ComparatorPolicy.MODEL || !work.isMain() && !byAgent()) {
            return;
        }
        List<String> sources = args.comparatorAgents() != null ? args.comparatorAgents()
                : java.util.Collections.nCopies(agents.size(), args.comparatorModelName());
        List<Device> devices = args.comparatorDevices() == null ? null
                : Devices.resolve(args.comparatorDevices(), agents.size(), "comparator_devices");
        this.fixedComparators = agents.open((i, a) -> CausalLm.load(sources.get(i), dtype,
                devices != null ? devices.get(i) : a.model().device()));
    }

    /** Whether this is a process of a ddp run with the agents split. */
    private boolean byAgent() {
        return work.distributed() && !work.splitsRows();
    }

    private static void closeAll(HeldAgents<CausalLm> models) {
        if (models != null) {
            models.values().forEach(CausalLm::close);
        }
    }

    /** The comparator of the other processes of a ddp run: rank 0's generates (never asked). */
    private static final ComparatorSource ELSEWHERE = (agent, item, prompt, n, seed) -> {
        throw new IllegalStateException("the comparator generates on rank 0");
    };

    /** The comparator of iteration {@code iteration} (1-based) in this process. */
    ComparatorSource forIteration(int iteration, HeldAgents<CausalLm> agents) {
        if (!work.isMain() && !(byAgent() && args.comparatorPolicy() != ComparatorPolicy.API)) {
            return ELSEWHERE;
        }
        ComparatorSource source = switch (args.comparatorPolicy()) {
            case CURRENT -> frozen(agents, false, true);
            case CURRENT_COPY -> currentCopy(agents);
            case MODEL -> frozen(fixedComparators, false, false);
            case HISTORY -> frozen(loadHistory(iteration, agents), true, true);
            // per agent one call for n completions of its prompt (not seeded by us)
            case API -> (agent, item, prompt, n, seed) -> api.generate(prompt, agent, n, item.asMap(),
                    apiSampling(agent));
        };
        // with centralized collaboration the one actor's prompt is already the adapter's joint prompt
        boolean jointPrompt = args.comparatorGenerationMode() == comlrl.utils.CollaborationMode.CENTRALIZED
                && args.collaborationMode() != comlrl.utils.CollaborationMode.CENTRALIZED;
        return jointPrompt ? centralized(source) : source;
    }

    /**
     * Centralized comparator generation (§7.4, §7.5): agent {@code comparator_centralized_agent_index}
     * answers the adapter's joint prompt {@code n} times; each completion is split into the roles' outputs.
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
                List<List<String>> split = perAgent.generateOne(j, item, prompt, n, seeds[j]).stream()
                        .map(c -> comlrl.trainers.reinforce.CentralizedMAGRPOTrainer.splitRoles(adapter, c, item, roles))
                        .toList(); // [n][roles]
                return java.util.stream.IntStream.range(0, roles)
                        .mapToObj(r -> split.stream().map(parts -> parts.get(r)).toList()).toList();
            }

            @Override
            public List<String> generateOne(int agent, TaskItem item, String prompt, int n, long seed) {
                return perAgent.generateOne(agent, item, prompt, n, seed);
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

    /** The live agents, or frozen copies of them on comparator_devices when those differ from the agents'. */
    private ComparatorSource currentCopy(HeldAgents<CausalLm> agents) {
        if (args.comparatorDevices() == null) {
            return frozen(agents, false, true);
        }
        List<Device> devices = Devices.resolve(args.comparatorDevices(), agents.size(), "comparator_devices");
        if (agents.indices().stream().allMatch(i -> agents.get(i).model().device().equals(devices.get(i)))) {
            return frozen(agents, false, true);
        }
        return frozen(agents.open((i, a) -> new CausalLm(a.source(), a.model().frozenCopy(devices.get(i)), a.tokenizer(),
                a.generationConfig())), true, true);
    }

    /** The policy of {@link #historyDirectory}: each process loads the agents it holds (it saved them). */
    private HeldAgents<CausalLm> loadHistory(int iteration, HeldAgents<CausalLm> agents) {
        Path dir = historyDirectory(policyDir, iteration, args.comparatorHistoryK());
        return agents.open((i, a) -> CausalLm.load(dir.resolve("agent_" + i).toString(), a.model().dtype(),
                a.model().device()));
    }

    /**
     * The history comparator's directory for {@code iteration}: {@code iteration_(idx−k)}, else the
     * newest existing {@code iteration_j} with j &lt; idx − k, else {@code initial}.
     */
    static Path historyDirectory(Path policyDir, int iteration, int k) {
        for (int j = iteration - k; j >= 1; j--) {
            Path d = policyDir.resolve(snapshotName(j));
            if (Files.isDirectory(d)) {
                return d;
            }
        }
        return policyDir.resolve("initial");
    }

    /** The directory name of the policy saved after iteration {@code iteration}: {@code iteration_NNNN}. */
    static String snapshotName(int iteration) {
        return PreferenceReplay.shardName(iteration).replace(".json", "");
    }

    /**
     * A comparator sampling {@code models} for comparator_num_candidates.
     *
     * @param agentsTokens whether the models read the agents' prompt ids (copies and earlier states of
     *        the agents); else each encodes the prompt text with its own tokenizer
     */
    private ComparatorSource frozen(HeldAgents<CausalLm> models, boolean owned, boolean agentsTokens) {
        int n = args.comparatorNumCandidates();
        HeldAgents<GenerationSettings.Resolved> settings = models.mapIndexed((i, m) -> AgentGeneration.resolve(i, m, args, n));
        return new ComparatorSource() {
            @Override
            public List<List<String>> generate(TaskItem item, List<String> promptTexts, List<long[]> promptIds, int count,
                    long[] seeds) {
                // null for another process's agent (the agents split)
                List<List<String>> out = new ArrayList<>(java.util.Collections.nCopies(models.size(), null));
                boolean several = models.indices().size() > 1;
                for (int i : models.indices()) {
                    long[] ids = agentsTokens ? promptIds.get(i) : models.get(i).encode(promptTexts.get(i));
                    List<Completion> c = TrainerParts.ownGeneration(models.get(i), several, m -> m.generator()
                            .generate(List.of(ids), settings.get(i).sampling(), seeds[i]).get(0));
                    out.set(i, c.stream().map(Completion::text).toList());
                }
                return out;
            }

            @Override
            public List<String> generateOne(int agent, TaskItem item, String prompt, int n, long seed) {
                CausalLm model = models.get(agent);
                GenerationSettings.Resolved joint = AgentGeneration.resolve(agent, model, args, n);
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

    /** Where a checkpoint keeps the policy snapshots the history comparator will read. */
    static final String HISTORY_DIR = "policy_history";

    /**
     * The snapshots the history comparator reads after the checkpoint: {@link #historyDirectory}(i, k)
     * for i in done+1 .. done+k, stored as {@code policy_history/<snapshot>/agent_j/} and written back
     * into the policy directory on restore (by rank 0; every process waits until they are back).
     */
    TrainerCheckpoint.Part historySnapshots(IntSupplier iterationsDone) {
        return TrainerCheckpoint.Part.of(dir -> {
            if (!work.isMain()) {
                return;
            }
            int done = iterationsDone.getAsInt();
            java.util.Set<Path> needed = new java.util.LinkedHashSet<>();
            for (int i = done + 1; i <= done + args.comparatorHistoryK(); i++) {
                needed.add(historyDirectory(policyDir, i, args.comparatorHistoryK()));
            }
            copySnapshots(needed, dir.resolve(HISTORY_DIR));
        }, dir -> {
            Path saved = dir.resolve(HISTORY_DIR);
            if (work.isMain() && Files.isDirectory(saved)) {
                copySnapshots(subdirectories(saved), policyDir);
            }
            work.barrier(); // the agents split: each process loads its own agents' snapshots from there
        });
    }

    /** Copies each policy snapshot's {@code agent_j} directories to {@code to/<snapshot>/agent_j}. */
    private static void copySnapshots(java.util.Collection<Path> snapshots, Path to) {
        for (Path snapshot : snapshots) {
            for (Path agent : subdirectories(snapshot)) {
                if (!agent.getFileName().toString().startsWith("agent_")) {
                    continue;
                }
                comlrl.checkpoint.Checkpoints.copyTree(agent, to.resolve(snapshot.getFileName().toString())
                        .resolve(agent.getFileName().toString()));
            }
        }
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
