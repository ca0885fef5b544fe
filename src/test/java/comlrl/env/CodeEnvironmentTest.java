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
}
