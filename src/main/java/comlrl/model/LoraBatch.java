package comlrl.model;

import comlrl.tensor.DType;
import comlrl.tensor.GradMode;
import comlrl.tensor.HostRows;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Several agents' LoRA adapters over one shared base, for one forward whose batch rows are grouped
 * by agent: group {@code g} holds {@code counts[g]·f} consecutive rows, where {@code f = B / Σ counts}
 * (a generation prefills one row per prompt and decodes G rows per prompt, so the same grouping by
 * prompts serves both). Every row goes through the base's one product {@code x Wᵀ}; the adapters add
 * <pre>
 *   delta(x)[rows of g] = s_g · x[rows of g] A_gᵀ B_gᵀ
 * </pre>
 * When every adapter has the same rank, targets and scale and every group the same size, the groups'
 * products run as two batched matmuls over stacked copies ({@code [N, in, r]}, {@code [N, r, out]},
 * made once here, with s folded into Bᵀ when it is a power of two, which changes no bit):
 * {@code x.view(N, f·count·S, in) @ Aᵀ @ Bᵀ}; otherwise group by group.
 *
 * <p>On a bfloat16 base, a pass of {@link #BF16_PRODUCT_TOKENS} tokens or more per row (a
 * generation's prefill) runs the stacked products in bfloat16 on bfloat16 copies of A and
 * s·B (oneDNN's kernels, float32 accumulation): {@code Δ₁₆ = r(r(x·r(Aᵀ))·r(s·Bᵀ))}, r rounding to
 * bfloat16 (unit roundoff u = 2⁻⁸). Against the exact {@code Δ = s·x·Aᵀ·Bᵀ} of the same bf16 x,
 * <pre>
 *   |Δ₁₆ − Δ| ≤ 4u · (|x|·|A|ᵀ)·|s·B|ᵀ     (elementwise, to first order in u)
 * </pre>
 * (A's rounding and t = x·A's rounding give 2u on t, B's rounding u, the result's u): a few units of
 * bf16 rounding of the addition, below the rounding of {@code y + Δ} itself whenever |Δ| is small
 * beside y. Float32 products there ran single-threaded at ~70 GFLOP/s in OpenBLAS's small-K kernels
 * (K = r for B): at the 0.5B shape a team's prefill of 512 tokens took 819–827 against 581–630 ms
 * per agent.
 * Decoding steps (a few rows) keep the float32 products, faster there.
 *
 * <p>On a bfloat16 base on the CPU, a pass of a few rows (a decoding step: fewer than
 * {@link #BF16_PRODUCT_TOKENS} tokens per row, at most {@link #HOST_MAX_ROWS} rows) adds the stacked
 * adapters into the base's outputs in place, in Java ({@link #addInPlace}, {@link HostLoraKernel}),
 * when the JVM has the vector module: per projection and agent
 * {@code y ← r(y + (x·r(Aᵀ))·r(s·Bᵀ))} with float32 sums and one rounding of the result, as peft
 * rounds {@code y + Δ}. Against the exact {@code y + Δ} of the same bf16 x and y,
 * <pre>
 *   |result − (y + Δ)| ≤ u·|y + Δ| + (2u + u²)·M + (in + r + 1)·u₃₂·(M + |y|)   (to first order)
 * </pre>
 * with {@code M = (|x|·|A|ᵀ)·|s·B|ᵀ} (A's and B's rounding, the float32 sums, the result's rounding).
 * libtorch's path takes five to eight operations per projection, each costing ~25–90 µs between the
 * base's streaming products; at the 0.5B shape a team's 12-row decoding step spent ~14 ms in them,
 * ~8 ms on the host (of which ~6 ms reading the 52 MB of bf16 adapters).
 *
 * <p>On a float32 base, the stacked products add into the base's outputs in place
 * ({@link #addProductsInPlace}: {@code torch.baddbmm_}, no {@code [B, S, out]} temporary and one
 * operation fewer per projection): a team's float32 prefill at the 0.5B shape took 284–304 against
 * 309–327 ms per agent.
 *
 * <p>For inference: the stacked copies are a snapshot of the adapters when this batch was made and
 * carry no gradient, so make one per generation (the adapters do not change during it). No dropout.
 */
public final class LoraBatch implements AutoCloseable {
    private final List<LoraAdapter> adapters;
    private final int[] counts;
    private final int total;
    private final boolean stacked;
    private final double scale;
    /** Whether the stacked Bᵀ hold {@code s·Bᵀ}: s a power of two, so the products are the same to the bit. */
    private final boolean scaleInB;
    private final Map<String, Tensor[]> stacks = new HashMap<>(); // "layer.projection" → {Aᵀ [N,in,r], Bᵀ [N,r,out]}
    private final Map<String, Tensor[]> bf16Stacks = new HashMap<>(); // the same in bfloat16, made on first use
    private final Map<String, int[][]> hostStacks = new HashMap<>(); // {A [N, r, in], s·Bᵀ [N, r, out]} bf16 pairs
    private final IntArrays pool;
    private final HostLoraKernel kernel = hostKernel ? HostLoraKernel.get() : null;
    private float[] ts = new float[0];
    private int[] xs = new int[0];
    private int[] yf = new int[0];

    /** When set (tests), the keys of the projections {@link #addInPlace} added, in order. */
    List<String> hostLog;

    /** Whether new batches use {@link HostLoraKernel} where it applies (tests switch it to compare both paths). */
    static boolean hostKernel = true;

    /** The most token rows ({@code B·S}) a pass may have for {@link #addInPlace} to take it. */
    static final long HOST_MAX_ROWS = 64;

    /** Tokens per row from which a pass on a bfloat16 base runs the stacked products in bfloat16. */
    static final long BF16_PRODUCT_TOKENS = 32;

    /**
     * @param adapters one per group, in row order
     * @param counts each group's share of the rows (prompts per agent)
     */
    public LoraBatch(List<LoraAdapter> adapters, int[] counts) {
        this(adapters, counts, new IntArrays());
    }

    /** With the host copies' arrays taken from and returned to {@code pool} (a base model's). */
    LoraBatch(List<LoraAdapter> adapters, int[] counts, IntArrays pool) {
        this.pool = pool;
        if (adapters.isEmpty() || adapters.size() != counts.length) {
            throw new IllegalArgumentException(adapters.size() + " adapters for " + counts.length + " row groups");
        }
        int sum = 0;
        for (int c : counts) {
            if (c < 1) {
                throw new IllegalArgumentException("every row group needs at least one row, got " + Arrays.toString(counts));
            }
            sum += c;
        }
        this.adapters = List.copyOf(adapters);
        this.counts = counts.clone();
        this.total = sum;
        LoraConfig first = adapters.get(0).config();
        boolean same = Arrays.stream(counts).allMatch(c -> c == counts[0]);
        for (LoraAdapter a : adapters) {
            LoraConfig c = a.config();
            same &= c.r() == first.r() && c.scale() == first.scale() && c.targetModules().equals(first.targetModules());
        }
        this.stacked = same && adapters.size() > 1;
        this.scale = first.scale();
        this.scaleInB = stacked && scale != 0 && Math.scalb(1.0, Math.getExponent(scale)) == Math.abs(scale);
        if (stacked) {
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                for (String key : adapters.get(0).keys()) {
                    List<Tensor> at = new ArrayList<>();
                    List<Tensor> bt = new ArrayList<>();
                    for (LoraAdapter a : adapters) {
                        at.add(a.a(key).detach().transpose(0, 1));
                        bt.add(a.b(key).detach().transpose(0, 1));
                    }
                    Tensor bs = Tensor.stack(bt, 0);
                    stacks.put(key, new Tensor[] {Tensor.stack(at, 0).contiguous().keep(),
                            (scaleInB ? bs.mul(scale) : bs).contiguous().keep()});
                }
            } catch (RuntimeException | Error e) {
                close();
                throw e;
            }
        }
    }

    /** The adapters, one per row group. */
    public List<LoraAdapter> adapters() {
        return adapters;
    }

    /** Each group's share of the rows. */
    public int[] counts() {
        return counts.clone();
    }

    /** Whether the groups' products run as batched matmuls over stacked adapters. */
    public boolean stacked() {
        return stacked;
    }

    /**
     * The adapters' additions for projections {@code which} ({@link LoraConfig#PROJECTIONS} indices) of
     * layer {@code layer}, row group by row group, for one input {@code x [B, S, in]}, in order; an
     * entry is null when no adapter adapts that projection. Stacked, x is regrouped (and converted to
     * the adapters' dtype) once for all of them: q, k, v and gate, up share their input.
     */
    public Tensor[] deltas(Tensor x, int layer, int[] which) {
        return deltas(x, layer, which, true);
    }

    /**
     * {@link #deltas}, or with {@code round} false, float32 adapters' products on a 16-bit base, the
     * float32 additions before their rounding (for {@link #added}).
     */
    private Tensor[] deltas(Tensor x, int layer, int[] which, boolean round) {
        long rows = x.size(0);
        if (rows % total != 0) {
            throw new IllegalArgumentException("a batch of " + rows + " rows does not split into the adapter groups "
                    + Arrays.toString(counts) + " (a multiple of " + total + " rows is needed)");
        }
        Tensor[] out = new Tensor[which.length];
        Tensor grouped = null;
        boolean bf16 = bf16Products(x);
        for (int k = 0; k < which.length; k++) {
            String p = LoraConfig.PROJECTIONS.get(which[k]);
            if (!stacked) {
                out[k] = groupByGroup(x, layer, p, rows / total, round);
                continue;
            }
            Tensor[] ab = stacks.get(LoraAdapter.key(layer, p));
            if (ab == null) {
                continue;
            }
            long s = x.size(1);
            if (grouped == null) {
                grouped = x.reshape(adapters.size(), rows / adapters.size() * s, x.size(2)); // [N, rows_g·S, in]
                if (!bf16 && grouped.dtype() != ab[0].dtype()) {
                    grouped = grouped.to(ab[0].dtype()); // float32 adapters on a half-precision base
                }
            }
            if (bf16) {
                Tensor[] ab16 = bf16Stack(LoraAdapter.key(layer, p), ab);
                out[k] = grouped.matmul(ab16[0]).matmul(ab16[1]).reshape(rows, s, ab[1].size(2));
                continue;
            }
            Tensor d = grouped.matmul(ab[0]).matmul(ab[1]);                  // [N, rows_g·S, out]
            d = scaleInB ? d : d.mul(scale);
            d = d.dtype() == x.dtype() || !round ? d : d.to(x.dtype());
            out[k] = d.reshape(rows, s, ab[1].size(2));
        }
        return out;
    }

    /**
     * Adds the adapters' additions for projections {@code which} of layer {@code layer}, for input
     * {@code x [B, S, in]}, into the base's outputs {@code ys[k]} ({@code [B, S, out]}, the same
     * dtype; views of one stacked product are fine) in place, on the host (see the class comment).
     * Returns false, having changed nothing, when this pass does not qualify: no host kernel (the JVM
     * runs without {@code jdk.incubator.vector}), adapters not stacked, a GPU, a dtype other than
     * bfloat16, a tensor that needs gradients, a pass of many tokens, a width that is not a multiple
     * of the kernel's 2W values, or an output whose rows are not evenly strided; {@link #added} then
     * tries the next way.
     */
    public boolean addInPlace(Tensor x, int layer, int[] which, Tensor[] ys) {
        if (kernel == null || !stacked || x.dtype() != DType.BF16 || x.requiresGrad() || x.device().isCuda()
                || x.dim() != 3 || x.size(1) >= BF16_PRODUCT_TOKENS || x.size(0) * x.size(1) > HOST_MAX_ROWS
                || x.size(0) % total != 0 || x.size(2) % (2 * kernel.lanes()) != 0) {
            return false;
        }
        HostRows[] out = new HostRows[which.length];
        String[] keys = new String[which.length];
        boolean any = false;
        for (int k = 0; k < which.length; k++) {
            keys[k] = LoraAdapter.key(layer, LoraConfig.PROJECTIONS.get(which[k]));
            if (stacks.get(keys[k]) == null) {
                continue;
            }
            Tensor y = ys[k];
            out[k] = y.dtype() == DType.BF16 && !y.requiresGrad() && y.dim() == 3 && y.size(0) == x.size(0)
                    && y.size(1) == x.size(1) && y.size(2) % (2 * kernel.lanes()) == 0 ? HostRows.of(y) : null;
            if (out[k] == null) {
                return false;
            }
            any = true;
        }
        if (!any) {
            return true;
        }
        HostRows in = HostRows.of(x);
        if (in == null && (in = HostRows.of(x.contiguous())) == null) {
            return false;
        }
        int rows = in.rows();
        int width = in.cols();
        int xStride = in.rowStride() / 2;
        xs = grown(xs, in.span());
        in.read(xs);
        int n = adapters.size();
        int m = rows / n;
        int r = adapters.get(0).config().r();
        ts = ts.length < m * r ? new float[m * r] : ts;
        for (int k = 0; k < which.length; k++) {
            if (out[k] == null) {
                continue;
            }
            int[][] ab = hostStack(keys[k]);
            HostRows y = out[k];
            int cols = y.cols();
            int yStride = y.rowStride() / 2;
            yf = grown(yf, y.span());
            y.read(yf);
            for (int g = 0; g < n; g++) {
                kernel.down(xs, g * m * xStride, xStride, m, width, ab[0], g * r * width / 2, r, 1f, ts);
                kernel.up(ts, m, r, ab[1], g * r * cols / 2, cols, yf, g * m * yStride, yStride);
            }
            y.write(yf);
            if (hostLog != null) {
                hostLog.add(keys[k]);
            }
        }
        return true;
    }

    /**
     * The base's outputs {@code ys} ({@code [B, S, out]} each) of projections {@code which} of layer
     * {@code layer} for input {@code x [B, S, in]}, each plus the row groups' adapters' addition: in
     * place where the pass qualifies ({@link #addInPlace} on the host for a bfloat16 decoding step,
     * {@link #addProductsInPlace} on a float32 base), else {@code ys[k] + deltas[k]} ({@link #deltas}),
     * where float32 additions on a 16-bit base are added in float32 and the sum rounded once, as an
     * agent's own forward does ({@link LoraAdapter#added}).
     */
    public Tensor[] added(Tensor x, int layer, int[] which, Tensor[] ys) {
        if (addInPlace(x, layer, which, ys) || addProductsInPlace(x, layer, which, ys)) {
            return ys;
        }
        Tensor[] deltas = deltas(x, layer, which, false);
        Tensor[] out = new Tensor[ys.length];
        for (int k = 0; k < ys.length; k++) {
            out[k] = deltas[k] == null ? ys[k] : LoraAdapter.roundedSum(ys[k], deltas[k]);
        }
        return out;
    }

    /**
     * Adds the adapters' additions for projections {@code which} of layer {@code layer}, for a float32
     * input {@code x [B, S, in]}, into the base's float32 outputs {@code ys[k]} ({@code [B, S, out]},
     * views of one stacked product are fine) in place:
     * <pre>
     *   y[rows of g] ← y[rows of g] + s · (x[rows of g] · A_gᵀ) · B_gᵀ      (torch.baddbmm_, s folded into Bᵀ or as α)
     * </pre>
     * the same sums as {@link #deltas} and an addition, with one float32 rounding fewer, in two
     * operations per projection where there were three and without the {@code [B, S, out]} temporary.
     * Returns false, having changed nothing, when this pass does not qualify: adapters not stacked, a
     * dtype other than float32, a tensor that needs gradients, or an output whose rows are not evenly
     * strided; {@link #added} then adds {@link #deltas}.
     */
    private boolean addProductsInPlace(Tensor x, int layer, int[] which, Tensor[] ys) {
        if (!stacked || x.dtype() != DType.F32 || x.requiresGrad() || x.dim() != 3 || x.size(0) % total != 0) {
            return false;
        }
        long rows = x.size(0);
        long s = x.size(1);
        Tensor[][] ab = new Tensor[which.length][];
        for (int k = 0; k < which.length; k++) {
            ab[k] = stacks.get(LoraAdapter.key(layer, LoraConfig.PROJECTIONS.get(which[k])));
            Tensor y = ys[k];
            if (ab[k] != null && (ab[k][0].dtype() != DType.F32 || y.dtype() != DType.F32 || y.requiresGrad()
                    || y.dim() != 3 || y.size(0) != rows || y.size(1) != s || y.stride(2) != 1
                    || y.stride(0) != y.stride(1) * s)) {
                return false;
            }
        }
        int n = adapters.size();
        Tensor grouped = x.reshape(n, rows / n * s, x.size(2)); // [N, rows_g·S, in]
        for (int k = 0; k < which.length; k++) {
            if (ab[k] != null) {
                Tensor t = grouped.matmul(ab[k][0]);                                   // [N, rows_g·S, r]
                ys[k].view(n, rows / n * s, ab[k][1].size(2)).baddbmm_(t, ab[k][1], 1, scaleInB ? 1 : scale);
            }
        }
        return true;
    }

    private static int[] grown(int[] a, int length) {
        return a.length < length ? new int[length] : a;
    }

    /**
     * A projection's stacked A ({@code [N, r, in]}) and s·Bᵀ ({@code [N, r, out]}, in the kernel's
     * chunks) in bfloat16 pairs ({@link HostRows}): the values of the bf16 stacks the prefill uses
     * ({@link #bf16Stack}), copied once, into arrays from the base's pool.
     */
    private int[][] hostStack(String key) {
        return hostStacks.computeIfAbsent(key, k -> {
            Tensor[] ab16 = bf16Stack(k, stacks.get(k)); // {Aᵀ [N, in, r], s·Bᵀ [N, r, out]}
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                Tensor bt = ab16[1];
                int w = 2 * kernel.lanes();
                Tensor tiles = bt.reshape(bt.size(0), bt.size(1), bt.size(2) / w, w).transpose(1, 2); // [N, out/2W, r, 2W]
                return new int[][] {pairs(ab16[0].transpose(1, 2)), pairs(tiles)};
            }
        });
    }

    private int[] pairs(Tensor t) {
        HostRows rows = HostRows.of(t.contiguous());
        int[] a = pool.take(rows.rows() * rows.cols() / 2);
        rows.read(a);
        return a;
    }

    /** Whether the stacked products of {@code x [B, S, in]} run in bfloat16 (see the class comment). */
    private static boolean bf16Products(Tensor x) {
        return x.dtype() == DType.BF16 && x.size(1) >= BF16_PRODUCT_TOKENS;
    }

    /** The bfloat16 copies of a projection's stacked {@code {Aᵀ, s·Bᵀ}} (s folded in whatever it is), made once per batch. */
    private Tensor[] bf16Stack(String key, Tensor[] ab) {
        return bf16Stacks.computeIfAbsent(key, k -> {
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                return new Tensor[] {ab[0].to(DType.BF16).keep(), (scaleInB ? ab[1] : ab[1].mul(scale)).to(DType.BF16).keep()};
            }
        });
    }

    /** One adapter at a time on its rows ({@code f} rows per share); null when none adapts {@code p}. */
    private Tensor groupByGroup(Tensor x, int layer, String p, long f, boolean round) {
        List<Tensor> parts = new ArrayList<>();
        long start = 0;
        boolean any = false;
        long outSize = -1;
        DType dtype = x.dtype();
        for (int g = 0; g < adapters.size(); g++) {
            long n = counts[g] * f;
            Tensor d = adapters.get(g).delta(x.narrow(0, start, n), layer, p, null, round);
            parts.add(d);
            if (d != null) {
                any = true;
                outSize = d.size(2);
                dtype = d.dtype();
            }
            start += n;
        }
        if (!any) {
            return null;
        }
        for (int g = 0; g < parts.size(); g++) {
            if (parts.get(g) == null) {
                parts.set(g, Tensor.zerosOf(dtype, x.device(), counts[g] * f, x.size(1), outSize));
            }
        }
        return Tensor.cat(parts, 0);
    }

    /** Frees the stacked copies (the adapters belong to their agents). */
    @Override
    public void close() {
        closeAll(stacks);
        closeAll(bf16Stacks);
        hostStacks.values().forEach(ab -> {
            pool.give(ab[0]);
            pool.give(ab[1]);
        });
        hostStacks.clear();
    }

    private static void closeAll(Map<String, Tensor[]> copies) {
        copies.values().forEach(ab -> {
            ab[0].close();
            ab[1].close();
        });
        copies.clear();
    }
}
