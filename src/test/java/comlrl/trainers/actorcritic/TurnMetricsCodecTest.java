package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.distributed.Codecs;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TurnMetricsCodecTest {
    /** Each value back under its key (all different), in the sender's order. */
    @Test
    void metricsComeBackKeyByKeyInOrder() {
        Map<String, Double> sent = new LinkedHashMap<>();
        sent.put("turn_2/value_loss", 6.0);
        sent.put("turn_1/reward_mean", 1.0);
        sent.put("turn_1/explained_variance", -7.5);
        byte[] bytes = Codecs.encode(sent, TurnMetrics.CODEC);
        Map<String, Double> back = Codecs.decode(bytes, "the test's bytes", TurnMetrics.CODEC);
        assertThat(back).containsExactly(Map.entry("turn_2/value_loss", 6.0), Map.entry("turn_1/reward_mean", 1.0),
                Map.entry("turn_1/explained_variance", -7.5));
    }

    /**
     * Two samples of turn 2 with rewards 1, 3, returns 0.5, 1.5, KLs 0.25, 0.75 and penalties 0.5, 1.5:
     * by hand the means 2, 1, 0.5, 1; the losses 7 and 8 as given; a NaN explained variance left out.
     */
    @Test
    void eachMeanUnderItsKey() {
        List<RolloutSample> samples = List.of(sample(1, 0.5, 0.25, 0.5), sample(3, 1.5, 0.75, 1.5));
        Map<String, Double> metrics = new LinkedHashMap<>();
        TurnMetrics.put(metrics, "eval/", samples, 7, 8, Double.NaN);
        assertThat(metrics).containsExactly(Map.entry("eval/turn_2/reward_mean", 2.0),
                Map.entry("eval/turn_2/expected_return", 1.0), Map.entry("eval/turn_2/reference_kl_mean", 0.5),
                Map.entry("eval/turn_2/reference_kl_penalty_mean", 1.0), Map.entry("eval/turn_2/policy_loss", 7.0),
                Map.entry("eval/turn_2/value_loss", 8.0));
    }

    private static RolloutSample sample(double reward, double returns, double kl, double penalty) {
        return new RolloutSample(0, "p", "c", new long[] {1, 2}, 1, 1, 0, 0, reward, returns, 0, 0, 1, kl, penalty, 0,
                0, null, null);
    }
}
