package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** {@link Tensor#logSigmoid}: values and gradient in float32, far into both tails. */
class TensorLogSigmoidTest {
    @Test
    void logSigmoidAndItsGradientByHandIncludingBothTails() {
        double[] x = {0, 2, -2, 100, -100, 1000, -1000};
        // log σ(x) = −log(1 + e^−x): −ln 2 = −0.69314718, −log(1 + e^−2) = −0.12692801, −2 − 0.12692801,
        // −e^−100 ≈ −4e−44 (0 to float32's precision), −100, 0, −1000
        double[] want = {-0.69314718, -0.12692801, -2.12692801, 0, -100, 0, -1000};
        // ∂/∂x Σ log σ(x) = σ(−x): 0.5, 0.11920292, 0.88079708, ≈ 0, 1, 0, 1
        double[] gradient = {0.5, 0.11920292, 0.88079708, 0, 1, 0, 1};
        try (Scope s = Scope.open()) {
            Tensor t = Tensor.ofDoubles(x, Device.CPU).toFloat().requiresGrad(true);
            Tensor y = t.logSigmoid();
            double[] got = y.toDoubleArray();
            y.sum().backward();
            double[] g = t.grad().toDoubleArray();
            for (int k = 0; k < x.length; k++) {
                // float32: relative rounding u = 6e−8 of values up to 1000
                assertThat(got[k]).as("log σ(%s)", x[k]).isFinite().isCloseTo(want[k], within(1e-7 * Math.max(1, Math.abs(want[k]))));
                assertThat(g[k]).as("σ(−%s)", x[k]).isFinite().isCloseTo(gradient[k], within(1e-7));
            }
        }
    }
}
