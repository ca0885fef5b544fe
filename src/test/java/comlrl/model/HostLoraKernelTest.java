package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The host kernel's two products on bfloat16 pairs, against float64 (the dot products, whose float32
 * sums go in another order) and against the same float32 operations rounded by libtorch (the
 * additions, whose order is the formula's).
 */
class HostLoraKernelTest {
    static final double U16 = 0x1p-8;
    static final double U32 = 0x1p-24;

    /** The build runs the JVM with the vector module, so the kernel is there to test. */
    static HostLoraKernel kernel() {
        HostLoraKernel k = HostLoraKernel.get();
        assertThat(k).as("run with --add-modules jdk.incubator.vector").isNotNull();
        return k;
    }

    /** n random values rounded to bfloat16 (by libtorch), as float32 values and as pairs. */
    private static float[] bf16Values(Random rnd, int n, double std) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (rnd.nextGaussian() * std);
        }
        try (Scope s = Scope.open()) {
            return Tensor.ofFloats(v, Device.CPU, n).to(DType.BF16).toFloatArray();
        }
    }

    private static int[] pairs(float[] bf16Values) {
        int[] out = new int[bf16Values.length / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (Float.floatToRawIntBits(bf16Values[2 * i]) >>> 16) | (Float.floatToRawIntBits(bf16Values[2 * i + 1]) & 0xFFFF0000);
        }
        return out;
    }

    private static float[] values(int[] pairs) {
        float[] out = new float[2 * pairs.length];
        for (int i = 0; i < pairs.length; i++) {
            out[2 * i] = Float.intBitsToFloat(pairs[i] << 16);
            out[2 * i + 1] = Float.intBitsToFloat(pairs[i] & 0xFFFF0000);
        }
        return out;
    }

    /**
     * {@code t = scale·x·Aᵀ} for 5 rows (a block of four and one more) from an offset: each within
     * the float32 sum's bound {@code in·u₃₂·scale·Σ|x||a|} of the float64 value; a missing scale, a
     * row or an A row off by one, or an odd element left out is off by about the value itself.
     */
    @Test
    void theDotProductsAreTheExactOnesUpToFloat32Sums() {
        HostLoraKernel k = kernel();
        Random rnd = new Random(3);
        int m = 5;
        int r = 3;
        int in = 2 * k.lanes() * 3;
        float[] x = bf16Values(rnd, (m + 1) * in, 1);
        float[] a = bf16Values(rnd, (r + 1) * in, 1);
        float[] t = new float[m * r];
        float scale = 1.5f;
        k.down(pairs(x), in / 2, in / 2, m, in, pairs(a), in / 2, r, scale, t); // skipping x's first row and A's first row
        for (int i = 0; i < m; i++) {
            for (int q = 0; q < r; q++) {
                double exact = 0;
                double mag = 0;
                for (int j = 0; j < in; j++) {
                    exact += (double) x[(i + 1) * in + j] * a[(q + 1) * in + j];
                    mag += Math.abs((double) x[(i + 1) * in + j] * a[(q + 1) * in + j]);
                }
                assertThat(Math.abs(t[i * r + q] - scale * exact)).as("row %d, rank %d", i, q)
                        .isLessThanOrEqualTo(scale * (in + 1) * U32 * mag);
                assertThat(mag).isLessThan(10 * Math.abs(exact) + in); // the bound is far below a wrong value
            }
        }
    }

    /**
     * {@code y ← r(y + t·Bᵀ)} for 5 rows, Bᵀ in chunks of W pairs: bit for bit the float32 sums
     * {@code fma(t_k, b_k, …fma(t_0, b_0, y))} rounded to bfloat16 by libtorch (nearest even), for
     * every element, infinities included (a NaN stays a NaN). Truncating instead of rounding, a chunk read
     * in row order, or a missing term changes bits.
     */
    @Test
    void theAdditionsAreTheFloat32SumsRoundedAsLibtorchRounds() {
        HostLoraKernel k = kernel();
        Random rnd = new Random(4);
        int m = 5;
        int r = 3;
        int w = 2 * k.lanes();
        int out = w * 2;
        float[] y = bf16Values(rnd, (m + 1) * out, 0.5);
        y[out + 3] = Float.NaN;
        y[out + 7] = Float.POSITIVE_INFINITY;
        float[] bt = bf16Values(rnd, r * out, 1);          // Bᵀ [r, out]
        float[] t = new float[m * r];
        for (int i = 0; i < t.length; i++) {
            t[i] = (float) rnd.nextGaussian();
        }
        float[] tiled = new float[r * out];                 // [out/w, r, w]
        for (int c = 0; c < out / w; c++) {
            for (int q = 0; q < r; q++) {
                System.arraycopy(bt, q * out + c * w, tiled, (c * r + q) * w, w);
            }
        }
        int[] yp = pairs(y);
        k.up(t, m, r, pairs(tiled), 0, out, yp, out / 2, out / 2);  // rows 1..m of y
        float[] want = new float[m * out];
        for (int i = 0; i < m; i++) {
            for (int o = 0; o < out; o++) {
                float s = y[(i + 1) * out + o];
                for (int q = 0; q < r; q++) {
                    s = Math.fma(t[i * r + q], bt[q * out + o], s);
                }
                want[i * out + o] = s;
            }
        }
        float[] wantBf16;
        try (Scope s = Scope.open()) {
            wantBf16 = Tensor.ofFloats(want, Device.CPU, want.length).to(DType.BF16).toFloatArray();
        }
        float[] got = values(yp);
        for (int i = 0; i < out; i++) {
            assertThat(Float.floatToRawIntBits(got[i])).as("row 0 untouched").isEqualTo(Float.floatToRawIntBits(y[i]));
        }
        int rounded = 0;
        for (int i = 0; i < want.length; i++) {
            if (Float.isNaN(want[i])) { // libtorch's vectorized conversion writes NaN as 0xFFFF, its scalar one 0x7FC0
                assertThat(got[out + i]).as("element %d", i).isNaN();
                continue;
            }
            assertThat(Float.floatToRawIntBits(got[out + i])).as("element %d", i)
                    .isEqualTo(Float.floatToRawIntBits(wantBf16[i]));
            rounded += Float.floatToRawIntBits(want[i]) != Float.floatToRawIntBits(wantBf16[i]) ? 1 : 0;
        }
        assertThat(Float.isNaN(got[out + 3])).isTrue();
        assertThat(got[out + 7]).isEqualTo(Float.POSITIVE_INFINITY);
        assertThat(rounded).isGreaterThan(want.length / 2); // the sums do need rounding
    }

    /** A value halfway between two bfloat16 values rounds to the even one, as libtorch's conversion. */
    @Test
    void tiesRoundToEven() {
        HostLoraKernel k = kernel();
        int w = 2 * k.lanes();
        int m = 3; // a pair of rows and a last one: every place that rounds
        float[] y = new float[m * w];
        float[] bt = new float[w];
        float[] wantF = new float[m * w];
        for (int i = 0; i < m * w; i++) {
            y[i] = 1f + (i % w) * 0x1p-7f;                   // bf16 values with even and odd last bits
            bt[i % w] = 0x1p-8f;                              // t·b = half an ulp of [1, 2)
            wantF[i] = y[i] + bt[i % w];
        }
        int[] yp = pairs(y);
        k.up(new float[] {1f, 1f, 1f}, m, 1, pairs(bt), 0, w, yp, 0, w / 2);
        float[] want;
        try (Scope s = Scope.open()) {
            want = Tensor.ofFloats(wantF, Device.CPU, m * w).to(DType.BF16).toFloatArray();
        }
        float[] got = values(yp);
        for (int i = 0; i < m * w; i++) {
            assertThat(got[i]).as("element %d", i).isEqualTo(want[i]);
            assertThat(got[i]).isEqualTo(i % 2 == 0 ? y[i] : y[i] + 0x1p-7f);
        }
    }
}
