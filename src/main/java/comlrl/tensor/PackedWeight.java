package comlrl.tensor;

/**
 * A linear layer's weight {@code W [out, in]} reordered once into oneDNN's blocked layout for
 * products with a fixed number of rows, as token-by-token decoding makes them: {@code x @ Wᵀ + b}
 * then streams the weight at close to memory bandwidth (the plain layout reaches about half of it).
 * A copy of the weight at the moment it was packed: rebuild it after the weight changes. Owns the
 * copy: close it.
 */
public final class PackedWeight implements AutoCloseable {
    private final Tensor packed;
    private final long rows;
    private final long out;

    private PackedWeight(Tensor packed, long rows, long out) {
        this.packed = packed;
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
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Tensor w = weight.detach().contiguous();
            return new PackedWeight(NativeOps.oneDnnPack(w, rows).keep(), rows, weight.size(0));
        }
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
        Tensor y = NativeOps.oneDnnLinear(flat, packed, bias);
        shape[shape.length - 1] = out;
        return y.view(shape);
    }

    @Override
    public void close() {
        packed.close();
    }
}
