package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/** {@link PackedWeight}: the packed product equals the plain one, for a weight packed as one block and as several. */
class PackedWeightTest {
    /**
     * Small integers in x, W and b make every product and partial sum an integer below 2^24, exact in
     * float32 whatever the summation order, so the packed and the plain product must agree bit for bit.
     * 8192 × 1024 float32 is 32 MiB: two blocks of 6144 and 2048 rows (a wrong block offset, a bias
     * slice from the wrong place or blocks concatenated in the wrong order all change values).
     */
    @Test
    void packedProductsEqualThePlainProductForOneAndSeveralBlocks() {
        assumeTrue(Engine.oneDnnLinear(), "the natives have no oneDNN");
        for (long out : new long[] {1024, 8192}) {
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                long in = 1024;
                long rows = 4;
                Tensor w = integers(out * in, 7).view(out, in);
                Tensor b = integers(out, 11);
                Tensor x = integers(rows * in, 13).view(2, 2, in);
                try (PackedWeight p = PackedWeight.of(w, rows)) {
                    assertThat(p).isNotNull();
                    assertThat(p.blocks()).as("blocks of a %d x %d float32 weight", out, in).isEqualTo(out == 8192 ? 2 : 1);
                    Tensor packed = p.apply(x, w, b);
                    assertThat(packed.shape()).containsExactly(2, 2, out);
                    assertThat(packed.toFloatArray()).containsExactly(x.linear(w, b).toFloatArray());
                    assertThat(p.apply(x, w, null).toFloatArray()).containsExactly(x.linear(w, null).toFloatArray());
                }
            }
        }
    }

    /**
     * A copy packed for 4 rows serves other row counts (its products checked against a copy packed for
     * them; where the two disagree, the plain product), a prefill's many rows too: every product
     * equals the plain one bit for bit (integer values, as above), for one block and for two.
     */
    @Test
    void aCopyPackedForOneRowCountServesOthers() {
        assumeTrue(Engine.oneDnnLinear(), "the natives have no oneDNN");
        for (long out : new long[] {1024, 8192}) {
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                long in = 1024;
                Tensor w = integers(out * in, 7).view(out, in);
                Tensor b = integers(out, 11);
                try (PackedWeight p = PackedWeight.of(w, 4)) {
                    for (long rows : new long[] {1, 3, 4, 12, 4, 3, PackedWeight.MAX_ROWS + 1, 200}) {
                        Tensor x = integers(rows * in, 13 + rows).view(rows, 1, in);
                        assertThat(p.fits(x)).as("%d rows", rows).isTrue();
                        Tensor packed = p.apply(x, w, b);
                        assertThat(packed.shape()).containsExactly(rows, 1, out);
                        assertThat(packed.bitEquals(x.linear(w, b))).as("%d rows", rows).isTrue();
                    }
                }
            }
        }
    }

    /**
     * Whether a copy packed for one row count serves another is a property of the kernels: it is
     * checked once per dtype, weight shape, hint and row count in the process, not again for another
     * copy of the same shape (a full agent repacks after every update), and checked anew for another
     * hint or another shape. (A shape no other test packs, so the counts are this test's own.)
     */
    @Test
    void aRowCountIsCheckedOncePerShapeAndHint() {
        assumeTrue(Engine.oneDnnLinear(), "the natives have no oneDNN");
        long in = 1024;
        long out = 1536;
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Tensor w = integers(out * in, 7).view(out, in);
            Tensor other = integers(out * in, 5).view(out, in);
            Tensor x = integers(3 * in, 13).view(3, in);
            int before = PackedWeight.CHECKS.get();
            try (PackedWeight p = PackedWeight.of(w, 6)) {
                assertThat(p.fits(x)).isTrue();
                assertThat(p.fits(x)).isTrue();
            }
            assertThat(PackedWeight.CHECKS.get() - before).as("the first copy checks 3 rows once").isEqualTo(1);
            try (PackedWeight q = PackedWeight.of(other, 6)) {
                assertThat(q.fits(x)).isTrue();
                assertThat(q.apply(x, other, null).toFloatArray()).containsExactly(x.linear(other, null).toFloatArray());
            }
            assertThat(PackedWeight.CHECKS.get() - before).as("another copy of the shape, same hint").isEqualTo(1);
            try (PackedWeight r = PackedWeight.of(w, 7)) {
                assertThat(r.fits(x)).isTrue();
            }
            assertThat(PackedWeight.CHECKS.get() - before).as("another hint").isEqualTo(2);
            Tensor narrower = integers((out - 512) * in, 7).view(out - 512, in);
            try (PackedWeight n = PackedWeight.of(narrower, 6)) {
                assertThat(n.fits(x)).isTrue();
            }
            assertThat(PackedWeight.CHECKS.get() - before).as("another shape").isEqualTo(3);
        }
    }

    /** {@code n} float32 values in [-3, 3]: {@code ((i · k) mod 7) - 3}. */
    private static Tensor integers(long n, long k) {
        float[] v = new float[(int) n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) ((i * k) % 7 - 3);
        }
        return Tensor.ofFloats(v, Device.CPU, n);
    }
}
