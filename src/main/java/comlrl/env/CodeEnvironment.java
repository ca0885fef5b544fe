package comlrl.env;

import comlrl.data.TaskItem;
import comlrl.reward.CodeReward;
import comlrl.reward.CoderTesterReward;
import comlrl.trainers.EvalLogger;
import java.util.ArrayList;
import comlrl.utils.ConfigMaps;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Two-agent code generation ({@code environment: {type: code, dataset: humaneval|coophumaneval|mbpp}}),
 * rewarded by {@link CodeReward}: agent 0 writes a helper function {@code aux}, agent 1 the function the
 * task's tests call, which may use it. Task sets from the hub:
 * <ul>
 *   <li>{@code humaneval}: {@code openai/openai_humaneval} (split {@code test}, 164 tasks; columns
 *       {@code prompt}, {@code test}, {@code entry_point}); 16 tasks held out for evaluation;</li>
 *   <li>{@code coophumaneval}: {@code OpenMLRL/CoopHumanEval} (split {@code train}, the same columns), the
 *       set CoMLRL's code environment trains on; 16 tasks held out;</li>
 *   <li>{@code mbpp}: {@code google-research-datasets/mbpp}, config {@code sanitized} (split {@code test},
 *       evaluation on {@code validation}; columns {@code prompt} (the task in words), {@code test_list},
 *       {@code test_imports}, {@code code}); its tasks name their function only in their tests, so the
 *       prompts ask for one function of any name (see {@link CodeReward}).</li>
 * </ul>
 * A local JSONL file with the same columns is trained on with {@code dataset: {train: FILE}} beside the
 * environment; {@code builtin:code-tasks} holds twenty small tasks of this library's own (HumanEval's columns).
 * Optional keys {@code weights}, {@code sandbox} and {@code run_all} are passed to the reward ({@link CodeReward#fromConfig}).
 *
 * <p>{@code roles} chooses the team: {@code aux_main} (the default, above) or {@code coder_tester}: agent 0
 * writes the function the task names, agent 1 assert tests for it from the task's description only, rewarded
 * by {@link CoderTesterReward} (reward {@code type: coder_tester}), on task sets whose tasks name their
 * function and carry a reference solution (humaneval, coophumaneval, {@code builtin:code-tasks}; not mbpp).
 * {@code pass_at} (a list of k, e.g. {@code [1, 5]}; default every k from 1 to {@code eval_num_generations})
 * chooses the pass@k metrics of evaluation ({@link #evalLogger(CodeReward, List)}).
 */
public final class CodeEnvironment {
    /** Formatters for tasks with an {@code entry_point} (HumanEval's columns), agent 0 (aux) first; our wording. */
    public static final List<String> FORMATTERS = List.of(
            "Write a Python helper function named aux for the problem below. A second programmer writes "
                    + "{entry_point} and can call aux(...) in it, so let aux do a useful part of the work and return "
                    + "its result. Reply with the code of aux only: no explanation, no tests, no example calls.\n\n"
                    + "Problem:\n{prompt}\n",
            "Write the Python function {entry_point} for the problem below. A second programmer has written a helper "
                    + "function aux that you cannot see; you may call aux(...) and use what it returns. Reply with the "
                    + "code of {entry_point} only: do not define aux, and give no explanation, tests or example calls."
                    + "\n\nProblem:\n{prompt}\n");
    /** Formatters for MBPP, whose tasks name no function: the main agent's last function is the one tested. */
    public static final List<String> MBPP_FORMATTERS = List.of(
            "Write a Python helper function named aux that does a useful part of the task below and returns its "
                    + "result; a second programmer writes the function that solves the task and can call aux(...). "
                    + "Reply with the code of aux only: no explanation, no tests.\n\nTask: {prompt}\n",
            "Write one Python function that solves the task below. A second programmer has written a helper "
                    + "function aux that you cannot see; you may call aux(...) and use what it returns. Reply with the "
                    + "code of your function only: do not define aux, and give no explanation or tests.\n\n"
                    + "Task: {prompt}\n");
    /** Formatters of {@code roles: coder_tester}, the coder (agent 0) first; our wording. */
    public static final List<String> CODER_TESTER_FORMATTERS = List.of(
            "Write the Python function {entry_point} for the problem below. A second programmer writes tests for it "
                    + "from the same description without seeing your code. Reply with the code of {entry_point} only: "
                    + "no explanation, no tests, no example calls.\n\nProblem:\n{prompt}\n",
            "Write tests for the Python function {entry_point} described below. A second programmer writes the "
                    + "function; you do not see it. Reply with assert statements only, one per line at the top level, "
                    + "each calling {entry_point}(...) and checking its result against the value the description "
                    + "implies. Do not write the function itself.\n\nProblem:\n{prompt}\n");
    /** The team choices of {@code roles}. */
    public static final List<String> ROLES = List.of("aux_main", "coder_tester");

    /** The hub dataset of each task set: id, config (or ""), train split, evaluation split (or "" for 16 held out). */
    public static final Map<String, List<String>> HUB = Map.of(
            "humaneval", List.of("openai/openai_humaneval", "", "test", ""),
            "coophumaneval", List.of("OpenMLRL/CoopHumanEval", "", "train", ""),
            "mbpp", List.of("google-research-datasets/mbpp", "sanitized", "test", "validation"));
    /** Tasks held out for evaluation from a set without an evaluation split. */
    public static final int HELD_OUT = 16;

    private CodeEnvironment() {}

    /** {@link #evalLogger(CodeReward, List)} with pass@k for every k from 1 to the number of samples. */
    public static EvalLogger evalLogger(CodeReward reward) {
        return evalLogger(reward, null);
    }

    /**
     * Evaluation metrics, one row per evaluated task item, from its g joint samples
     * ({@code eval_num_generations}; the programs scored by the run's {@code reward}, whose sandbox cache
     * answers for programs it ran), each the mean over the samples of the last turn's value:
     * {@code code_reward}, {@code code_levels_passed}, {@code code_tests_passed} (the fraction of asserts);
     * then, with c of the g samples solved (every test passed), {@code code_pass_at_1} = c / g and
     * {@code code_pass_at_k} = {@link CodeReward#passAtK}(g, c, k) for each k of {@code passAt} other than 1
     * (null: every k from 2 to g; each k at most g). Their means over the items are the team's pass@k. With
     * several turns also {@code code_pass_at_1_turn_t}, c_t / g of turn t. With one sample: 1 or 0 per item.
     */
    public static EvalLogger evalLogger(CodeReward reward, List<Integer> passAt) {
        return new PassAtK(passAt, (first, second, items) -> reward.breakdowns(List.of(first, second), items).stream()
                .map(b -> {
                    Map<String, Double> m = new LinkedHashMap<>();
                    m.put("code_reward", b.total());
                    m.put("code_levels_passed", (double) b.levelsPassed());
                    m.put("code_tests_passed", b.testsTotal() == 0 ? 0.0 : (double) b.testsPassed() / b.testsTotal());
                    return new Sample(b.solved(), m);
                }).toList());
    }

    /**
     * The evaluation metrics of {@code roles: coder_tester}, as {@link #evalLogger(CodeReward, List)} (pass@k of
     * the coder's function on the hidden tests), with per-sample means {@code code_reward} (the team's),
     * {@code code_tests_passed} (the coder's fraction of hidden asserts), {@code tester_tests_written} (its
     * asserts kept), {@code tester_tests_valid} (the fraction of them that pass on the reference solution; 0
     * without any), {@code tester_catches_stub} and {@code tester_agrees} (1 when earned).
     */
    public static EvalLogger evalLogger(CoderTesterReward reward, List<Integer> passAt) {
        return new PassAtK(passAt, (first, second, items) -> reward.breakdowns(List.of(first, second), items).stream()
                .map(b -> {
                    Map<String, Double> m = new LinkedHashMap<>();
                    m.put("code_reward", b.total());
                    m.put("code_tests_passed", b.codeTestsTotal() == 0 ? 0.0
                            : (double) b.codeTestsPassed() / b.codeTestsTotal());
                    m.put("tester_tests_written", (double) b.testsWritten());
                    m.put("tester_tests_valid", b.testsWritten() == 0 ? 0.0
                            : (double) b.testsValidOnReference() / b.testsWritten());
                    m.put("tester_catches_stub", b.catchesStub() > 0 ? 1.0 : 0.0);
                    m.put("tester_agrees", b.agrees() > 0 ? 1.0 : 0.0);
                    return new Sample(b.solved(), m);
                }).toList());
    }

    /** One joint sample's verdict: solved (every hidden test passed) and its metrics. */
    private record Sample(boolean solved, Map<String, Double> metrics) {}

    /** Scores joint responses: agent 0's and agent 1's texts and their items, all in one reward call. */
    private interface Scorer {
        List<Sample> score(List<String> first, List<String> second, List<TaskItem> items);
    }

    /** The rows of {@link #evalLogger(CodeReward, List)}: every sample and turn scored in one call, then per item. */
    private record PassAtK(List<Integer> passAt, Scorer scorer) implements EvalLogger {
        @Override
        public List<Map<String, Double>> log(List<List<List<String>>> completions, List<TaskItem> items,
                List<String> prompts) {
            return logSamples(List.of(completions), items, prompts);
        }

        @Override
        public List<Map<String, Double>> logSamples(List<List<List<List<String>>>> samples, List<TaskItem> items,
                List<String> prompts) {
            int g = samples.size();
            List<Integer> ks = passAt == null ? java.util.stream.IntStream.rangeClosed(2, g).boxed().toList()
                    : passAt.stream().filter(k -> k != 1).toList();
            for (int k : ks) {
                if (k > g) {
                    throw new IllegalArgumentException("pass_at " + k + " needs at least " + k + " samples per task; "
                            + "set eval_num_generations >= " + k + " (it is " + g + ")");
                }
            }
            List<String> first = new ArrayList<>();
            List<String> second = new ArrayList<>();
            List<TaskItem> scored = new ArrayList<>();
            for (List<List<List<String>>> sample : samples) { // [agent][item][turn], in sample, item, turn order
                for (int j = 0; j < items.size(); j++) {
                    for (int t = 0; t < sample.get(0).get(j).size(); t++) {
                        first.add(sample.get(0).get(j).get(t));
                        second.add(sample.get(1).get(j).get(t));
                        scored.add(items.get(j));
                    }
                }
            }
            java.util.Iterator<Sample> verdicts = scorer.score(first, second, scored).iterator();
            List<int[]> solvedPerTurn = new ArrayList<>(); // [item][turn]: c_t
            List<Map<String, Double>> sums = new ArrayList<>(); // [item]: the last turn's metrics summed over samples
            for (int j = 0; j < items.size(); j++) {
                solvedPerTurn.add(new int[samples.get(0).get(0).get(j).size()]);
                sums.add(new LinkedHashMap<>());
            }
            for (List<List<List<String>>> sample : samples) {
                for (int j = 0; j < items.size(); j++) {
                    int turns = sample.get(0).get(j).size();
                    for (int t = 0; t < turns; t++) {
                        Sample v = verdicts.next();
                        solvedPerTurn.get(j)[t] += v.solved() ? 1 : 0;
                        if (t == turns - 1) {
                            Map<String, Double> sum = sums.get(j);
                            v.metrics().forEach((key, value) -> sum.merge(key, value, Double::sum));
                        }
                    }
                }
            }
            List<Map<String, Double>> rows = new ArrayList<>();
            for (int j = 0; j < items.size(); j++) {
                int[] c = solvedPerTurn.get(j);
                Map<String, Double> row = new LinkedHashMap<>();
                for (int t = 0; c.length > 1 && t < c.length; t++) {
                    row.put("code_pass_at_1_turn_" + (t + 1), (double) c[t] / g);
                }
                sums.get(j).forEach((key, sum) -> row.put(key, sum / g));
                int solved = c[c.length - 1];
                row.put("code_pass_at_1", CodeReward.passAtK(g, solved, 1));
                for (int k : ks) {
                    row.put("code_pass_at_" + k, CodeReward.passAtK(g, solved, k));
                }
                rows.add(row);
            }
            return rows;
        }
    }

    /** The config keys {@code environment: {type: code, dataset: D}} stands for. */
    static Map<String, Object> defaults(Map<String, Object> env) {
        ConfigMaps.requireKnownKeys("environment code", env, List.of("type", "dataset", "roles", "weights", "sandbox",
                "run_all", "pass_at"), Map.of("task", "use 'dataset': humaneval, coophumaneval or mbpp.",
                "pass_at_k", "use 'pass_at': [1, 5]."));
        boolean coderTester = roles(env).equals("coder_tester");
        passAt(env); // checked here, read by the evaluation logger
        String set = ConfigMaps.isNullLike(env.get("dataset")) ? "humaneval"
                : ConfigMaps.toStr("environment code", "dataset", env.get("dataset")).trim().toLowerCase(Locale.ROOT);
        List<String> hub = HUB.get(set);
        if (hub == null) {
            throw new IllegalArgumentException("environment code: unknown dataset '" + env.get("dataset")
                    + "'; use humaneval, coophumaneval or mbpp (a local JSONL file with their columns: add "
                    + "dataset: {train: FILE} beside the environment)");
        }
        if (coderTester && set.equals("mbpp")) {
            throw new IllegalArgumentException("environment code: roles coder_tester needs tasks that name their function "
                    + "(entry_point) and hold a reference solution; mbpp's name theirs only in their tests. Use humaneval "
                    + "or coophumaneval (or a local JSONL file with entry_point and canonical_solution columns)");
        }
        Map<String, Object> d = new LinkedHashMap<>();
        Map<String, Object> dataset = new LinkedHashMap<>();
        dataset.put("hub", hub.get(0));
        if (!hub.get(1).isEmpty()) {
            dataset.put("config", hub.get(1));
        }
        dataset.put("split", hub.get(2));
        if (hub.get(3).isEmpty()) {
            dataset.put("test_size", HELD_OUT);
        } else {
            dataset.put("eval_split", hub.get(3));
        }
        d.put("dataset", dataset);
        d.put("formatters", coderTester ? CODER_TESTER_FORMATTERS : set.equals("mbpp") ? MBPP_FORMATTERS : FORMATTERS);
        Map<String, Object> reward = new LinkedHashMap<>();
        reward.put("type", coderTester ? "coder_tester" : "code");
        for (String key : List.of("weights", "sandbox", "run_all")) {
            if (env.get(key) != null) {
                reward.put(key, env.get(key));
            }
        }
        d.put("reward", reward);
        d.put("num_agents", 2);
        d.put("args", new LinkedHashMap<>(Map.of("num_turns", 1))); // one turn: each agent writes its function once
        return d;
    }

    /** The section's {@code roles}: {@code aux_main} (the default) or {@code coder_tester}. */
    static String roles(Map<?, ?> env) {
        if (ConfigMaps.isNullLike(env.get("roles"))) {
            return "aux_main";
        }
        String roles = ConfigMaps.toStr("environment code", "roles", env.get("roles")).trim().toLowerCase(Locale.ROOT);
        if (!ROLES.contains(roles)) {
            throw new IllegalArgumentException("environment code: unknown roles '" + env.get("roles") + "'; use "
                    + "aux_main (a helper function aux + the main function) or coder_tester (a function + its tests)");
        }
        return roles;
    }

    /** The section's {@code pass_at} list (each k >= 1), or null when it has none (every k up to the samples). */
    static List<Integer> passAt(Map<?, ?> env) {
        Object value = env.get("pass_at");
        if (ConfigMaps.isNullLike(value)) {
            return null;
        }
        List<?> given = value instanceof List<?> l ? l : List.of(value);
        List<Integer> ks = new ArrayList<>();
        for (Object k : given) {
            int v = ConfigMaps.toInt("environment code", "pass_at", k);
            if (v < 1) {
                throw new IllegalArgumentException("environment code: pass_at values must be >= 1, got " + v);
            }
            ks.add(v);
        }
        return List.copyOf(ks);
    }
}
