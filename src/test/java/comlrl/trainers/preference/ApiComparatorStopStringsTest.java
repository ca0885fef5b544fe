package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.data.TaskItem;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The iterative trainers' API comparator sends each agent's own stop strings (an agent without any
 * sends none), and a run whose stop strings the API cannot take is refused before any model loads.
 */
class ApiComparatorStopStringsTest {
    @Test
    void eachAgentsStopStringsReachTheApi() throws Exception {
        try (LocalComparatorServer server = new LocalComparatorServer(List.of("a"))) {
            MADPOIterConfig c = MADPOIterTrainerTest.config().comparatorPolicy("api")
                    .set("comparator_api_url", server.url())
                    .stopStringsPerAgent(Arrays.asList(List.of("</plan>", "\n\n"), null)).build();
            try (IterationComparators comparators = new IterationComparators(c, null, null)) {
                ComparatorSource source = comparators.forIteration(1, null);
                TaskItem item = TaskItem.of(Map.of("id", 1));
                source.generateOne(0, item, "p0", 1, 0);
                source.generateOne(1, item, "p1", 1, 0);
            }
            List<String> bodies = server.requests();
            assertThat(bodies.get(0)).contains("\"agent_idx\":0").contains("\"stop_strings\":[\"</plan>\",\"\\n\\n\"]");
            assertThat(bodies.get(1)).contains("\"agent_idx\":1").doesNotContain("stop_strings");
        }
    }

    @Test
    void moreStopStringsThanTheChatApiTakesAreRefusedWhenTheComparatorIsBuilt() {
        MADPOIterConfig c = MADPOIterTrainerTest.config().comparatorPolicy("api")
                .set("comparator_api_url", "http://127.0.0.1:9/v1/chat/completions").set("comparator_api_format", "openai")
                .set("comparator_api_model", "m").stopStrings(List.of("a", "b", "c", "d", "e")).build();
        assertThatThrownBy(() -> new IterationComparators(c, null, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stop_strings holds 5 strings");
    }
}
