package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EvalAggregatorTest {

    @Test
    void meanAveragesEachKeyOverTheRowsThatHoldIt() {
        Map<String, Double> means = EvalAggregator.mean().aggregate(List.of(Map.of("a", 1.0, "b", 2.0), Map.of("a", 3.0),
                Map.of("a", 8.0)), 1);
        // a: (1 + 3 + 8) / 3 = 4; b only in the first row: 2 / 1
        assertThat(means).containsExactlyInAnyOrderEntriesOf(Map.of("a", 4.0, "b", 2.0));
        assertThat(EvalAggregator.mean().aggregate(List.of(), 1)).isEmpty();
    }
}
