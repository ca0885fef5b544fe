package comlrl.env;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.data.BuiltinTasks;
import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.utils.Formatters;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code environment: {type: code, ...}} and the built-in code tasks. */
class CodeEnvironmentTest {

    private static Map<String, Object> expand(Object environment, Object... kv) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("environment", environment);
        for (int i = 0; i < kv.length; i += 2) {
            c.put((String) kv[i], kv[i + 1]);
        }
        Environments.expand(c);
        return c;
    }

    @Test
    void eachDatasetNamesItsHubSetAndTheEnvironmentItsRewardAndAgents() {
        Map<String, Object> he = expand("code");
        assertThat(he.get("dataset")).isEqualTo(Map.of("hub", "openai/openai_humaneval", "split", "test", "test_size", 16));
        assertThat(he.get("reward")).isEqualTo(Map.of("type", "code"));
        assertThat(he.get("num_agents")).isEqualTo(2);
        assertThat(he.get("args")).isEqualTo(Map.of("num_turns", 1));
        assertThat(expand(Map.of("type", "code", "dataset", "CoopHumanEval")).get("dataset"))
                .isEqualTo(Map.of("hub", "OpenMLRL/CoopHumanEval", "split", "train", "test_size", 16));
        Map<String, Object> mbpp = expand(Map.of("type", "code", "dataset", "mbpp", "weights", Map.of("tests", 2.0),
                "sandbox", Map.of("isolation", "process")));
        assertThat(mbpp.get("dataset")).isEqualTo(Map.of("hub", "google-research-datasets/mbpp", "config", "sanitized",
                "split", "test", "eval_split", "validation"));
        assertThat(mbpp.get("reward")).isEqualTo(Map.of("type", "code", "weights", Map.of("tests", 2.0),
                "sandbox", Map.of("isolation", "process")));
        @SuppressWarnings("unchecked")
        List<String> mbppFormatters = (List<String>) mbpp.get("formatters");
        assertThat(mbppFormatters).allSatisfy(f -> assertThat(f).contains("{prompt}").doesNotContain("{entry_point}"));
    }

    @Test
    void theFormattersAskForAuxAndTheEntryPoint() {
        Map<String, Object> c = expand("code", "dataset", Map.of("train", "builtin:code-tasks"));
        assertThat(c.get("dataset")).isEqualTo(Map.of("train", "builtin:code-tasks"));
        Formatters formatters = Formatters.fromConfig(c.get("formatters"), 2);
        TaskItem task = BuiltinTasks.load("builtin:code-tasks").iterator().next();
        String aux = formatters.get(0).format(task);
        String main = formatters.get(1).format(task);
        assertThat(aux).contains("named aux").contains(task.getString("prompt")).contains("count_vowels");
        assertThat(main).contains("Write the Python function count_vowels").contains("do not define aux");
    }

    @Test
    void theBuiltInTasksHaveHumanEvalsColumns() {
        Dataset tasks = BuiltinTasks.load("builtin:code-tasks");
        assertThat(tasks.size()).isEqualTo(20);
        for (TaskItem t : tasks) {
            assertThat(t.getString("prompt")).startsWith("def " + t.getString("entry_point") + "(");
            assertThat(t.getString("test")).startsWith("def check(candidate):\n    assert candidate(");
        }
    }

    @Test
    void malformedSectionsNameTheKey() {
        assertThatThrownBy(() -> expand(Map.of("type", "code", "dataset", "apps")))
                .hasMessageContaining("unknown dataset 'apps'").hasMessageContaining("dataset: {train: FILE}");
        assertThatThrownBy(() -> expand(Map.of("type", "code", "task", "humaneval")))
                .hasMessageContaining("use 'dataset'");
        assertThatThrownBy(() -> expand("cod")).hasMessageContaining("did you mean 'code'");
    }

    @Test
    void coderTesterRolesAskForAFunctionAndItsTestsAndScoreWithTheirReward() {
        Map<String, Object> c = expand(Map.of("type", "code", "roles", "coder_tester", "weights", Map.of("agrees", 2.0)),
                "dataset", Map.of("train", "builtin:code-tasks"));
        assertThat(c.get("reward")).isEqualTo(Map.of("type", "coder_tester", "weights", Map.of("agrees", 2.0)));
        assertThat(c.get("num_agents")).isEqualTo(2);
        Formatters formatters = Formatters.fromConfig(c.get("formatters"), 2);
        TaskItem task = BuiltinTasks.load("builtin:code-tasks").iterator().next();
        assertThat(formatters.get(0).format(task)).contains("Write the Python function count_vowels")
                .contains("without seeing your code").contains(task.getString("prompt"));
        assertThat(formatters.get(1).format(task)).contains("Write tests for the Python function count_vowels")
                .contains("assert statements only").contains("you do not see it").doesNotContain("aux");
        assertThat(expand("code").get("reward")).isEqualTo(Map.of("type", "code")); // aux_main stays the default
        assertThatThrownBy(() -> expand(Map.of("type", "code", "roles", "coder_tester", "dataset", "mbpp")))
                .hasMessageContaining("roles coder_tester").hasMessageContaining("humaneval");
        assertThatThrownBy(() -> expand(Map.of("type", "code", "roles", "tester")))
                .hasMessageContaining("unknown roles 'tester'").hasMessageContaining("coder_tester");
    }

    @Test
    void passAtNamesTheKsOfEvaluationAndTheEnvironmentWiresTheLoggerOfItsReward() {
        assertThat(CodeEnvironment.passAt(Map.of("pass_at", List.of(1, 5)))).containsExactly(1, 5);
        assertThat(CodeEnvironment.passAt(Map.of("pass_at", 3))).containsExactly(3);
        assertThat(CodeEnvironment.passAt(Map.of())).isNull();
        assertThatThrownBy(() -> expand(Map.of("type", "code", "pass_at", List.of(0))))
                .hasMessageContaining("pass_at values must be >= 1");
        try (comlrl.reward.CoderTesterReward pair = comlrl.reward.CoderTesterReward.fromConfig(Map.of("type", "coder_tester"))) {
            Map<String, Object> config = expand(Map.of("type", "code", "roles", "coder_tester", "pass_at", List.of(2)));
            comlrl.trainers.EvalLogger logger = Environments.evalLogger(config, pair);
            // one right and one empty sample of a built-in task: c = 1 of 2, pass@2 = 1 − C(1,2)/C(2,2) = 1
            TaskItem task = BuiltinTasks.load("builtin:code-tasks").iterator().next();
            String right = task.getString("prompt") + task.getString("canonical_solution");
            String tests = "assert count_vowels('hello') == 2\n";
            List<Map<String, Double>> rows = logger.logSamples(List.of(
                    List.of(List.of(List.of(right)), List.of(List.of(tests))),
                    List.of(List.of(List.of("no code")), List.of(List.of(tests)))), List.of(task), List.of(""));
            assertThat(rows.get(0)).containsEntry("code_pass_at_1", 0.5).containsEntry("code_pass_at_2", 1.0)
                    .containsEntry("tester_tests_valid", 1.0).containsEntry("tester_catches_stub", 1.0)
                    .containsEntry("tester_agrees", 0.5); // agrees with the right coder; no coder to judge in the other
        }
    }

    @Test
    void everyBuiltInTaskHasAReferenceSolutionThatPassesItsTests() {
        Dataset tasks = BuiltinTasks.load("builtin:code-tasks");
        List<String> references = new java.util.ArrayList<>();
        List<String> tests = new java.util.ArrayList<>();
        List<TaskItem> items = new java.util.ArrayList<>();
        for (TaskItem t : tasks) {
            references.add(t.getString("prompt") + t.getString("canonical_solution"));
            tests.add("");
            items.add(t);
        }
        try (comlrl.reward.CoderTesterReward pair = comlrl.reward.CoderTesterReward.fromConfig(Map.of("type", "coder_tester"))) {
            assertThat(pair.breakdowns(List.of(references, tests), items))
                    .allSatisfy(b -> assertThat(b.solved()).as(b.message()).isTrue());
        }
    }
}
