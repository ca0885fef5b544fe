package comlrl.env;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EnvironmentsTest {

    private static Map<String, Object> config(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    @Test
    void writingFillsWhatTheConfigLeavesOut() {
        Map<String, Object> c = config("environment", Map.of("type", "writing", "task", "ArXiv"));
        Environments.expand(c);
        assertThat(c.get("dataset")).isEqualTo(Map.of("hub", "OpenMLRL/arXiv_abstract", "split", "train", "eval_split", "val"));
        assertThat(c.get("reward")).isEqualTo(Map.of("type", "writing", "task", "arxiv"));
        assertThat(c.get("num_agents")).isEqualTo(2);
        assertThat(c.get("args")).isEqualTo(Map.of("num_turns", 1));
        @SuppressWarnings("unchecked")
        List<String> formatters = (List<String>) c.get("formatters");
        assertThat(formatters).hasSize(2);
        assertThat(formatters.get(0)).contains("{abstract_text}").contains("background and motivation");
        assertThat(formatters.get(1)).contains("{abstract_text}").contains("method and implications");
    }

    @Test
    void whatTheConfigGivesIsKept() {
        Map<String, Object> dataset = Map.of("train", "builtin:writing-tldr");
        Map<String, Object> c = config("environment", Map.of("type", "writing", "task", "tldr"), "dataset", dataset,
                "formatters", "{prompt}", "args", Map.of("num_turns", 2, "seed", 7));
        Environments.expand(c);
        assertThat(c.get("dataset")).isSameAs(dataset);
        assertThat(c.get("formatters")).isEqualTo("{prompt}");
        assertThat(c.get("args")).isEqualTo(Map.of("num_turns", 2, "seed", 7));
        assertThat(c.get("reward")).isEqualTo(Map.of("type", "writing", "task", "tldr"));
        // a section without a source (dataset) or a type (reward) of its own is completed from the environment's
        Map<String, Object> partial = config("environment", Map.of("type", "writing", "task", "tldr"),
                "dataset", Map.of("test_size", 1), "reward", Map.of("task", "arxiv"));
        Environments.expand(partial);
        assertThat(partial.get("dataset")).isEqualTo(Map.of("hub", "trl-lib/tldr", "split", "train", "eval_split", "test",
                "test_size", 1));
        assertThat(partial.get("reward")).isEqualTo(Map.of("type", "writing", "task", "arxiv"));
        Map<String, Object> none = config("algorithm", "magrpo");
        Environments.expand(none);
        assertThat(none).containsOnlyKeys("algorithm");
    }

    @Test
    void malformedSectionsNameTheKey() {
        assertThatThrownBy(() -> Environments.expand(config("environment", Map.of("task", "tldr"))))
                .hasMessageContaining("environment needs a 'type'");
        assertThatThrownBy(() -> Environments.expand(config("environment", "writng")))
                .hasMessageContaining("unknown type 'writng'; did you mean 'writing'");
        assertThatThrownBy(() -> Environments.expand(config("environment", "writing")))
                .hasMessageContaining("environment writing needs 'task'");
        assertThatThrownBy(() -> Environments.expand(config("environment", Map.of("type", "writing", "task", "poem"))))
                .hasMessageContaining("unknown task 'poem'");
        assertThatThrownBy(() -> Environments.expand(config("environment", Map.of("type", "writing", "task", "tldr",
                "taks", 1)))).hasMessageContaining("taks");
        assertThatThrownBy(() -> Environments.expand(config("environment", List.of("writing"))))
                .hasMessageContaining("environment must be a mapping");
    }

    @Test
    void builtinWritingTaskSetsHaveTheHubColumns() {
        assertThat(comlrl.data.BuiltinTasks.load("builtin:writing-tldr").size()).isEqualTo(12);
        assertThat(comlrl.data.BuiltinTasks.load("builtin:writing-arxiv").get(0).getString("abstract_text"))
                .startsWith("We study");
        assertThat(comlrl.data.BuiltinTasks.load("builtin:writing-tldr").get(0).getString("prompt")).isNotBlank();
        assertThatThrownBy(() -> comlrl.data.BuiltinTasks.load("builtin:poems"))
                .hasMessageContaining("builtin:writing-tldr");
    }
}
