package comlrl.tensor;

/**
 * A linear layer's weight {@code W [out, in]} reordered once into oneDNN's blocked layout for
 * products with a fixed number of rows, as token-by-token decoding makes them: {@code x @ Wᵀ + b}
 * then streams the weight at close to memory bandwidth (the plain layout reaches about half of it).
 * A copy of the weight at the moment it was packed: rebuild it after the weight changes. Owns the
 * copy: close it.
 *
 * <p>A weight above {@link #MAX_CHUNK_BYTES} is packed as row blocks of {@code W} (blocks of the
 * outputs) of at most that size, and the product concatenates theirs: glibc serves an allocation
 * above its mmap threshold (32 MiB at most) with fresh pages from the kernel every time, each one
 * faulted and zeroed, while smaller ones reuse its heap. A model's weights are repacked after every
 * update, and the 0.5B shape's 272 MB head alone cost 66,000 page faults (80–500 ms of kernel time on
 * a 2-core machine) per generation as one block.
 */
public final class PackedWeight implements AutoCloseable {
    /** The largest block packed as one allocation: below glibc's largest mmap threshold (32 MiB). */
    static final long MAX_CHUNK_BYTES = 24L << 20;

    private final java.util.List<Tensor> blocks; // packed row blocks of W, blockRows rows each (the last fewer)
    private final long blockRows;
    private final long rows;
    private final long out;

    private PackedWeight(java.util.List<Tensor> blocks, long blockRows, long rows, long out) {
        this.blocks = blocks;
        this.blockRows = blockRows;
        this.rows = rows;
        this.out = out;
    }

    /**
     * The packed copy of {@code weight} for products with {@code rows} rows, or null where packing
     * does not apply (no oneDNN in the natives, a GPU tensor, another dtype than float32/bfloat16,
     * or a weight too small for the gain to outweigh the call's overhead).
     */
    public static PackedWeight of(Tensor weight, long rows) {
        if (!Engine.oneDnnLinear() || weight.dim() != 2 || weight.device().isCuda() || !Tensor.isOneDnnType(weight)
                || !Tensor.oneDnnWorthIt(weight) || rows < 1) {
            return null;
        }
        long out = weight.size(0);
        long rowBytes = weight.size(1) * weight.dtype().byteSize();
        long blockRows = Math.max(1, Math.min(out, MAX_CHUNK_BYTES / rowBytes));
        java.util.List<Tensor> blocks = new java.util.ArrayList<>();
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Tensor w = weight.detach().contiguous();
            for (long start = 0; start < out; start += blockRows) {
                blocks.add(NativeOps.oneDnnPack(w.narrow(0, start, Math.min(blockRows, out - start)).contiguous(), rows)
                        .keep());
            }
        } catch (RuntimeException | Error e) {
            blocks.forEach(Tensor::close);
            throw e;
        }
        return new PackedWeight(java.util.List.copyOf(blocks), blockRows, rows, out);
    }

    /** How many blocks the weight was packed as (one unless it is above {@link #MAX_CHUNK_BYTES}). */
    int blocks() {
        return blocks.size();
    }

    /** Rows the packing is for. */
    public long rows() {
        return rows;
    }

    /**
     * {@code x @ Wᵀ + b} for {@code x [..., in]} with {@link #rows()} rows in all (no autograd);
     * other row counts fall back to {@code fallback}'s plain product.
     */
    public Tensor apply(Tensor x, Tensor fallback, Tensor bias) {
        long in = x.size(-1);
        if (x.numel() != rows * in || x.dtype() != fallback.dtype()) {
            return x.linear(fallback, bias);
        }
        long[] shape = x.shape();
        Tensor flat = x.isContiguous() ? x.view(rows, in) : x.contiguous().view(rows, in);
        Tensor y;
        if (blocks.size() == 1) {
            y = NativeOps.oneDnnLinear(flat, blocks.get(0), bias);
        } else {
            java.util.List<Tensor> parts = new java.util.ArrayList<>(blocks.size());
            long start = 0;
            for (Tensor block : blocks) {
                long n = Math.min(blockRows, out - start);
                parts.add(NativeOps.oneDnnLinear(flat, block, bias == null ? null : bias.narrow(0, start, n)));
                start += n;
            }
            y = Tensor.cat(parts, 1);
        }
        shape[shape.length - 1] = out;
        return y.view(shape);
    }

    @Override
    public void close() {
        blocks.forEach(Tensor::close);
    }
}
