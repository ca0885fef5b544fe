package comlrl.model;

import comlrl.tensor.DType;
import comlrl.tensor.GradMode;
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

    /** Tokens per row from which a pass on a bfloat16 base runs the stacked products in bfloat16. */
    static final long BF16_PRODUCT_TOKENS = 32;

    /**
     * @param adapters one per group, in row order
     * @param counts each group's share of the rows (prompts per agent)
     */
    public LoraBatch(List<LoraAdapter> adapters, int[] counts) {
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
                out[k] = groupByGroup(x, layer, p, rows / total);
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
            d = d.dtype() == x.dtype() ? d : d.to(x.dtype());
            out[k] = d.reshape(rows, s, ab[1].size(2));
        }
        return out;
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
    private Tensor groupByGroup(Tensor x, int layer, String p, long f) {
        List<Tensor> parts = new ArrayList<>();
        long start = 0;
        boolean any = false;
        long outSize = -1;
        for (int g = 0; g < adapters.size(); g++) {
            long n = counts[g] * f;
            Tensor d = adapters.get(g).delta(x.narrow(0, start, n), layer, p, null);
            parts.add(d);
            if (d != null) {
                any = true;
                outSize = d.size(2);
            }
            start += n;
        }
        if (!any) {
            return null;
        }
        for (int g = 0; g < parts.size(); g++) {
            if (parts.get(g) == null) {
                parts.set(g, Tensor.zerosOf(x.dtype(), x.device(), counts[g] * f, x.size(1), outSize));
            }
        }
        return Tensor.cat(parts, 0);
    }

    /** Frees the stacked copies (the adapters belong to their agents). */
    @Override
    public void close() {
        closeAll(stacks);
        closeAll(bf16Stacks);
    }

    private static void closeAll(Map<String, Tensor[]> copies) {
        copies.values().forEach(ab -> {
            ab[0].close();
            ab[1].close();
        });
        copies.clear();
    }
}
