package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

/**
 * How far two float32 computations of the same gradient may differ when they sum in other orders or
 * shapes (a trainer's padded batch against completions scored one by one, a surrogate loss against
 * autograd through the formula), for the tests that compare them.
 *
 * <p>A parameter's gradient element is a sum with one product per token position of the batch,
 * {@code n} of them. Evaluated in float32 in any order, such a sum is off by at most
 * γ_n·Σ|t| ≈ n·u·Σ|t| (u = 2^-24 ≈ 6e-8; Higham, <i>Accuracy and Stability of Numerical
 * Algorithms</i>, §4.2), so two orders differ by at most 2·n·u·Σ|t|; the terms carry their own
 * rounding from the forward and backward passes, of the same order, which doubles it once more.
 * Σ|t| is taken as the parameter's largest gradient element: the terms of one parameter have one
 * magnitude (a sum cancelling far below its terms would need more). Hence, per parameter p:
 * <pre>
 *   |got[j] − want[j]| ≤ 4·n·u·max_k |want_p[k]|
 * </pre>
 * Measured differences are 18 to 700 times smaller (they grow like √n·u rather than n·u) on AVX2
 * and AVX-512 kernels alike; a wrong weight, a lost term or padding that leaks into the rows (a
 * batch scored without its attention mask fails every caller) moves elements by a good fraction of
 * the parameter's largest one. A parameter whose expected gradient is exactly zero must get exactly
 * zero.
 */
public final class Rounding {
    /** float32 unit roundoff. */
    public static final double U = 0x1p-24;

    private Rounding() {
    }

    /**
     * How far one forward's outputs may move between two float32 computations in other orders or
     * shapes (kernels, padding, batching): every product sums at most {@code terms} float32 terms,
     * each rounding adds at most u of the magnitude, and the {@code layers} layers' errors add, so
     * an output of a forward whose outputs are at most {@code largest} moves by at most
     * {@code u·terms·layers·largest}.
     */
    public static double forwardBound(int terms, int layers, double largest) {
        return U * terms * layers * largest;
    }

    /**
     * How far a loss {@code Σ_k w_k·Σ_{t≤T} log π(y_{k,t})} may move between two float32 computations
     * (a trainer's padded batch against completions scored alone). Each log-probability
     * {@code z_y − logsumexp(z)} moves with the logits, by at most {@code 2·forwardBound}, and is
     * rounded at its own size {@code m = ln V + 2·max|z|}; a completion's sum of T of them rounds at
     * most T times at a size of at most {@code T·m}. Per computation
     * {@code T·(2·forwardBound + u·m) + T²·u·m}, two computations, scaled by {@code Σ_k |w_k|}.
     *
     * @param tokens T, the longest completion
     * @param vocab V
     * @param weightSum {@code Σ_k |w_k|} (at most 1 for MAGRPO's {@code −A_k/G} with normalised advantages)
     */
    public static double logprobSumBound(int tokens, int vocab, int terms, int layers, double maxLogit,
            double weightSum) {
        double m = Math.log(vocab) + 2 * maxLogit;
        double each = tokens * (2 * forwardBound(terms, layers, maxLogit) + U * m) + (double) tokens * tokens * U * m;
        return 2 * weightSum * each;
    }

    /** The bound above for a sum over {@code positions} token positions and terms of size {@code scale}. */
    public static double sumBound(int positions, double scale) {
        return 4.0 * positions * U * scale;
    }

    /**
     * Asserts that {@code got} and {@code want} (gradients by parameter name) are the same sums over at
     * most {@code positions} token positions up to float32 rounding, and that they are not trivially
     * zero (the largest element exceeds 1e-3).
     */
    public static void assertSameGradients(Map<String, float[]> got, Map<String, float[]> want, int positions) {
        assertThat(got.keySet()).containsAll(want.keySet());
        double largest = 0;
        for (Map.Entry<String, float[]> e : want.entrySet()) {
            float[] w = e.getValue();
            float[] g = got.get(e.getKey());
            assertThat(g).as(e.getKey()).hasSameSizeAs(w);
            double scale = 0;
            for (float x : w) {
                scale = Math.max(scale, Math.abs(x));
            }
            largest = Math.max(largest, scale);
            double bound = sumBound(positions, scale);
            for (int j = 0; j < w.length; j++) {
                if (Math.abs((double) g[j] - w[j]) > bound) { // one assertion object per failure, not per element
                    assertThat((double) g[j]).as("%s[%d] (largest |gradient| of the parameter %s)", e.getKey(), j, scale)
                            .isCloseTo(w[j], org.assertj.core.data.Offset.offset(bound));
                }
            }
        }
        assertThat(largest).as("largest gradient element").isGreaterThan(1e-3);
    }

    /** {@link #assertSameGradients(Map, Map, int)} for gradients listed in parameter order. */
    public static void assertSameGradients(List<float[]> got, List<float[]> want, int positions) {
        assertThat(got).hasSameSizeAs(want);
        Map<String, float[]> g = new java.util.LinkedHashMap<>();
        Map<String, float[]> w = new java.util.LinkedHashMap<>();
        for (int i = 0; i < want.size(); i++) {
            g.put("parameter " + i, got.get(i));
            w.put("parameter " + i, want.get(i));
        }
        assertSameGradients(g, w, positions);
    }
}
