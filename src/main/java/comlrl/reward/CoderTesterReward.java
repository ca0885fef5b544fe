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
 * The reward of a coder + test-writer team (config {@code type: coder_tester}; the code environment's
 * {@code roles: coder_tester}): agent 0 writes the function the task names ({@code entry_point}), agent 1
 * writes assert tests for it from the task's description alone (it does not see the code). One scalar per
 * joint response, the sum of the coder's part and the tester's part. With weights w (defaults in brackets):
 * <pre>
 *   coder, against the task's hidden tests (as {@link CodeReward}'s main function, without aux):
 *     the entry point defined with a return statement                                  + w.codeDefined  [0.6]
 *     (stop here when it is not)
 *     the coder's program parses                                                        + w.codeSyntax   [0.5]
 *     p of n hidden asserts pass (0 unless the program ran to its end)                 + w.codeTests · p/n [1.0]
 *   tester, whose tests T are its top-level asserts calling the entry point ({@link CodePrograms#writtenTests}):
 *     T holds at least one assert and parses                                           + w.testsDefined [0.4]
 *     (stop here when it does not)
 *     v of m asserts of T pass on the task's reference solution                         + w.testsValid · v/m [1.0]
 *     (only when all m pass on the reference, i.e. T is valid:)
 *     T rejects the stub that returns None for every input ({@link CodePrograms#stub})  + w.catchesStub [0.5]
 *     T accepts the coder's program (ran to its end, every assert passed) exactly when
 *       it passes every hidden test (only when the coder's program parses)              + w.agrees       [1.0]
 * </pre>
 * With the defaults the reward lies in [0, 5]. "Rejects" means the run ended normally with an assert
 * failed; a run that times out or is killed neither accepts nor rejects. The reference solution is the
 * task's {@code prompt} + {@code canonical_solution} (HumanEval, CoopHumanEval, {@code builtin:code-tasks})
 * or its {@code code} ({@link CodePrograms#reference}); a task without either is refused, since validity could
 * not be judged. What the tester writes besides its asserts (prose, helper functions, its own definition of
 * the entry point, example calls) is dropped before anything runs, so it cannot make its tests pass by
 * defining the function they test. The gates make tautologies ({@code assert f(1) == f(1)}) worth only the
 * validity level: they accept the stub and every coder. Per joint response up to four programs run, all of
 * a call's together on the sandbox's pool: the coder's with the hidden tests, and the reference, the stub
 * and the coder's with T (identical pairs answered from the cache). The reward owns its sandbox:
 * {@link #close()} it when training ends.
 */
public final class CoderTesterReward implements RewardFunction, AutoCloseable {
    /**
     * The weight of each part; see the class comment. Each must be finite and at least 0.
     *
     * @param codeDefined  the entry point defined with a return [0.6]
     * @param codeSyntax   the coder's program parses [0.5]
     * @param codeTests    times the fraction of hidden asserts passed [1.0]
     * @param testsDefined the tester wrote at least one assert calling the entry point, and it parses [0.4]
     * @param testsValid   times the fraction of its asserts that pass on the reference solution [1.0]
     * @param catchesStub  its valid tests reject a function returning None [0.5]
     * @param agrees       its valid tests judge the coder's function as the hidden tests do [1.0]
     */
    public record Weights(double codeDefined, double codeSyntax, double codeTests, double testsDefined,
            double testsValid, double catchesStub, double agrees) {
        public static final Weights DEFAULT = new Weights(0.6, 0.5, 1.0, 0.4, 1.0, 0.5, 1.0);
        /** The config keys, in the record's order. */
        public static final List<String> KEYS = List.of("code_defined", "code_syntax", "code_tests", "tests_defined",
                "tests_valid", "catches_stub", "agrees");

        public Weights {
            double[] all = values(codeDefined, codeSyntax, codeTests, testsDefined, testsValid, catchesStub, agrees);
            for (int i = 0; i < all.length; i++) {
                if (!Double.isFinite(all[i]) || all[i] < 0) {
                    throw new IllegalArgumentException("reward coder_tester weights." + KEYS.get(i)
                            + " must be a finite number >= 0, got " + all[i]);
                }
            }
        }

        private static double[] values(double... v) {
            return v;
        }

        /** These weights with the given config keys replaced. */
        public Weights with(Map<String, Double> given) {
            for (String key : given.keySet()) {
                if (!KEYS.contains(key)) {
                    throw new IllegalArgumentException("reward coder_tester weights: unknown key '" + key + "'; keys: "
                            + KEYS);
                }
            }
            return new Weights(given.getOrDefault("code_defined", codeDefined),
                    given.getOrDefault("code_syntax", codeSyntax), given.getOrDefault("code_tests", codeTests),
                    given.getOrDefault("tests_defined", testsDefined), given.getOrDefault("tests_valid", testsValid),
                    given.getOrDefault("catches_stub", catchesStub), given.getOrDefault("agrees", agrees));
        }

        /** The highest reward, every part earned. */
        public double max() {
            return codeDefined + codeSyntax + codeTests + testsDefined + testsValid + catchesStub + agrees;
        }
    }

    /**
     * The parts of one joint response's reward; {@link #total()} is the reward.
     *
     * @param codeStatus     the sandbox's verdict on the coder's program with the hidden tests, or null when not run
     * @param testsWritten   m, the tester's asserts kept
     * @param testsValidOnReference v, of them those that passed on the reference solution
     * @param message        the first hidden test the coder's program failed (the sandbox's message), "" when none
     */
    public record Breakdown(double codeDefined, double codeSyntax, double codeTests, double testsDefined,
            double testsValid, double catchesStub, double agrees, int codeTestsPassed, int codeTestsTotal,
            Status codeStatus, int testsWritten, int testsValidOnReference, String message) {
        public double total() {
            return coder() + tester();
        }

        /** The coder's part: definition, syntax, hidden tests. */
        public double coder() {
            return codeDefined + codeSyntax + codeTests;
        }

        /** The tester's part: tests written, valid on the reference, rejecting the stub, agreeing on the coder. */
        public double tester() {
            return testsDefined + testsValid + catchesStub + agrees;
        }

        /** Whether the coder's function passed every hidden test (the pass@k criterion). */
        public boolean solved() {
            return CodeRuns.solved(codeStatus, codeTestsPassed, codeTestsTotal);
        }
    }

    private final Weights weights;
    private final boolean runAll;
    private final CodeRuns runs;

    /**
     * A reward with {@code weights} whose programs run in a sandbox of {@code sandboxConfig}; with
     * {@code runAll} the coder's text runs with the hidden tests also when it defines no entry point (the
     * reward is the same; see {@link CodeReward#CodeReward(CodeReward.Weights, SandboxConfig, boolean)}).
     */
    public CoderTesterReward(Weights weights, SandboxConfig sandboxConfig, boolean runAll) {
        this.weights = Objects.requireNonNull(weights, "weights");
        this.runAll = runAll;
        this.runs = new CodeRuns(sandboxConfig);
    }

    /**
     * The reward of a config section {@code {type: coder_tester, weights: {...}, sandbox: {...}, run_all}}:
     * {@code weights} replaces any of {@link Weights#KEYS}; {@code sandbox} and {@code run_all} as for
     * {@link CodeReward#fromConfig}.
     */
    public static CoderTesterReward fromConfig(Map<String, Object> map) {
        String owner = "reward coder_tester";
        comlrl.utils.ConfigMaps.requireKnownKeys(owner, map, List.of("type", "weights", "sandbox", "run_all"), Map.of(
                "timeout_s", "put it in the sandbox section: sandbox: {timeout_s: 10}."));
        Map<String, Double> given = new LinkedHashMap<>();
        CodeRuns.section(owner, map, "weights").forEach((key, value) -> given.put(key,
                comlrl.utils.ConfigMaps.toDouble(owner + " weights", key, value)));
        Weights weights = Weights.DEFAULT.with(given);
        SandboxConfig box = CodeRuns.config(owner, CodeRuns.section(owner, map, "sandbox"));
        boolean runAll = map.get("run_all") != null && comlrl.utils.ConfigMaps.toBoolean(owner, "run_all", map.get("run_all"));
        return new CoderTesterReward(weights, box, runAll);
    }

    public Weights weights() {
        return weights;
    }

    @Override
    public List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        return breakdowns(agentCompletions, batchItems).stream().map(Breakdown::total).toList();
    }

    /** The programs of one joint response (null where nothing runs) and its level-1 facts. */
    private record Plan(boolean codeDefined, String tests, Job hidden, Job onReference, Job onStub, Job onCode) {}

    /** Every part of each joint response; the programs of all of them run at once. */
    public List<Breakdown> breakdowns(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        if (agentCompletions.size() != 2) {
            throw new IllegalArgumentException("coder_tester reward needs 2 agents (coder, test writer), got "
                    + agentCompletions.size() + "; set num_agents: 2");
        }
        int k = RewardFunctions.jointResponseCount(agentCompletions);
        List<Plan> plans = new ArrayList<>(k);
        List<Job> jobs = new ArrayList<>();
        for (int j = 0; j < k; j++) {
            Plan p = plan(agentCompletions.get(0).get(j), agentCompletions.get(1).get(j),
                    RewardFunctions.itemFor(batchItems, j, k));
            plans.add(p);
            for (Job job : new Job[] {p.hidden, p.onReference, p.onStub, p.onCode}) {
                if (job != null) {
                    jobs.add(job);
                }
            }
        }
        List<ExecutionResult> results = runs.run(jobs);
        List<Breakdown> out = new ArrayList<>(k);
        int next = 0;
        for (Plan p : plans) {
            ExecutionResult[] r = new ExecutionResult[4];
            Job[] planned = {p.hidden, p.onReference, p.onStub, p.onCode};
            for (int i = 0; i < 4; i++) {
                r[i] = planned[i] == null ? null : results.get(next++);
            }
            out.add(levels(p, r[0], r[1], r[2], r[3]));
        }
        return out;
    }

    private Plan plan(String coderCompletion, String testerCompletion, TaskItem item) {
        if (!(item.get("entry_point") instanceof String named) || named.isBlank()) {
            throw new IllegalArgumentException("reward coder_tester needs tasks that name their function "
                    + "(an 'entry_point' field, as HumanEval's); the item has " + item.asMap().keySet());
        }
        String entryPoint = named.strip();
        String reference = CodePrograms.reference(item);
        if (reference == null) {
            throw new IllegalArgumentException("reward coder_tester judges the written tests on the task's reference "
                    + "solution: give each task a 'canonical_solution' (the body after its prompt, as HumanEval's) or a "
                    + "'code' field; the item has " + item.asMap().keySet());
        }
        String imports = CodePrograms.imports(item.get("prompt") instanceof String p ? p : "");
        String prefix = imports.isEmpty() ? "" : imports + "\n\n";
        String function = CodePrograms.function(coderCompletion, entryPoint);
        boolean defined = !function.isEmpty() && CodePrograms.hasReturn(function);
        String code = defined ? prefix + function + "\n"
                : runAll ? prefix + CodePrograms.withoutFences(coderCompletion) + "\n" : null;
        Job hidden = code == null ? null : new Job(code, CodePrograms.tests(item, entryPoint));
        String tests = CodePrograms.writtenTests(testerCompletion, entryPoint);
        boolean written = !tests.isEmpty();
        return new Plan(defined, tests, hidden, written ? new Job(reference, tests) : null,
                written ? new Job(prefix + CodePrograms.stub(entryPoint), tests) : null,
                written && defined ? new Job(code, tests) : null);
    }

    private Breakdown levels(Plan p, ExecutionResult hidden, ExecutionResult onReference, ExecutionResult onStub,
            ExecutionResult onCode) {
        boolean parsed = p.codeDefined && hidden != null
                && (hidden.status() != Status.SYNTAX_ERROR || hidden.message().startsWith("tests:"));
        int total = hidden == null ? 0 : hidden.testsTotal();
        int passed = parsed && hidden.status() == Status.OK ? hidden.testsPassed() : 0;
        boolean solved = passed > 0 && passed == total;
        double codeDefined = p.codeDefined ? weights.codeDefined() : 0.0;
        double codeSyntax = parsed ? weights.codeSyntax() : 0.0;
        double codeTests = total > 0 ? weights.codeTests() * passed / total : 0.0;
        String message = !p.codeDefined ? "function not defined" : hidden == null
                ? "the sandbox could not run the program" : hidden.message();
        int written = onReference == null ? 0 : onReference.testsTotal();
        boolean testsParse = written > 0 && onReference.status() != Status.SYNTAX_ERROR;
        int valid = testsParse && onReference.status() == Status.OK ? onReference.testsPassed() : 0;
        boolean allValid = testsParse && valid == written;
        double testsDefined = testsParse ? weights.testsDefined() : 0.0;
        double testsValid = testsParse ? weights.testsValid() * valid / written : 0.0;
        double catchesStub = allValid && rejects(onStub) ? weights.catchesStub() : 0.0;
        double agrees = allValid && parsed && onCode != null && accepts(onCode) == solved ? weights.agrees() : 0.0;
        return new Breakdown(codeDefined, codeSyntax, codeTests, testsDefined, testsValid, catchesStub, agrees, passed,
                total, hidden == null ? null : hidden.status(), written, valid, message);
    }

    /** The run ended normally with every assert passed. */
    private static boolean accepts(ExecutionResult r) {
        return r != null && r.status() == Status.OK && r.testsPassed() == r.testsTotal();
    }

    /** The run ended normally with an assert failed. */
    private static boolean rejects(ExecutionResult r) {
        return r != null && r.status() == Status.OK && r.testsPassed() < r.testsTotal();
    }

    /** The reward lies in [0, {@link Weights#max()}] ([0, 5] with the defaults). */
    @Override
    public double[] rewardRange() {
        return new double[] {0.0, weights.max()};
    }

    /** Programs run so far; see {@link CodeReward#stats()}. */
    public Map<String, Double> stats() {
        return runs.stats();
    }

    /** Stops the sandbox's workers. */
    @Override
    public void close() {
        runs.close();
    }

    @Override
    public String toString() {
        return "CoderTesterReward(" + weights + ")";
    }
}
