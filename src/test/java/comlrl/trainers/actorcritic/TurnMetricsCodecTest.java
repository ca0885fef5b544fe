package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.distributed.Codecs;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class TurnMetricsCodecTest {
    /** Each component back in its place (all different), turns in order, NaN (evaluation's losses) kept. */
    @Test
    void metricsByTurnComeBackFieldByField() {
        Map<Integer, TurnMetrics> sent = new TreeMap<>();
        sent.put(0, new TurnMetrics(1, 2, 3, 4, 5, 6, 7));
        sent.put(2, new TurnMetrics(-1, -2, -3, -4, Double.NaN, Double.NaN, Double.NaN));
        byte[] bytes = Codecs.encode(sent, TurnMetrics.BY_TURN);
        Map<Integer, TurnMetrics> back = Codecs.decode(bytes, "the test's bytes", TurnMetrics.BY_TURN);
        assertThat(back).containsExactly(Map.entry(0, new TurnMetrics(1, 2, 3, 4, 5, 6, 7)),
                Map.entry(2, new TurnMetrics(-1, -2, -3, -4, Double.NaN, Double.NaN, Double.NaN)));
        // count 2, then per turn: key (4) + count 7 (4) + 7 doubles (56)
        assertThat(bytes).hasSize(4 + 2 * (4 + 4 + 7 * 8));
    }
}
