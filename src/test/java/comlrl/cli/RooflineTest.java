package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.model.ModelConfig;
import comlrl.model.TinyConfigs;
import comlrl.tensor.DType;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The scoring FLOPs of {@link Roofline#fractions}, worked by hand. */
class RooflineTest {
    /**
     * A tied tiny config (V×E = 64 × 32 = 2,048) of 10,000 parameters: N_b = 7,952. G = 4 rows of P = 5
     * prompt and T = 3 new tokens: the rows written out are 4·8 = 32 positions, 6·7,952·32 + 6·2,048·4·3 =
     * 1,674,240 FLOPs; with the prompt shared, 5 − 1 + 4·(3 + 1) = 20 positions, 6·7,952·20 + 147,456 =
     * 1,101,696 FLOPs. At 1 GFLOP/s the bound is that many µs; 2.203392 ms of scoring is half of the shared bound's rate.
     */
    @Test
    void scoringCountsASharedPromptsPositionsOnce() {
        ModelConfig c = TinyConfigs.of("qwen2", true, "float32");
        Roofline.Limits limits = new Roofline.Limits(1, 1, 1);
        Map<String, Object> written = Roofline.fractions(c, DType.F32, 10_000, 4, 5, 3, false, limits, 1, 1, 2.203392);
        Map<String, Object> shared = Roofline.fractions(c, DType.F32, 10_000, 4, 5, 3, true, limits, 1, 1, 2.203392);
        assertThat(written.get("score_positions")).isEqualTo(32L);
        assertThat(shared.get("score_positions")).isEqualTo(20L);
        assertThat((double) written.get("score_gflop")).isCloseTo(1.674240e-3, within(1e-15));
        assertThat((double) shared.get("score_gflop")).isCloseTo(1.101696e-3, within(1e-15));
        assertThat((double) shared.get("score_bound_ms")).isCloseTo(1.101696, within(1e-12));
        assertThat((double) shared.get("score_fraction_of_matmul")).isCloseTo(0.5, within(1e-12));
    }
}
