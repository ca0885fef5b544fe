package comlrl.trainers.reinforce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.data.TaskItem;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TaggedCentralizedAdapterTest {
    private final TaggedCentralizedAdapter adapter = new TaggedCentralizedAdapter();
    private final TaskItem item = TaskItem.of(Map.of("prompt", "p"));

    @Test
    void promptListsEveryRoleAndItsSection() {
        String prompt = adapter.buildPrompt(item, List.of("write a haiku", "review it", "title it"));
        assertThat(prompt).contains("Agent 1 original prompt:\nwrite a haiku").contains("Agent 3 original prompt:\ntitle it")
                .contains("<agent_1>...</agent_1>").contains("<agent_3>...</agent_3>");
    }

    @Test
    void parsesSectionsCaseInsensitivelyAcrossLinesWithMissingOnesEmpty() {
        assertThat(adapter.parseCompletion("x <AGENT_1>one\ntwo</Agent_1> y <agent_3> three </agent_3>", item, 3))
                .containsExactly("one\ntwo", "", "three");
        assertThatThrownBy(() -> adapter.parseCompletion("no tags here", item, 2)).hasMessageContaining("<agent_i>");
    }
}
