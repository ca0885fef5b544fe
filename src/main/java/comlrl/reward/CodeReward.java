package comlrl.reward;

import comlrl.data.TaskItem;
import comlrl.sandbox.ExecutionResult;
import comlrl.sandbox.Job;
import comlrl.sandbox.SandboxConfig;
import comlrl.sandbox.Status;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The level reward of two-agent code generation (config {@code type: code}), as CoMLRL's code environment
 * defines it: agent 0 writes a helper function {@code aux}, agent 1 the task's entry-point function, which
 * may call it. The two functions (after the import lines of the task's prompt) form one program, run with
 * the task's tests in a {@link comlrl.sandbox.Sandbox}; all K joint responses of a call run at once on its worker pool.
 * With weights w (defaults in brackets, CoMLRL's), a joint response earns:
 * <pre>
 *   level 1, definitions:  aux defined with a return statement                          + w.auxDefined   [0.4]
 *                          main (the entry point) defined with a return statement       + w.mainDefined  [0.6]
 *                          (stop here when main is not)
 *   level 2, syntax:       the program parses                                           + w.syntax       [0.5]
 *                          (stop here when it does not)
 *   level 3, tests:        p of n asserts pass (0 unless the program ran to its end)    + w.tests · p/n  [1.0]
 *   bonuses (only when p > 0 and aux is defined):
 *                          main calls aux                                               + w.usesAux      [0.5]
 *                          ...and main is not a mere wrapper of aux                     + w.notWrapper   [1.0]
 *                          ...and main has a bare call aux(...) whose value is dropped  − w.ignoredAux   [0.5]
 * </pre>
 * With the defaults the reward lies in [0, 4]. "Defined" means: a line {@code def NAME(} and the lines
 * indented under it ({@link CodePrograms#function}) hold {@code return} followed by a blank; a wrapper is a
 * body that is only {@code return ...aux...}, or {@code v = aux(...)} then {@code return v}
 * ({@link CodePrograms#isWrapper}). Tests come from the task's {@code test} + {@code entry_point}
 * (HumanEval's {@code check(candidate)}) or {@code test_list} (MBPP), see {@link CodePrograms#tests}.
 *
 * <p>Differences from the Python code: the tests run in one sandboxed process per joint response, under its
 * wall-time limit for all of them (not 10 s per assert), and a run that does not end normally (timeout,
 * memory limit, killed, an exception while defining the functions) scores 0 at level 3 and earns no bonus,
 * where the Python code keeps the asserts passed before a timeout; a dropped {@code aux(...)} value is
 * found for any arguments (the Python pattern only matches one-character arguments). A task without an
 * {@code entry_point} field (MBPP) names its function only in its tests; there the main agent's function
 * is the last one it defines other than {@code aux}, and the program binds the tests' name to it.
 * A sandbox that fails to run a program at all gives 0 for levels 2 and 3 of that joint response; training
 * goes on. The reward owns its sandbox: {@link #close()} it when training ends.
 */
public final class CodeReward implements RewardFunction, AutoCloseable {
    /**
     * The weight of each level and bonus; see the class comment. Each must be finite and at least 0.
     *
     * @param auxDefined  aux defined with a return [0.4]
     * @param mainDefined the entry point defined with a return [0.6]
     * @param syntax      the combined program parses [0.5]
     * @param tests       times the fraction of asserts passed [1.0]
     * @param usesAux     main calls aux [0.5]
     * @param notWrapper  main calls aux and is not a mere wrapper of it [1.0]
     * @param ignoredAux  subtracted when main calls aux and drops its value [0.5]
     */
    public record Weights(double auxDefined, double mainDefined, double syntax, double tests, double usesAux,
            double notWrapper, double ignoredAux) {
        /** CoMLRL's weights (maximum 4.0). */
        public static final Weights DEFAULT = new Weights(0.4, 0.6, 0.5, 1.0, 0.5, 1.0, 0.5);
        /** The config keys, in the record's order. */
        public static final List<String> KEYS = List.of("aux_defined", "main_defined", "syntax", "tests", "uses_aux",
                "not_wrapper", "ignored_aux");

        public Weights {
            double[] all = {auxDefined, mainDefined, syntax, tests, usesAux, notWrapper, ignoredAux};
            for (int i = 0; i < all.length; i++) {
                if (!Double.isFinite(all[i]) || all[i] < 0) {
                    throw new IllegalArgumentException("reward code weights." + KEYS.get(i)
                            + " must be a finite number >= 0, got " + all[i]);
                }
            }
        }

        /** These weights with the given config keys replaced ({@code {tests: 2.0}}). */
        public Weights with(Map<String, Double> given) {
            for (String key : given.keySet()) {
                if (!KEYS.contains(key)) {
                    throw new IllegalArgumentException("reward code weights: unknown key '" + key + "'; keys: " + KEYS);
                }
            }
            return new Weights(given.getOrDefault("aux_defined", auxDefined), given.getOrDefault("main_defined", mainDefined),
                    given.getOrDefault("syntax", syntax), given.getOrDefault("tests", tests),
                    given.getOrDefault("uses_aux", usesAux), given.getOrDefault("not_wrapper", notWrapper),
                    given.getOrDefault("ignored_aux", ignoredAux));
        }

        /** The highest reward: every level and bonus, no penalty. */
        public double max() {
            return auxDefined + mainDefined + syntax + tests + usesAux + notWrapper;
        }
    }

    /**
     * The parts of one joint response's reward; {@link #total()} is the reward.
     *
     * @param levelsPassed 0 (main not defined), 1 (syntax error), 2 (parsed), 3 (ran: tests counted)
     * @param status       the sandbox's verdict, or null when the program was not run
     * @param message      the sandbox's message (the first failing assert, the error line), "" when none
     */
    public record Breakdown(double definitions, double syntax, double tests, double bonus, int levelsPassed,
            int testsPassed, int testsTotal, Status status, String message) {
        public double total() {
            return definitions + syntax + tests + bonus;
        }

        /** Whether every test passed (the pass@k criterion). */
        public boolean solved() {
            return CodeRuns.solved(status, testsPassed, testsTotal);
        }
    }

    private final Weights weights;
    private final boolean runAll;
    private final CodeRuns runs;

    /** A reward with {@code weights} whose programs run in a sandbox of {@code sandboxConfig} (checked here). */
    public CodeReward(Weights weights, SandboxConfig sandboxConfig) {
        this(weights, sandboxConfig, false);
    }

    /**
     * As {@link #CodeReward(Weights, SandboxConfig)}; with {@code runAll} every joint response runs in the
     * sandbox, also those stopped at level 1 (main's text is run as written). The reward is the same; only the
     * work differs: a model that does not yet write the function (a random one) still exercises the sandbox.
     */
    public CodeReward(Weights weights, SandboxConfig sandboxConfig, boolean runAll) {
        this.weights = Objects.requireNonNull(weights, "weights");
        this.runAll = runAll;
        this.runs = new CodeRuns(sandboxConfig);
    }

    /**
     * The reward of a config section {@code {type: code, weights: {...}, sandbox: {...}}}: {@code weights}
     * replaces any of {@link Weights#KEYS} (defaults {@link Weights#DEFAULT}); {@code sandbox} sets
     * {@code isolation} ({@code namespaces}, the default, or the weaker {@code process}), {@code timeout_s}
     * (wall and CPU time of one program with all its tests; default 10), {@code memory_mb} (default 1024)
     * and {@code parallelism} (programs at once; default the number of cores); {@code run_all: true} runs
     * every joint response (see {@link #CodeReward(Weights, SandboxConfig, boolean)}; default false).
     */
    public static CodeReward fromConfig(Map<String, Object> map) {
        comlrl.utils.ConfigMaps.requireKnownKeys("reward code", map, List.of("type", "weights", "sandbox", "run_all"), Map.of(
                "timeout_s", "put it in the sandbox section: sandbox: {timeout_s: 10}.",
                "isolation", "put it in the sandbox section: sandbox: {isolation: process}."));
        Map<String, Double> given = new LinkedHashMap<>();
        CodeRuns.section("reward code", map, "weights").forEach((key, value) -> given.put(key,
                comlrl.utils.ConfigMaps.toDouble("reward code weights", key, value)));
        Weights weights = Weights.DEFAULT.with(given);
        SandboxConfig box = CodeRuns.config("reward code", CodeRuns.section("reward code", map, "sandbox"));
        boolean runAll = map.get("run_all") != null
                && comlrl.utils.ConfigMaps.toBoolean("reward code", "run_all", map.get("run_all"));
        return new CodeReward(weights, box, runAll);
    }

    public Weights weights() {
        return weights;
    }

    @Override
    public List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        return breakdowns(agentCompletions, batchItems).stream().map(Breakdown::total).toList();
    }

    /** Every level of each joint response; the programs of all of them run at once. */
    public List<Breakdown> breakdowns(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        if (agentCompletions.size() != 2) {
            throw new IllegalArgumentException("code reward needs 2 agents (aux helper, main function), got "
                    + agentCompletions.size() + "; set num_agents: 2");
        }
        int k = RewardFunctions.jointResponseCount(agentCompletions);
        List<Candidate> candidates = new ArrayList<>(k);
        List<Job> jobs = new ArrayList<>();
        for (int j = 0; j < k; j++) {
            Candidate c = candidate(agentCompletions.get(0).get(j), agentCompletions.get(1).get(j),
                    RewardFunctions.itemFor(batchItems, j, k));
            candidates.add(c);
            if (c.job != null) {
                jobs.add(c.job);
            }
        }
        List<ExecutionResult> results = runs.run(jobs);
        List<Breakdown> breakdowns = new ArrayList<>(k);
        int next = 0;
        for (Candidate c : candidates) {
            ExecutionResult r = c.job == null ? null : results.get(next++);
            breakdowns.add(c.mainDefined ? levels(c, r) : new Breakdown(c.definitions, 0, 0, 0, 0, 0, 0,
                    r == null ? null : r.status(), "main function not defined"));
        }
        return breakdowns;
    }

    /** Level 1 and the program to run (null when main is not defined and not every response runs). */
    private record Candidate(double definitions, boolean mainDefined, String aux, String main, Job job) {}

    private Candidate candidate(String auxCompletion, String mainCompletion, TaskItem item) {
        String entryPoint = CodePrograms.entryPoint(item);
        boolean named = item.get("entry_point") instanceof String s && !s.isBlank();
        String mainName = named ? entryPoint : CodePrograms.lastFunctionName(mainCompletion, CodePrograms.AUX);
        String aux = CodePrograms.function(auxCompletion, CodePrograms.AUX);
        String main = mainName == null ? "" : CodePrograms.function(mainCompletion, mainName);
        double definitions = (CodePrograms.hasReturn(aux) ? weights.auxDefined() : 0.0);
        boolean mainDefined = !main.isEmpty() && CodePrograms.hasReturn(main);
        if (!mainDefined && !runAll) {
            return new Candidate(definitions, false, aux, main, null);
        }
        if (mainDefined) {
            definitions += weights.mainDefined();
        }
        List<String> parts = new ArrayList<>();
        String imports = CodePrograms.imports(item.get("prompt") instanceof String p ? p : "");
        if (!imports.isEmpty()) {
            parts.add(imports);
        }
        if (!aux.isEmpty()) {
            parts.add(aux);
        }
        parts.add(mainDefined ? main : CodePrograms.withoutFences(mainCompletion)); // run_all: main's text as written
        if (mainDefined && !mainName.equals(entryPoint)) {
            parts.add(entryPoint + " = " + mainName); // MBPP: the tests' name for the main agent's function
        }
        return new Candidate(definitions, mainDefined, aux, main, new Job(String.join("\n\n", parts) + "\n",
                CodePrograms.tests(item, entryPoint)));
    }

    /** Levels 2, 3 and the bonuses from the sandbox's verdict. */
    private Breakdown levels(Candidate c, ExecutionResult r) {
        if (r == null) {
            return new Breakdown(c.definitions, 0, 0, 0, 1, 0, 0, null, "the sandbox could not run the program");
        }
        boolean testsUnreadable = r.status() == Status.SYNTAX_ERROR && r.message().startsWith("tests:");
        if (r.status() == Status.SYNTAX_ERROR && !testsUnreadable) {
            return new Breakdown(c.definitions, 0, 0, 0, 1, 0, r.testsTotal(), r.status(), r.message());
        }
        int passed = r.status() == Status.OK ? r.testsPassed() : 0;
        double tests = r.testsTotal() > 0 ? weights.tests() * passed / r.testsTotal() : 0.0;
        double bonus = 0.0;
        if (passed > 0 && !c.aux.isEmpty() && CodePrograms.usesAux(c.main)) {
            bonus += weights.usesAux();
            if (!CodePrograms.isWrapper(c.main)) {
                bonus += weights.notWrapper();
            }
            if (CodePrograms.ignoresAux(c.main)) {
                bonus -= weights.ignoredAux();
            }
        }
        return new Breakdown(c.definitions, weights.syntax(), tests, bonus, testsUnreadable ? 2 : 3, passed,
                r.testsTotal(), r.status(), r.message());
    }

    /**
     * The unbiased pass@k estimate from n samples of which c solved the task (all tests passed):
     * <pre>
     *   pass@k = 1 − C(n − c, k) / C(n, k) = 1 − ∏_{i = n − c + 1}^{n} (1 − k / i)      (1 when n − c &lt; k)
     * </pre>
     * (the product form avoids large binomials). The mean over tasks is the set's pass@k; pass@1 = c / n.
     */
    public static double passAtK(int n, int c, int k) {
        if (n < 1 || c < 0 || c > n || k < 1 || k > n) {
            throw new IllegalArgumentException("pass@k needs 1 <= k <= n and 0 <= c <= n, got n=" + n + ", c=" + c
                    + ", k=" + k);
        }
        if (n - c < k) {
            return 1.0;
        }
        double allFail = 1.0;
        for (int i = n - c + 1; i <= n; i++) {
            allFail *= 1.0 - (double) k / i;
        }
        return 1.0 - allFail;
    }

    /**
     * Programs run so far and the wall time spent waiting for them:
     * {@code {executions, sandbox_seconds, executions_per_second}} (cached verdicts count as executions).
     */
    public Map<String, Double> stats() {
        return runs.stats();
    }

    /** The reward lies in [min(0, usesAux − ignoredAux), {@link Weights#max()}] ([0, 4] with the defaults). */
    @Override
    public double[] rewardRange() {
        return new double[] {Math.min(0.0, weights.usesAux() - weights.ignoredAux()), weights.max()};
    }

    /** Stops the sandbox's workers, logging {@link #stats()} (level INFO) when programs ran. */
    @Override
    public void close() {
        runs.close();
    }

    @Override
    public String toString() {
        return "CodeReward(" + weights + ")";
    }
}
