package comlrl.model;

import comlrl.tensor.DType;
import comlrl.tensor.GradMode;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * The LM head's log-probabilities of given tokens for a 16-bit model, and their backward without
 * autograd. For rows {@code h_m} ({@code [M, E]}) and weight W ({@code [V, E]}):
 * <pre>
 *   l_m    = W h_m                               one bf16/f16 product, [M, V] kept in the model dtype
 *   lse_m  = log Σ_v exp(float(l_m,v))           float32, per chunk of rows
 *   logp_m = float(l_m,y_m) − lse_m              = log_softmax(float(l_m))[y_m]
 * </pre>
 * and for {@code g_m = ∂L/∂logp_m}:
 * <pre>
 *   ∂L/∂l_m,v = g_m · (1[v = y_m] − exp(float(l_m,v) − lse_m))     float32 per chunk, rounded into l's storage
 *   ∂L/∂h_m   = Σ_v ∂L/∂l_m,v W_v                                  one product
 *   ∂L/∂W    += Σ_m ∂L/∂l_m ⊗ h_m                                  one product into W's gradient
 * </pre>
 * The same arithmetic as autograd through {@code log_softmax(float(W h)).gather(y)} (float32
 * log-softmax of the 16-bit logits, its gradient rounded to the model dtype before the products)
 * up to float32 rounding, but the float32 {@code [M, V]} tensors exist one chunk of rows at a
 * time ({@link #CHUNK_BYTES}), the 16-bit logits' storage holds their gradient, and W's gradient
 * is written into a buffer the model keeps across steps.
 */
final class TokenHead {
    /** Bytes of one chunk's float32 {@code [rows, V]}: below glibc's largest mmap threshold, so chunks reuse memory. */
    static final long CHUNK_BYTES = 16L << 20;

    private final Tensor weight;  // [V, E]
    private final Tensor rows;    // [M, E], contiguous
    private final Tensor targets; // [M, 1] int64
    private final Tensor logits;  // [M, V] model dtype; the gradient after backward
    private final Tensor lse;     // [M] float32
    private final Tensor logp;    // [M] float32
    private final long chunk;

    private TokenHead(Tensor weight, Tensor rows, Tensor targets, Tensor logits, Tensor lse, Tensor logp, long chunk) {
        this.weight = weight;
        this.rows = rows;
        this.targets = targets;
        this.logits = logits;
        this.lse = lse;
        this.logp = logp;
        this.chunk = chunk;
    }

    /** Rows per chunk for a vocabulary of {@code v}. */
    static long chunkRows(long v) {
        return Math.max(1, CHUNK_BYTES / (4 * v));
    }

    /**
     * {@code logp} of {@code targets} ({@code [M]} int64, any shape of M elements) after {@code rows}
     * ({@code [M, E]}, or {@code [..., E]} in the targets' order). With
     * gradients enabled the result is differentiable through autograd (same values); under no-grad
     * {@link #backward} gives the gradients.
     */
    static TokenHead of(Tensor weight, Tensor rows, Tensor targets) {
        return of(weight, rows, targets, chunkRows(weight.size(0)));
    }

    /** {@link #of(Tensor, Tensor, Tensor)} with {@code chunk} rows per float32 chunk. */
    static TokenHead of(Tensor weight, Tensor rows, Tensor targets, long chunk) {
        return of(weight, rows, targets, chunk, null);
    }

    /**
     * {@link #of(Tensor, Tensor, Tensor, long)} with the logits written into {@code logitsInto}
     * ({@code [M, V]}, the weight's dtype; kept by the caller across steps, so that a 0.5B model's
     * 39 MB of logits are not fresh pages at every step), or into a new tensor when it is null.
     */
    static TokenHead of(Tensor weight, Tensor rows, Tensor targets, long chunk, Tensor logitsInto) {
        long m = targets.numel();
        Tensor x = rows.contiguous().view(m, weight.size(1));
        Tensor y = targets.reshape(m, 1);
        Tensor logits = logitsInto == null ? x.linear(weight, null) : x.linearInto(weight, logitsInto); // [M, V]
        List<Tensor> lses = new ArrayList<>();
        List<Tensor> logps = new ArrayList<>();
        for (long r = 0; r < m; r += chunk) {
            long n = Math.min(chunk, m - r);
            Tensor lf = logits.narrow(0, r, n).toFloat();                         // [n, V] float32
            Tensor lseC = lf.logsumexp(1);                                        // [n]
            lses.add(lseC);
            logps.add(lf.gather(1, y.narrow(0, r, n)).squeeze(1).sub(lseC));    // [n]
        }
        return new TokenHead(weight, x, y, logits, cat(lses), cat(logps), chunk);
    }

    private static Tensor cat(List<Tensor> parts) {
        return parts.size() == 1 ? parts.get(0) : Tensor.cat(parts, 0);
    }

    /** The selected log-probabilities {@code [M]}, float32. */
    Tensor logprobs() {
        return logp;
    }

    /**
     * Backpropagates {@code g = ∂L/∂logp} ({@code [M]} float32): returns {@code ∂L/∂rows} ({@code [M, E]},
     * model dtype) and adds {@code ∂L/∂W} to W's gradient when W requires one, using
     * the tensor {@code gradBuffer} gives when W has no gradient yet ({@link Tensor#addProductToGrad}). Overwrites the
     * logits; call once, under no-grad.
     */
    Tensor backward(Tensor g, java.util.function.Supplier<Tensor> gradBuffer) {
        try (GradMode off = GradMode.noGrad()) {
            long m = rows.size(0);
            Tensor gf = g.to(DType.F32).reshape(m, 1);
            for (long r = 0; r < m; r += chunk) {
                long n = Math.min(chunk, m - r);
                Tensor gc = gf.narrow(0, r, n);                                   // [n, 1]
                Tensor lc = logits.narrow(0, r, n);                               // [n, V]
                Tensor d = lc.toFloat().sub_(lse.narrow(0, r, n).unsqueeze(1)).exp_() // softmax
                        .mul_(gc.neg())                                           // −g·p
                        .scatterAdd_(1, targets.narrow(0, r, n), gc);             // + g at y
                lc.copy_(d);                                                      // rounded to the model dtype
            }
            Tensor dRows = logits.matmul(weight);                                 // [M, E]
            if (weight.requiresGrad()) {
                weight.addProductToGrad(logits.transpose(0, 1), rows, gradBuffer);
            }
            return dRows;
        }
    }
}
