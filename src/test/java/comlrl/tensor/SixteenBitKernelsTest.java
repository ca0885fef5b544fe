package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * The 16-bit CPU routes of {@link Tensor#attention} (computed in float32, rounded back) and
 * {@link Tensor#linear} (strided inputs made contiguous): the values worked by hand, and the
 * gradients of bf16 attention against float32 autograd up to one bf16 rounding.
 *
 * <p>bf16 keeps 8 significant bits: rounding to nearest moves a value by at most
 * {@code U_BF16·|x|}, {@code U_BF16 = 2^-8}. Results computed in float32 and rounded once to bf16
 * are within that of the exact value, plus float32's own rounding (far below, {@code 1e-6} relative
 * for these few terms).
 */
class SixteenBitKernelsTest {
    private static final double U_BF16 = 0x1p-8;

    /**
     * One head, two positions, D = 2, scale 1, causal; keys and values exact in bf16:
     * q = [[1, 0], [0, 1]], k = [[1, 0], [1, 1]], v = [[1, 2], [3, −1]].
     * Row 0 sees key 0 alone: out₀ = v₀ = [1, 2]. Row 1: scores q₁·k = [0, 1], softmax
     * [1/(1+e), e/(1+e)] = [0.26894142, 0.73105858]; out₁ = 0.26894142·[1, 2] + 0.73105858·[3, −1]
     * = [2.46211716, −0.19317574].
     */
    @Test
    void bf16AttentionIsTheSoftmaxWorkedByHandRoundedOnce() {
        double[] want = {1, 2, 2.46211716, -0.19317574};
        try (Scope s = Scope.open()) {
            Tensor q = Tensor.ofFloats(new float[] {1, 0, 0, 1}, Device.CPU, 1, 1, 2, 2).to(DType.BF16);
            Tensor k = Tensor.ofFloats(new float[] {1, 0, 1, 1}, Device.CPU, 1, 1, 2, 2).to(DType.BF16);
            Tensor v = Tensor.ofFloats(new float[] {1, 2, 3, -1}, Device.CPU, 1, 1, 2, 2).to(DType.BF16);
            Tensor out = Tensor.attention(q, k, v, null, true, 1.0, false);
            assertThat(out.dtype()).isEqualTo(DType.BF16);
            double[] got = out.toDoubleArray();
            for (int j = 0; j < want.length; j++) {
                assertThat(got[j]).as("out[%d]", j).isCloseTo(want[j], within(U_BF16 * Math.abs(want[j]) + 1e-6));
            }
            // the same with a boolean mask that hides key 0 from row 1: out₁ = v₁
            Tensor mask = Tensor.ofLongs(new long[] {1, 0, 0, 1}, Device.CPU, 1, 1, 2, 2).ne(0);
            double[] masked = Tensor.attention(q, k, v, mask, false, 1.0, false).toDoubleArray();
            assertThat(masked).containsExactly(1, 2, 3, -1);
        }
    }

    /**
     * Grouped-query bf16 attention at a scoring-like shape (2 KV heads for 6 query heads, a padding
     * mask): the output and the gradients of q, k, v against float32 autograd on the same bf16
     * values with the same bf16 upstream gradient. The 16-bit route rounds each once to bf16, so
     * every element is within {@code U_BF16·|float32 value|} (plus float32 slack) of it.
     */
    @Test
    void bf16AttentionAndItsGradientsAreFloat32RoundedOnce() {
        try (Scope s = Scope.open(); Rng rng = new Rng(11)) {
            Tensor q = Tensor.randn(rng, 1, DType.F32, Device.CPU, 2, 6, 5, 8).to(DType.BF16);
            Tensor k = Tensor.randn(rng, 1, DType.F32, Device.CPU, 2, 2, 5, 8).to(DType.BF16);
            Tensor v = Tensor.randn(rng, 1, DType.F32, Device.CPU, 2, 2, 5, 8).to(DType.BF16);
            Tensor g = Tensor.randn(rng, 1, DType.F32, Device.CPU, 2, 6, 5, 8).to(DType.BF16);
            // row 1 left-padded by 2: keys 0, 1 hidden; every query sees itself
            long[] m = new long[2 * 5 * 5];
            for (int b = 0; b < 2; b++) {
                for (int i = 0; i < 5; i++) {
                    for (int j = 0; j <= i; j++) {
                        m[(b * 5 + i) * 5 + j] = b == 1 && j < 2 && i != j ? 0 : 1;
                    }
                }
            }
            Tensor mask = Tensor.ofLongs(m, Device.CPU, 2, 1, 5, 5).ne(0);
            Tensor[] bf = {q.detach().requiresGrad(true), k.detach().requiresGrad(true), v.detach().requiresGrad(true)};
            Tensor[] f32 = {q.toFloat().requiresGrad(true), k.toFloat().requiresGrad(true), v.toFloat().requiresGrad(true)};
            Tensor outBf = Tensor.attention(bf[0], bf[1], bf[2], mask, false, 0.3, true);
            Tensor outF = Tensor.attention(f32[0], f32[1], f32[2], mask, false, 0.3, true);
            outBf.backward(g);
            outF.backward(g.toFloat());
            assertWithinOneRounding("output", outBf, outF);
            String[] names = {"dq", "dk", "dv"};
            for (int i = 0; i < 3; i++) {
                assertThat(bf[i].grad().dtype()).isEqualTo(DType.BF16);
                assertWithinOneRounding(names[i], bf[i].grad(), f32[i].grad());
            }
        }
    }

    private static void assertWithinOneRounding(String what, Tensor got, Tensor want) {
        double[] a = got.toDoubleArray();
        double[] b = want.toDoubleArray();
        double largest = 0;
        for (int j = 0; j < a.length; j++) {
            assertThat(a[j]).as("%s[%d]", what, j).isCloseTo(b[j], within(U_BF16 * Math.abs(b[j]) + 1e-6));
            largest = Math.max(largest, Math.abs(b[j]));
        }
        assertThat(largest).as("%s is not trivially zero", what).isGreaterThan(1e-2);
    }

    /**
     * A bf16 linear of a narrowed (strided) 3-D input without autograd, as the head of a no-grad
     * scoring pass: x rows [3, 4] and [7, 8] (position 1 of two sequences), W = [[1, 0], [1, 1],
     * [0, −1]], b = [0.5, 0, 1]: y = [[3.5, 7, −3], [7.5, 15, −7]] (exact in bf16), and a strided
     * input with autograd gives the same bits.
     */
    @Test
    void bf16LinearOfANarrowedSequenceWorkedByHand() {
        try (Scope s = Scope.open()) {
            Tensor x = Tensor.ofFloats(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, Device.CPU, 2, 2, 2).to(DType.BF16);
            Tensor w = Tensor.ofFloats(new float[] {1, 0, 1, 1, 0, -1}, Device.CPU, 3, 2).to(DType.BF16);
            Tensor b = Tensor.ofFloats(new float[] {0.5f, 0, 1}, Device.CPU, 3).to(DType.BF16);
            Tensor tail = x.narrow(1, 1, 1);
            assertThat(tail.isContiguous()).isFalse();
            Tensor y;
            try (GradMode g = GradMode.noGrad()) {
                y = tail.linear(w, b);
            }
            assertThat(y.shape()).containsExactly(2, 1, 3);
            assertThat(y.toDoubleArray()).containsExactly(3.5, 7, -3, 7.5, 15, -7);
            Tensor leaf = x.detach().requiresGrad(true);
            assertThat(leaf.narrow(1, 1, 1).linear(w, b).bitEquals(y)).isTrue();
        }
    }
}
