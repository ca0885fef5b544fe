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

    @Test
    void aLoggerWithoutPassAtKLogsEachSampleAsItsOwnRows() {
        EvalLogger lengths = (completions, items, prompts) -> completions.get(0).stream()
                .map(turns -> Map.of("length", (double) turns.get(0).length())).toList();
        List<List<List<String>>> first = List.of(List.of(List.of("ab"), List.of("abcd")));
        List<List<List<String>>> second = List.of(List.of(List.of("abcdef"), List.of("")));
        // one sample: log itself; two: sample 0's rows, then sample 1's
        assertThat(lengths.logSamples(List.of(first), null, null)).containsExactly(Map.of("length", 2.0),
                Map.of("length", 4.0));
        List<Map<String, Double>> rows = lengths.logSamples(List.of(first, second), null, null);
        assertThat(rows).containsExactly(Map.of("length", 2.0), Map.of("length", 4.0), Map.of("length", 6.0),
                Map.of("length", 0.0));
        assertThat(EvalAggregator.mean().aggregate(rows, 1)).containsEntry("length", 3.0); // (2 + 4 + 6 + 0) / 4
    }
}
