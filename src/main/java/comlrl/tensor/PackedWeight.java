package comlrl.tensor;

import java.util.ArrayList;
import java.util.List;

/**
 * A linear layer's weight {@code W [out, in]} reordered once into oneDNN's blocked layout for
 * products with few rows, as token-by-token decoding makes them: {@code x @ Wᵀ + b} then streams the
 * weight at close to memory bandwidth (the plain layout reaches about half of it). A copy of the
 * weight at the moment it was packed: rebuild it after the weight changes. Owns the copy: close it.
 *
 * <p>The packing takes a row count as a hint. One packed copy serves every row count: products of a
 * row count other than the hint are compared once, bit for bit and on random rows, with those of a
 * temporary copy packed for it, and the row count is served only if they agree (on the Xeon with AMX of our
 * measurements the blocked layout does not depend on the hint, in bfloat16 and float32 alike, and
 * products of 1 to 16 rows ran as fast either way); a row count that disagrees goes to the plain
 * product. The answer belongs to the kernels, not to the weight's values, so it is kept for the
 * process by dtype, weight shape, hint and row count: a full agent that repacks after every update,
 * or another agent of the same shape, does not check again. So a shared base that decodes 12 rows in
 * training and 3 in evaluation holds one packed copy, not two, and a generation's prefill (a prompt's
 * tokens, many rows) runs on the copy its decoding packs: at the 0.5B shape on 2 threads of that
 * Xeon, with a copy packed for 12 rows, one 64-token prompt took 269–272 against 338–384 ms in
 * float32 (OpenBLAS repacks each weight for every product, streaming it from memory) and 88–94
 * against 110–111 ms in bfloat16; three prompts in one pass 624–659 against 708–733 ms in float32.
 *
 * <p>{@link #stacked} packs several weights that read the same input ({@code q, k, v}; {@code gate,
 * up}) as one {@code [W_1; W_2; ...]} with its biases: one product in place of several, and the
 * narrow ones (a 0.5B model's 128-row {@code k} and {@code v}, too small to pack on their own) at the
 * stacked weight's speed. At the 0.5B shape, 4 bfloat16 rows: q, k, v 82 + 84 + 84 µs apart, 53 µs
 * stacked; gate and up 2 × 329 µs apart, 491 µs stacked.
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
    /** The most rows a copy is worth packing for: decoding's row counts (a prefill runs on the copy whatever its rows). */
    public static final long MAX_ROWS = 64;

    /** Whether a copy packed for {@code hint} rows serves {@code rows} rows, by dtype and shape (see the class comment). */
    private static final java.util.Map<List<Long>, Boolean> SERVES = new java.util.concurrent.ConcurrentHashMap<>();

    /** How many row counts were checked against a copy of their own (tests). */
    static final java.util.concurrent.atomic.AtomicInteger CHECKS = new java.util.concurrent.atomic.AtomicInteger();

    private final List<Tensor> blocks; // packed row blocks of W, blockRows rows each (the last fewer)
    private final long blockRows;
    private final long rows;
    private final long in;
    private final DType dtype;
    private final long[] parts;        // the stacked weights' output sizes (one entry for a single weight)
    private final long out;            // their sum: W's rows
    private final Tensor bias;         // stacked: the weights' biases end to end (null without); single: null
    private final List<Tensor> sources; // the weights packed (not owned), to check another row count against

    private PackedWeight(List<Tensor> blocks, long blockRows, long rows, long in, DType dtype, long[] parts,
            Tensor bias, List<Tensor> sources) {
        this.blocks = blocks;
        this.sources = sources;
        this.blockRows = blockRows;
        this.rows = rows;
        this.in = in;
        this.dtype = dtype;
        this.out = java.util.Arrays.stream(parts).sum();
        this.parts = parts;
        this.bias = bias;
    }

    /**
     * The packed copy of {@code weight} for products with {@code rows} rows, or null where packing
     * does not apply (no oneDNN in the natives, a GPU tensor, another dtype than float32/bfloat16,
     * or a weight too small for the gain to outweigh the call's overhead).
     */
    public static PackedWeight of(Tensor weight, long rows) {
        return packs(weight, weight.size(0), rows) ? pack(List.of(weight), rows, null) : null;
    }

    /**
     * {@code weights} (each {@code [out_i, in]}, one input) packed as one stacked weight with their
     * {@code biases} (entries null where a weight has none; a missing bias beside present ones counts
     * as zeros), for {@link #applyStacked}; null where packing does not apply to the stacked weight.
     */
    public static PackedWeight stacked(List<Tensor> weights, List<Tensor> biases, long rows) {
        long out = weights.stream().mapToLong(w -> w.size(0)).sum();
        if (!packs(weights.get(0), out, rows)) {
            return null;
        }
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Tensor b = null;
            if (biases.stream().anyMatch(x -> x != null)) {
                List<Tensor> all = new ArrayList<>();
                for (int i = 0; i < weights.size(); i++) {
                    Tensor w = weights.get(i);
                    all.add(biases.get(i) != null ? biases.get(i).detach() : Tensor.zerosOf(w.dtype(), w.device(), w.size(0)));
                }
                b = Tensor.cat(all, 0); // a new tensor: the biases' copy
            }
            PackedWeight p = pack(weights, rows, b);
            if (b != null) {
                b.keep();
            }
            return p;
        }
    }

    /** Whether a weight like {@code weight} with {@code out} rows packs (see {@link #of}). */
    private static boolean packs(Tensor weight, long out, long rows) {
        return Engine.oneDnnLinear() && weight.dim() == 2 && !weight.device().isCuda() && Tensor.isOneDnnType(weight)
                && Tensor.oneDnnWorthIt(out * weight.size(1), out) && rows >= 1;
    }

    /**
     * Packs {@code [W_1; W_2; ...]} block by block: each block is made from the rows of the weights it
     * covers, so no temporary is larger than a block (the whole stacked copy would be one more
     * allocation above the mmap threshold).
     */
    private static PackedWeight pack(List<Tensor> weights, long rows, Tensor bias) {
        long[] parts = weights.stream().mapToLong(w -> w.size(0)).toArray();
        long out = java.util.Arrays.stream(parts).sum();
        Tensor first = weights.get(0);
        long in = first.size(1);
        long blockRows = Math.max(1, Math.min(out, MAX_CHUNK_BYTES / (in * first.dtype().byteSize())));
        List<Tensor> blocks = new ArrayList<>();
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            for (long start = 0; start < out; start += blockRows) {
                long end = Math.min(out, start + blockRows);
                List<Tensor> pieces = new ArrayList<>();
                long offset = 0;
                for (int i = 0; i < parts.length; i++) {
                    long from = Math.max(start, offset);
                    long to = Math.min(end, offset + parts[i]);
                    if (from < to) {
                        pieces.add(weights.get(i).detach().narrow(0, from - offset, to - from));
                    }
                    offset += parts[i];
                }
                Tensor block = pieces.size() == 1 ? pieces.get(0).contiguous() : Tensor.cat(pieces, 0);
                blocks.add(NativeOps.oneDnnPack(block, rows).keep());
            }
        } catch (RuntimeException | Error e) {
            blocks.forEach(Tensor::close);
            throw e;
        }
        return new PackedWeight(List.copyOf(blocks), blockRows, rows, in, first.dtype(), parts, bias, List.copyOf(weights));
    }

    /** How many blocks the weight was packed as (one unless it is above {@link #MAX_CHUNK_BYTES}). */
    int blocks() {
        return blocks.size();
    }

    /** The row count the packing was made for. */
    public long rows() {
        return rows;
    }

    /**
     * Whether {@code x} is an input the packing serves: the packed dtype and width, and {@link #rows()}
     * rows, or another row count it {@link #serves}.
     */
    public boolean fits(Tensor x) {
        if (x.size(-1) != in || x.dtype() != dtype || x.numel() % in != 0 || x.numel() == 0) {
            return false;
        }
        return serves(x.numel() / in);
    }

    /**
     * Whether products of {@code r} rows run on this copy: r is the row count it was packed for, or a
     * copy packed for r gives the same bits (checked once per dtype, shape and hint, see the class
     * comment).
     */
    public boolean serves(long r) {
        return r == rows || r >= 1 && SERVES.computeIfAbsent(List.of((long) dtype.ordinal(), in, out, rows, r),
                k -> agreesWithOwnPacking(r));
    }

    /**
     * Whether this packing's product of {@code r} rows is, bit for bit, that of a copy packed for r rows,
     * on random normal rows (any other summation order shows in their last bits).
     */
    private boolean agreesWithOwnPacking(long r) {
        CHECKS.incrementAndGet();
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(r);
                PackedWeight own = pack(sources, r, null)) {
            Tensor x = Tensor.randn(rng, 1.0, dtype, sources.get(0).device(), r, in);
            return own.product(x, null).bitEquals(product(x, null));
        }
    }

    /**
     * {@code x @ Wᵀ + b} for {@code x [..., in]} with {@link #rows()} rows in all (no autograd);
     * other row counts fall back to {@code fallback}'s plain product.
     */
    public Tensor apply(Tensor x, Tensor fallback, Tensor bias) {
        return fits(x) ? product(x, bias) : x.linear(fallback, bias);
    }

    /**
     * The stacked weights' products {@code x @ W_iᵀ + b_i} for an input that {@link #fits}, in order:
     * views into one output, each {@code [..., out_i]}.
     */
    public Tensor[] applyStacked(Tensor x) {
        if (!fits(x)) {
            throw new IllegalArgumentException("packed for " + rows + " rows of " + in + ", got " + java.util.Arrays
                    .toString(x.shape()));
        }
        Tensor y = product(x, bias);
        Tensor[] out = new Tensor[parts.length];
        long start = 0;
        for (int i = 0; i < parts.length; i++) {
            out[i] = y.narrow(-1, start, parts[i]);
            start += parts[i];
        }
        return out;
    }

    private Tensor product(Tensor x, Tensor b) {
        long[] shape = x.shape();
        long r = x.numel() / in;
        Tensor flat = x.isContiguous() ? x.view(r, in) : x.contiguous().view(r, in);
        Tensor y;
        if (blocks.size() == 1) {
            y = NativeOps.oneDnnLinear(flat, blocks.get(0), b);
        } else {
            List<Tensor> ys = new ArrayList<>(blocks.size());
            long start = 0;
            for (Tensor block : blocks) {
                long n = Math.min(blockRows, out - start);
                ys.add(NativeOps.oneDnnLinear(flat, block, b == null ? null : b.narrow(0, start, n)));
                start += n;
            }
            y = Tensor.cat(ys, 1);
        }
        shape[shape.length - 1] = out;
        return y.view(shape);
    }

    @Override
    public void close() {
        blocks.forEach(Tensor::close);
        if (bias != null) {
            bias.close();
        }
    }
}
