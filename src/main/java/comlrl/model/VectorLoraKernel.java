package comlrl.model;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link HostLoraKernel} on the JDK's vector API, at the CPU's preferred width (W = 16 int lanes with
 * AVX-512). An int lane holds a pair of bfloat16 values, so {@code bits << 16} and
 * {@code bits & 0xFFFF0000} are the pairs' even and odd elements as float32, with no conversion
 * between vector shapes. A dot product (x·Aᵀ) sums both; an output row (y + t·Bᵀ) keeps its even and
 * its odd elements in two sums and packs them back, rounded, into their pairs. Rows go four at a
 * time through A, two at a time through Bᵀ, so each vector read from memory serves several rows
 * and several sums are in flight; row lengths are multiples of W pairs ({@link #lanes()}). Bᵀ comes
 * in chunks of W pairs of outputs, a chunk's r rows one after the other, so that it streams from
 * memory in order; while a row of A or a chunk of Bᵀ is worked on, one int per cache line of the
 * next is read, so that those lines are on their way (a single thread's vector loop otherwise keeps
 * too few reads in flight: ~7.5 GB/s from memory here, where memcpy reads 22 GB/s).
 *
 * <p>Written for C2's inlining: no helper that takes or returns a vector is bigger than C2 inlines
 * at a cold call site (35 bytes of bytecode), since a vector that crosses a call that is not inlined
 * is boxed (a 2–3x slower kernel when the rounding was a helper). Loaded by reflection only (see
 * {@link HostLoraKernel#get()}).
 */
final class VectorLoraKernel implements HostLoraKernel {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;
    private static final int W = I.length();
    private static final int HIGH = 0xFFFF0000;
    /** Sum of the values read ahead (kept so that the reads stay). */
    static int touched;

    @Override
    public int lanes() {
        return W;
    }

    @Override
    public void down(int[] x, int xOff, int xStride, int m, int in, int[] a, int aOff, int r, float scale, float[] t) {
        int p = in / 2; // pairs per row
        int i = 0;
        for (; i + 4 <= m; i += 4) {
            int x0 = xOff + i * xStride;
            int x1 = x0 + xStride;
            int x2 = x1 + xStride;
            int x3 = x2 + xStride;
            for (int k = 0; k < r; k++) {
                int ak = aOff + k * p;
                FloatVector s0 = FloatVector.zero(F); // even elements' sums
                FloatVector s1 = s0;
                FloatVector s2 = s0;
                FloatVector s3 = s0;
                FloatVector u0 = s0; // odd elements' sums
                FloatVector u1 = s0;
                FloatVector u2 = s0;
                FloatVector u3 = s0;
                int ahead = Math.min(ak + p, a.length - p); // the next row of A (or this one at the end)
                int seen = 0;
                for (int j = 0; j < p; j += W) {
                    seen += a[ahead + j]; // starts that row's line on its way from memory
                    IntVector av = IntVector.fromArray(I, a, ak + j);
                    FloatVector lo = even(av);
                    FloatVector hi = odd(av);
                    IntVector v = IntVector.fromArray(I, x, x0 + j);
                    s0 = even(v).fma(lo, s0);
                    u0 = odd(v).fma(hi, u0);
                    v = IntVector.fromArray(I, x, x1 + j);
                    s1 = even(v).fma(lo, s1);
                    u1 = odd(v).fma(hi, u1);
                    v = IntVector.fromArray(I, x, x2 + j);
                    s2 = even(v).fma(lo, s2);
                    u2 = odd(v).fma(hi, u2);
                    v = IntVector.fromArray(I, x, x3 + j);
                    s3 = even(v).fma(lo, s3);
                    u3 = odd(v).fma(hi, u3);
                }
                touched += seen;
                t[i * r + k] = scale * (s0.add(u0).reduceLanes(VectorOperators.ADD));
                t[(i + 1) * r + k] = scale * (s1.add(u1).reduceLanes(VectorOperators.ADD));
                t[(i + 2) * r + k] = scale * (s2.add(u2).reduceLanes(VectorOperators.ADD));
                t[(i + 3) * r + k] = scale * (s3.add(u3).reduceLanes(VectorOperators.ADD));
            }
        }
        for (; i < m; i++) {
            int x0 = xOff + i * xStride;
            for (int k = 0; k < r; k++) {
                int ak = aOff + k * p;
                FloatVector s0 = FloatVector.zero(F);
                FloatVector u0 = s0;
                for (int j = 0; j < p; j += W) {
                    IntVector av = IntVector.fromArray(I, a, ak + j);
                    IntVector v = IntVector.fromArray(I, x, x0 + j);
                    s0 = even(v).fma(even(av), s0);
                    u0 = odd(v).fma(odd(av), u0);
                }
                t[i * r + k] = scale * (s0.add(u0).reduceLanes(VectorOperators.ADD));
            }
        }
    }

    @Override
    public void up(float[] t, int m, int r, int[] bt, int btOff, int out, int[] y, int yOff, int yStride) {
        int p = out / 2;
        int seen = 0;
        for (int o = 0, c = btOff; o < p; o += W, c += r * W) {
            // this chunk of Bᵀ (r × W pairs, contiguous) comes from memory for the first rows, from L1 after;
            // one read per line of the next chunk starts it on its way
            int ahead = Math.min(c + r * W, bt.length - r * W);
            for (int k = 0; k < r; k++) {
                seen += bt[ahead + k * W];
            }
            int i = 0;
            for (; i + 2 <= m; i += 2) {
                upChunk2(t, i * r, r, r, bt, c, y, yOff + i * yStride + o, yStride);
            }
            if (i < m) { // the last row of an odd count, as both rows of a pair: the same sums, stored twice
                upChunk2(t, i * r, 0, r, bt, c, y, yOff + i * yStride + o, 0);
            }
        }
        touched += seen;
    }

    /**
     * W pairs of two rows: {@code y[at + q·stride + o] ← r(y[…] + Σ_k t[t0 + q·tStride + k]·bt[b0 + k·W + o])},
     * elementwise, o < W, q = 0, 1: four sums in flight.
     */
    private static void upChunk2(float[] t, int t0, int tStride, int r, int[] bt, int b0, int[] y, int at, int stride) {
        IntVector v = IntVector.fromArray(I, y, at);
        FloatVector e0 = even(v);
        FloatVector d0 = odd(v);
        v = IntVector.fromArray(I, y, at + stride);
        FloatVector e1 = even(v);
        FloatVector d1 = odd(v);
        for (int k = 0; k < r; k++) {
            IntVector b = IntVector.fromArray(I, bt, b0 + k * W);
            FloatVector be = even(b);
            FloatVector bo = odd(b);
            FloatVector c = FloatVector.broadcast(F, t[t0 + k]);
            e0 = be.fma(c, e0);
            d0 = bo.fma(c, d0);
            c = FloatVector.broadcast(F, t[t0 + tStride + k]);
            e1 = be.fma(c, e1);
            d1 = bo.fma(c, d1);
        }
        // rounded to nearest even at bit 16 (NaN → 0x7FC0), even elements to the low halves, odd to the high
        IntVector e = e0.reinterpretAsInts();
        IntVector d = d0.reinterpretAsInts();
        e = e.add(e.lanewise(VectorOperators.LSHR, 16).lanewise(VectorOperators.AND, 1)).add(0x7FFF)
                .blend(0x7FC00000, e0.test(VectorOperators.IS_NAN).cast(I));
        d = d.add(d.lanewise(VectorOperators.LSHR, 16).lanewise(VectorOperators.AND, 1)).add(0x7FFF)
                .blend(0x7FC00000, d0.test(VectorOperators.IS_NAN).cast(I));
        e.lanewise(VectorOperators.LSHR, 16).lanewise(VectorOperators.OR, d.lanewise(VectorOperators.AND, HIGH))
                .intoArray(y, at);
        e = e1.reinterpretAsInts();
        d = d1.reinterpretAsInts();
        e = e.add(e.lanewise(VectorOperators.LSHR, 16).lanewise(VectorOperators.AND, 1)).add(0x7FFF)
                .blend(0x7FC00000, e1.test(VectorOperators.IS_NAN).cast(I));
        d = d.add(d.lanewise(VectorOperators.LSHR, 16).lanewise(VectorOperators.AND, 1)).add(0x7FFF)
                .blend(0x7FC00000, d1.test(VectorOperators.IS_NAN).cast(I));
        e.lanewise(VectorOperators.LSHR, 16).lanewise(VectorOperators.OR, d.lanewise(VectorOperators.AND, HIGH))
                .intoArray(y, at + stride);
    }

    /** The pairs' even elements, as float32. */
    private static FloatVector even(IntVector pairs) {
        return pairs.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    /** The pairs' odd elements, as float32. */
    private static FloatVector odd(IntVector pairs) {
        return pairs.lanewise(VectorOperators.AND, HIGH).reinterpretAsFloats();
    }
}
