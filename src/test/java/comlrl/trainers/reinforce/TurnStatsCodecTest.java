package comlrl.trainers.reinforce;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.distributed.Codecs;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TurnStatsCodecTest {
    /**
     * Sums sent as reward 2, return 4, loss 6, KL 8, length 10 over count 2 with 3 skipped; by hand
     * the means of turn 1 are 1, 2, 3, 4 (KL), 5 (length), the penalty 0.5 · 8 / 2 = 2; sent again,
     * the same bytes.
     */
    @Test
    void theSumsAndCountsComeBackInTheirPlaces() {
        byte[] bytes = Codecs.encode(new double[] {2, 4, 6, 8, 10, 2, 3}, Codecs.DOUBLES);
        TurnStats s = Codecs.decode(bytes, "the test's bytes", TurnStats.CODEC);
        Map<String, Double> out = new LinkedHashMap<>();
        s.put(out, "", 0, 0.5, true);
        assertThat(out).containsExactly(Map.entry("turn_1/reward_mean", 1.0), Map.entry("turn_1/expected_return", 2.0),
                Map.entry("turn_1/policy_loss", 3.0), Map.entry("turn_1/completion_length_mean", 5.0),
                Map.entry("turn_1/reference_kl_mean", 4.0), Map.entry("turn_1/reference_kl_penalty_mean", 2.0),
                Map.entry("turn_1/nonfinite_samples_skipped", 3.0));
        assertThat(Codecs.encode(s, TurnStats.CODEC)).isEqualTo(bytes);
    }
}
