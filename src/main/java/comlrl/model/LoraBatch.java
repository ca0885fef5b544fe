package comlrl.model;

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
                if (grouped.dtype() != ab[0].dtype()) {
                    grouped = grouped.to(ab[0].dtype()); // float32 adapters on a half-precision base
                }
            }
            Tensor d = grouped.matmul(ab[0]).matmul(ab[1]);                  // [N, rows_g·S, out]
            d = scaleInB ? d : d.mul(scale);
            d = d.dtype() == x.dtype() ? d : d.to(x.dtype());
            out[k] = d.reshape(rows, s, ab[1].size(2));
        }
        return out;
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
        stacks.values().forEach(ab -> {
            ab[0].close();
            ab[1].close();
        });
        stacks.clear();
    }
}
