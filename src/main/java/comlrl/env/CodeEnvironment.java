package comlrl.env;

import comlrl.reward.CodeReward;
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
    /** The hub dataset of each task set: id, config (or ""), train split, evaluation split (or "" for 16 held out). */
    public static final Map<String, List<String>> HUB = Map.of(
            "humaneval", List.of("openai/openai_humaneval", "", "test", ""),
            "coophumaneval", List.of("OpenMLRL/CoopHumanEval", "", "train", ""),
            "mbpp", List.of("google-research-datasets/mbpp", "sanitized", "test", "validation"));
    /** Tasks held out for evaluation from a set without an evaluation split. */
    public static final int HELD_OUT = 16;

    private CodeEnvironment() {}

    /**
     * Evaluation metrics, per evaluated task item, of the last turn's joint response (scored by the run's
     * {@code reward}, whose sandbox cache answers for programs it ran): {@code code_reward},
     * {@code code_levels_passed}, {@code code_tests_passed} (the fraction of asserts), and
     * {@code code_pass_at_1}, 1 when every test passed, so that its mean over the items is pass@1 of the
     * team (one sample per task); with several turns also {@code code_pass_at_1_turn_t} for each turn t.
     */
    public static comlrl.trainers.EvalLogger evalLogger(CodeReward reward) {
        return (completions, items, prompts) -> {
            List<Map<String, Double>> rows = new java.util.ArrayList<>();
            for (int j = 0; j < completions.get(0).size(); j++) {
                List<String> aux = completions.get(0).get(j);
                List<String> main = completions.get(1).get(j);
                Map<String, Double> row = new LinkedHashMap<>();
                for (int t = 0; t < aux.size(); t++) {
                    CodeReward.Breakdown b = reward.breakdowns(List.of(List.of(aux.get(t)), List.of(main.get(t))),
                            List.of(items.get(j))).get(0);
                    if (aux.size() > 1) {
                        row.put("code_pass_at_1_turn_" + (t + 1), b.solved() ? 1.0 : 0.0);
                    }
                    if (t == aux.size() - 1) {
                        row.put("code_reward", b.total());
                        row.put("code_levels_passed", (double) b.levelsPassed());
                        row.put("code_tests_passed", b.testsTotal() == 0 ? 0.0 : (double) b.testsPassed() / b.testsTotal());
                        row.put("code_pass_at_1", b.solved() ? 1.0 : 0.0);
                    }
                }
                rows.add(row);
            }
            return rows;
        };
    }

    /** The config keys {@code environment: {type: code, dataset: D}} stands for. */
    static Map<String, Object> defaults(Map<String, Object> env) {
        ConfigMaps.requireKnownKeys("environment code", env, List.of("type", "dataset", "weights", "sandbox", "run_all"),
                Map.of("task", "use 'dataset': humaneval, coophumaneval or mbpp."));
        String set = ConfigMaps.isNullLike(env.get("dataset")) ? "humaneval"
                : ConfigMaps.toStr("environment code", "dataset", env.get("dataset")).trim().toLowerCase(Locale.ROOT);
        List<String> hub = HUB.get(set);
        if (hub == null) {
            throw new IllegalArgumentException("environment code: unknown dataset '" + env.get("dataset")
                    + "'; use humaneval, coophumaneval or mbpp (a local JSONL file with their columns: add "
                    + "dataset: {train: FILE} beside the environment)");
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
        d.put("formatters", set.equals("mbpp") ? MBPP_FORMATTERS : FORMATTERS);
        Map<String, Object> reward = new LinkedHashMap<>();
        reward.put("type", "code");
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
}
