package comlrl.rl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class AdvantageModeTest {
    // Golden group, G = 4: R = [1, 2, 3, 6]; ΣR = 12; mean(R) = 3; max(R) = 6.
    private static final double[] RETURNS = {1, 2, 3, 6};

    @Test
    void meanSubtractsGroupMean() {
        // A_k = R_k − 3 → [−2, −1, 0, 3]
        assertThat(AdvantageMode.MEAN.advantages(RETURNS)).containsExactly(-2, -1, 0, 3);
    }

    @Test
    void rawKeepsReturns() {
        double[] advantages = AdvantageMode.RAW.advantages(RETURNS);
        assertThat(advantages).containsExactly(1, 2, 3, 6);
        assertThat(advantages).isNotSameAs(RETURNS);
    }

    @Test
    void maxSubtractsGroupMax() {
        // A_k = R_k − 6 → [−5, −4, −3, 0]
        assertThat(AdvantageMode.MAX.advantages(RETURNS)).containsExactly(-5, -4, -3, 0);
    }

    @Test
    void rlooIsLeaveOneOut() {
        // A_k = (4·R_k − 12)/3: (4−12)/3 = −8/3, (8−12)/3 = −4/3, (12−12)/3 = 0, (24−12)/3 = 4.
        // Check k=0 the other way: R_0 − mean(2,3,6) = 1 − 11/3 = −8/3.
        assertThat(AdvantageMode.RLOO.advantages(RETURNS))
                .containsExactly(new double[] {-8.0 / 3, -4.0 / 3, 0, 4}, within(1e-12));
    }

    @Test
    void rlooWithOneSampleFallsBackToMean() {
        // G = 1: (G·R − ΣR)/(G − 1) would divide by zero; the reference uses the mean baseline: 5 − 5 = 0.
        assertThat(AdvantageMode.RLOO.advantages(new double[] {5})).containsExactly(0);
    }

    @Test
    void emptyGroupIsRejected() {
        for (AdvantageMode mode : AdvantageMode.values()) {
            assertThatThrownBy(() -> mode.advantages(new double[0]))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void inputIsNotModified() {
        double[] returns = RETURNS.clone();
        for (AdvantageMode mode : AdvantageMode.values()) {
            mode.advantages(returns);
        }
        assertThat(returns).containsExactly(RETURNS);
    }

    @Test
    void parsesConfigStrings() {
        assertThat(AdvantageMode.parse("mean")).isEqualTo(AdvantageMode.MEAN);
        assertThat(AdvantageMode.parse("raw")).isEqualTo(AdvantageMode.RAW);
        assertThat(AdvantageMode.parse("max")).isEqualTo(AdvantageMode.MAX);
        assertThat(AdvantageMode.parse(" RLOO ")).isEqualTo(AdvantageMode.RLOO);
        for (AdvantageMode mode : AdvantageMode.values()) {
            assertThat(AdvantageMode.parse(mode.configName())).isEqualTo(mode);
            assertThat(mode.toString()).isEqualTo(mode.configName());
        }
    }

    @Test
    void parseErrorListsValidValues() {
        assertThatThrownBy(() -> AdvantageMode.parse("median"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("advantage_mode")
                .hasMessageContaining("\"mean\", \"raw\", \"max\", \"rloo\"")
                .hasMessageContaining("\"median\"");
        assertThatThrownBy(() -> AdvantageMode.parse(null)).hasMessageContaining("got null");
    }

    @Test
    void normalizeGolden() {
        // A = [1, 3]: mean 2, std_pop = sqrt(((−1)² + 1²)/2) = 1 → [−1, 1]
        assertThat(Advantages.normalize(new double[] {1, 3})).containsExactly(-1, 1);
        // A = [−2, −1, 0, 3]: mean 0, var = (4+1+0+9)/4 = 3.5, std = 1.870828693
        // → [−1.069044968, −0.534522484, 0, 1.603567451]
        assertThat(Advantages.normalize(new double[] {-2, -1, 0, 3})).containsExactly(
                new double[] {-1.069044968, -0.534522484, 0, 1.603567451}, within(1e-8));
    }

    @Test
    void normalizeFloorsTheStd() {
        // identical values: std 0 → divided by 1e-6, numerator 0 → [0, 0]
        assertThat(Advantages.normalize(new double[] {5, 5})).containsExactly(0, 0);
        // tiny spread: A = [0, 2e-7]: mean 1e-7, std 1e-7 < 1e-6 → (±1e-7)/1e-6 = ±0.1
        assertThat(Advantages.normalize(new double[] {0, 2e-7}))
                .containsExactly(new double[] {-0.1, 0.1}, within(1e-12));
    }

    @Test
    void normalizeLeavesASingleSampleAlone() {
        assertThat(Advantages.normalize(new double[] {7})).containsExactly(7);
    }

    @Test
    void computeAppliesBaselineThenOptionalNormalisation() {
        assertThat(Advantages.compute(RETURNS, AdvantageMode.MAX, false)).containsExactly(-5, -4, -3, 0);
        // MAX then normalise == MEAN then normalise: [−2, −1, 0, 3] normalised (see normalizeGolden)
        assertThat(Advantages.compute(RETURNS, AdvantageMode.MAX, true)).containsExactly(
                new double[] {-1.069044968, -0.534522484, 0, 1.603567451}, within(1e-8));
    }

    @Property
    void normalizedAdvantagesSumToZero(@ForAll @Size(min = 2, max = 16) double[] returns,
                                       @ForAll AdvantageMode mode) {
        for (int k = 0; k < returns.length; k++) {
            returns[k] = Math.max(-1e3, Math.min(1e3, Double.isFinite(returns[k]) ? returns[k] : 0));
        }
        double[] advantages = Advantages.compute(returns, mode, true);
        assertThat(Stats.sum(advantages)).isCloseTo(0.0, within(1e-6));
    }

    @Property
    void allModesAgreeAfterNormalisation(@ForAll @Size(min = 2, max = 8)
                                         java.util.List<@DoubleRange(min = -100, max = 100) Double> values) {
        double[] returns = values.stream().mapToDouble(Double::doubleValue).toArray();
        if (Stats.populationStd(returns) < 1e-3) {
            return;  // below the std floor the modes legitimately differ
        }
        double[] reference = Advantages.compute(returns, AdvantageMode.MEAN, true);
        for (AdvantageMode mode : AdvantageMode.values()) {
            assertThat(Advantages.compute(returns, mode, true)).containsExactly(reference, within(1e-9));
        }
    }

    @Property
    void meanAdvantagesSumToZeroWithoutNormalisation(@ForAll @Size(min = 1, max = 16)
                                                     java.util.List<@DoubleRange(min = -100, max = 100) Double> values) {
        double[] returns = values.stream().mapToDouble(Double::doubleValue).toArray();
        assertThat(Stats.sum(AdvantageMode.MEAN.advantages(returns))).isCloseTo(0.0, within(1e-9));
        assertThat(Stats.sum(AdvantageMode.RLOO.advantages(returns))).isCloseTo(0.0, within(1e-9));
    }
}
