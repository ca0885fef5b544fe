package comlrl.tensor;

import org.bytedeco.javacpp.IntPointer;

/**
 * A bfloat16 CPU tensor seen as {@code rows × cols} values in place, for Java code that reads and
 * writes them without a libtorch operation: the last dimension contiguous, the leading ones
 * flattened into rows an even stride apart (a contiguous tensor, or a column range of one, such as
 * the q view of a stacked q, k, v product). Values move as pairs, the way they lie in memory: an int
 * holds elements 2l (low half) and 2l + 1 (high half) of a row, so rows and strides are even.
 *
 * <p>Writes change the tensor's memory behind autograd's back: only for tensors no graph needs (no
 * gradient required, inference or no-grad mode).
 */
public final class HostRows {
    private final Tensor tensor;
    private final int rows;
    private final int cols;
    private final long rowStride;

    private HostRows(Tensor tensor, int rows, int cols, long rowStride) {
        this.tensor = tensor;
        this.rows = rows;
        this.cols = cols;
        this.rowStride = rowStride;
    }

    /**
     * The rows of {@code t}, or null unless t is a nonempty bfloat16 CPU tensor whose last dimension
     * is contiguous and of even length and whose leading dimensions flatten into rows an even number
     * of values apart.
     */
    public static HostRows of(Tensor t) {
        if (t.dtype() != DType.BF16 || t.dim() < 1 || t.device().isCuda() || t.numel() == 0) {
            return null;
        }
        org.bytedeco.pytorch.Tensor h = t.handle;
        int last = t.dim() - 1;
        long cols = h.size(last);
        if (cols % 2 != 0 || h.stride(last) != 1) {
            return null;
        }
        long rowStride = cols;
        long rows = 1;
        long expected = -1; // the stride the next outer dimension of size > 1 must have
        for (int i = last - 1; i >= 0; i--) {
            long n = h.size(i);
            if (n == 1) {
                continue;
            }
            long s = h.stride(i);
            if (expected < 0) {
                rowStride = s;
            } else if (s != expected) {
                return null;
            }
            expected = s * n;
            rows *= n;
        }
        if ((rows - 1) * rowStride + cols > Integer.MAX_VALUE || rowStride % 2 != 0 || (rows > 1 && rowStride < cols)) {
            return null;
        }
        return new HostRows(t, (int) rows, (int) cols, rowStride);
    }

    public int rows() {
        return rows;
    }

    public int cols() {
        return cols;
    }

    /** How many values apart the rows start (even; {@link #cols()} when they are back to back). */
    public int rowStride() {
        return (int) rowStride;
    }

    /** The ints from the first row's first pair to the last row's last: row i's pairs start at int {@code i·rowStride()/2}. */
    public int span() {
        return (int) (((rows - 1) * rowStride + cols) / 2);
    }

    /** Copies the {@link #span()} ints, the rows and whatever lies between them, into {@code dst[0, span)}. */
    public void read(int[] dst) {
        try (IntPointer p = new IntPointer(tensor.dataPointer())) {
            p.get(dst, 0, span());
        }
    }

    /**
     * Writes {@code src[0, span)} over the {@link #span()} ints: the rows, and between them what
     * {@link #read} found there (so read first, change the rows only, write back).
     */
    public void write(int[] src) {
        try (IntPointer p = new IntPointer(tensor.dataPointer())) {
            p.put(src, 0, span());
        }
    }
}
