package comlrl.utils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RewardProcessorsTest {
    @Test
    void identity() {
        assertThat(RewardProcessors.identity().apply(3.5)).isEqualTo(3.5);
        assertThat(RewardProcessors.identity().applyWithLength(3.5, 10)).isEqualTo(3.5);
    }

    @Test
    void clampDefaultsToPlusMinusTen() {
        RewardProcessor clamp = RewardProcessors.clamp();
        assertThat(clamp.apply(15)).isEqualTo(10);
        assertThat(clamp.apply(-12)).isEqualTo(-10);
        assertThat(clamp.apply(3)).isEqualTo(3);
        assertThat(RewardProcessors.clamp(0, 1).apply(2)).isEqualTo(1);
        assertThat(RewardProcessors.clamp(0, 1).apply(Double.NaN)).isNaN();
        assertThatThrownBy(() -> RewardProcessors.clamp(1, 0)).hasMessageContaining("min_val <= max_val");
    }

    @Test
    void scale() {
        assertThat(RewardProcessors.scale().apply(2.5)).isEqualTo(2.5);               // default factor 1
        assertThat(RewardProcessors.scale(10.0).apply(0.3)).isCloseTo(3.0, within(1e-12));  // 0.3 · 10
    }

    @Test
    void sigmoidScale() {
        RewardProcessor sigmoid = RewardProcessors.sigmoidScale();
        assertThat(sigmoid.apply(0)).isEqualTo(0.5);                                   // 1/(1+1)
        assertThat(sigmoid.apply(Math.log(3))).isCloseTo(0.75, within(1e-12));        // 1/(1+1/3)
        assertThat(sigmoid.apply(-Math.log(3))).isCloseTo(0.25, within(1e-12));       // 1/(1+3)
        assertThat(sigmoid.apply(-1000)).isEqualTo(0.0);                               // no NaN from e^1000
        assertThat(sigmoid.apply(1000)).isEqualTo(1.0);
    }

    @Test
    void normalizeByLengthNeedsTheLength() {
        RewardProcessor byLength = RewardProcessors.normalizeByLength();                  // max_len 1000
        assertThat(byLength.apply(2.0)).isEqualTo(2.0);                                   // no length: identity
        assertThat(byLength.applyWithLength(2.0, 250)).isEqualTo(0.5);                    // 2 · min(1, 250/1000)
        assertThat(byLength.applyWithLength(2.0, 5000)).isEqualTo(2.0);                   // 2 · min(1, 5)
        assertThat(RewardProcessors.normalizeByLength(100).applyWithLength(1.0, 50)).isEqualTo(0.5);
        assertThatThrownBy(() -> RewardProcessors.normalizeByLength(0)).hasMessageContaining("max_len > 0");
        assertThatThrownBy(() -> byLength.applyWithLength(1, -1)).hasMessageContaining("negative");
    }

    @Test
    void exponentialScale() {
        RewardProcessor exp = RewardProcessors.exponentialScale();
        assertThat(exp.apply(1)).isCloseTo(1.718281828, within(1e-9));                 // e − 1
        assertThat(exp.apply(-1)).isCloseTo(-1.718281828, within(1e-9));               // −e + 1
        assertThat(exp.apply(0)).isEqualTo(0.0);                                        // −e^0 + 1
        assertThat(RewardProcessors.exponentialScale(2).apply(0.5)).isCloseTo(1.718281828, within(1e-9)); // e^1 − 1
    }

    @Test
    void composition() {
        RewardProcessor scaleThenClamp = RewardProcessors.scale(10).andThen(RewardProcessors.clamp());
        RewardProcessor clampThenScale = RewardProcessors.clamp().andThen(RewardProcessors.scale(10));
        assertThat(scaleThenClamp.apply(3)).isEqualTo(10);    // clamp(30)
        assertThat(clampThenScale.apply(3)).isEqualTo(30);    // 10 · clamp(3)
        // the length reaches the length-aware processor in either position: 1 · (50/100) · 2 = 1
        assertThat(RewardProcessors.normalizeByLength(100).andThen(RewardProcessors.scale(2)).applyWithLength(1, 50))
                .isEqualTo(1.0);
        assertThat(RewardProcessors.scale(2).andThen(RewardProcessors.normalizeByLength(100)).applyWithLength(1, 50))
                .isEqualTo(1.0);
        assertThat(RewardProcessors.scale(2).andThen(RewardProcessors.normalizeByLength(100)).apply(1)).isEqualTo(2.0);
        assertThat(scaleThenClamp.toString()).isEqualTo("scale(factor=10.0).andThen(clamp(min_val=-10.0, max_val=10.0))");
    }

    @Test
    void lambdasAreProcessors() {
        RewardProcessor square = r -> r * r;
        assertThat(square.applyWithLength(3, 100)).isEqualTo(9);
    }

    @Test
    void fromConfig() {
        assertThat(RewardProcessors.fromConfig(null).apply(4)).isEqualTo(4);
        assertThat(RewardProcessors.fromConfig("sigmoid_scale").apply(0)).isEqualTo(0.5);
        assertThat(RewardProcessors.fromConfig(Map.of("type", "scale", "factor", 10.0)).apply(2)).isEqualTo(20);
        assertThat(RewardProcessors.fromConfig(Map.of("type", "clamp", "min_val", 0, "max_val", "1")).apply(5))
                .isEqualTo(1);
        assertThat(RewardProcessors.fromConfig(Map.of("type", "clamp")).apply(50)).isEqualTo(10);
        assertThat(RewardProcessors.fromConfig(Map.of("type", "normalize_by_length", "max_len", 10))
                .applyWithLength(1, 5)).isEqualTo(0.5);
        assertThat(RewardProcessors.fromConfig(Map.of("type", "exponential_scale")).apply(0)).isEqualTo(0);
        assertThat(RewardProcessors.fromConfig("identity").apply(-3)).isEqualTo(-3);
        // a list is a chain: scale by 10, then clamp to ±10
        assertThat(RewardProcessors.fromConfig(List.of(Map.of("type", "scale", "factor", 10), "clamp")).apply(3))
                .isEqualTo(10);
    }

    @Test
    void fromConfigErrors() {
        assertThatThrownBy(() -> RewardProcessors.fromConfig("scal"))
                .hasMessageContaining("Unknown reward_processor type 'scal'; did you mean 'scale'?");
        assertThatThrownBy(() -> RewardProcessors.fromConfig(Map.of("type", "scale", "factr", 2)))
                .hasMessageContaining("Unknown reward_processor scale key 'factr'; did you mean 'factor'?");
        assertThatThrownBy(() -> RewardProcessors.fromConfig(Map.of("factor", 2)))
                .hasMessageContaining("needs a 'type'");
        assertThatThrownBy(() -> RewardProcessors.fromConfig(Map.of("type", "scale", "factor", "big")))
                .hasMessageContaining("key 'factor' must be a number, got \"big\"");
        assertThatThrownBy(() -> RewardProcessors.fromConfig(42))
                .hasMessageContaining("must be a name, a map with 'type', or a list");
    }
}
