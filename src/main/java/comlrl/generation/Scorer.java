package comlrl.generation;

import comlrl.model.DecoderLm;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * Log-probabilities of given completions under a model, with gradients, in one batched forward.
 *
 * <p>Row i is {@code prompt_i ⊕ completion_i}, left-padded to the longest row, so completions end
 * at the same column. Logits are computed only for the positions that predict completion tokens.
 * Padding never enters a sum: each token's log-probability is multiplied by its mask.
 */
public final class Scorer {
    private Scorer() {
    }

    /**
     * Per-token log-probabilities of the completions.
     *
     * @param tokenLogprobs float32 {@code [N, T]}, T = longest completion; row i's tokens are
     *        right-aligned (its last {@code len_i} columns), 0 elsewhere
     * @param mask float32 {@code [N, T]}, 1 where a completion token is
     * @param hidden final hidden states {@code [N, S, E]} of the whole rows (for value heads)
     */
    public record Scores(Tensor tokenLogprobs, Tensor mask, Tensor hidden, int[] completionLengths) {
        /** {@code Σ_t log π(y_t | x, y_<t)} per row: {@code [N]}. */
        public Tensor sequenceLogprobs() {
            return tokenLogprobs.sum(1, false);
        }
    }

    /**
     * Scores {@code completions[i]} after {@code prompts[i]}. Must run inside a caller's scope;
     * gradients flow to the model's parameters unless a no-grad mode is active.
     *
     * @param padId any id (pad positions are masked out)
     */
    public static Scores score(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId) {
        return ScoringPass.written(model, prompts, completions, padId).score(model);
    }

    /**
     * Backpropagates {@code L = Σ_i w_i · Σ_t log π(y_{i,t} | x_i, y_{i,<t})} (padding excluded)
     * into the model's parameter gradients, optionally with layer-wise recomputation
     * ({@link DecoderLm#backward}), which gives the same gradients with the activations
     * of one layer alive at a time. When L is not finite nothing is backpropagated (the sample
     * contributes no gradient). Must run inside a caller's scope.
     *
     * @return L
     */
    public static double backwardWeighted(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId,
            double[] weights, boolean checkpointing) {
        if (weights.length != prompts.size()) {
            throw new IllegalArgumentException(weights.length + " weights for " + prompts.size() + " sequences");
        }
        if (completions.stream().allMatch(c -> c.length == 0)) {
            return 0; // nothing generated: no token, no gradient
        }
        Tensor w = Tensor.ofDoubles(weights, model.device()).to(DType.F32);
        return ScoringPass.of(model, prompts, completions, padId).backward(model, true,
                sc -> sc.sequenceLogprobs().mul(w).sum(), checkpointing);
    }

    /**
     * The clip range of {@link #backwardClipped}: the ratio is clipped to {@code [1 − epsilon, 1 + epsilonHigh]};
     * with {@code sequenceLevel} one ratio per row (GSPO) in place of one per token.
     */
    public record Clip(double epsilon, double epsilonHigh, boolean sequenceLevel) {
    }

    /**
     * What {@link #backwardClipped} computed: L, and the tokens of the rows with a non-zero scale
     * ({@code tokens}), of which {@code lowClipped} had {@code r < 1 − ε} with A &lt; 0 and
     * {@code highClipped} {@code r > 1 + ε_high} with A &gt; 0 (the tokens the clip cuts off from the gradient).
     */
    public record ClippedLoss(double value, long tokens, long lowClipped, long highClipped) {
    }

    /**
     * Per-token log-probabilities {@code log π(y_{i,t} | x_i, y_{i,<t})} of each completion ({@code [N][len_i]},
     * float32 as {@link #score} computes them for the loss), without gradients, in a scope of its own.
     */
    public static float[][] tokenLogprobs(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId) {
        float[][] out = new float[completions.size()][];
        if (completions.stream().allMatch(c -> c.length == 0)) {
            for (int i = 0; i < out.length; i++) {
                out[i] = new float[0];
            }
            return out;
        }
        try (comlrl.tensor.Scope scope = comlrl.tensor.Scope.open();
                comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
            Scores sc = ScoringPass.of(model, prompts, completions, padId).score(model);
            int t = (int) sc.tokenLogprobs().shape()[1];
            float[] all = sc.tokenLogprobs().toFloatArray(); // [N, T], row i right-aligned
            for (int i = 0; i < out.length; i++) {
                int len = completions.get(i).length;
                out[i] = java.util.Arrays.copyOfRange(all, i * t + t - len, i * t + t);
            }
        }
        return out;
    }

    /**
     * Backpropagates the clipped surrogate of PPO/GRPO (TRL's GRPOTrainer) for rows sampled by an
     * earlier policy π_old whose per-token log-probabilities are {@code oldLogprobs[i]} (len_i values,
     * as {@link #tokenLogprobs} gives them):
     * <pre>
     *   ρ_{i,t} = log π(y_{i,t} | x_i, y_{i,&lt;t}) − log π_old(y_{i,t} | ...)
     *   r_{i,t} = exp(ρ_{i,t})                                  token level
     *   r_{i,t} = exp((1/len_i) Σ_u ρ_{i,u})   for every t     sequence level (GSPO)
     *   L = Σ_i c_i Σ_t −min(r_{i,t} · A_i,  clip(r_{i,t}, 1 − ε, 1 + ε_high) · A_i)     (t over real tokens)
     * </pre>
     * with A_i = {@code advantages[i]} and c_i = {@code scales[i]} ≥ 0 (the loss type's 1/D; 0 leaves
     * the row out). π_old enters without gradient. Where the clip binds (r &gt; 1 + ε_high with A &gt; 0,
     * r &lt; 1 − ε with A &lt; 0) a token's term is constant and has no gradient; elsewhere
     * {@code ∇L = Σ_i c_i Σ_t −A_i ∇r_{i,t}}, {@code ∇r_{i,t} = r_{i,t} ∇log π(y_{i,t})} per token, and
     * {@code r_i · (1/len_i) Σ_u ∇log π(y_{i,u})} at sequence level. At π = π_old (every r = 1) it is
     * the gradient of {@link #backwardWeighted} with {@code w_i = −c_i·A_i}. Nothing is backpropagated
     * when L is not finite. Must run inside a caller's scope.
     */
    public static ClippedLoss backwardClipped(DecoderLm model, List<long[]> prompts, List<long[]> completions,
            long padId, double[] advantages, double[] scales, float[][] oldLogprobs, Clip clip, boolean checkpointing) {
        int n = prompts.size();
        if (advantages.length != n || scales.length != n || oldLogprobs.length != n) {
            throw new IllegalArgumentException(advantages.length + " advantages, " + scales.length + " scales and "
                    + oldLogprobs.length + " old log-probability rows for " + n + " sequences");
        }
        int t = completions.stream().mapToInt(c -> c.length).max().orElse(0);
        if (t == 0) {
            return new ClippedLoss(0, 0, 0, 0); // nothing generated: no token, no gradient
        }
        float[] old = new float[n * t]; // [N, T], right-aligned as the scores are, 0 at padding
        float[] lengths = new float[n];
        for (int i = 0; i < n; i++) {
            int len = completions.get(i).length;
            if (oldLogprobs[i].length != len) {
                throw new IllegalArgumentException("row " + i + " has " + len + " tokens but " + oldLogprobs[i].length
                        + " old log-probabilities");
            }
            System.arraycopy(oldLogprobs[i], 0, old, i * t + t - len, len);
            lengths[i] = Math.max(len, 1);
        }
        Device device = model.device();
        Tensor oldLogp = Tensor.ofFloats(old, device, n, t);                               // [N, T]
        Tensor a = Tensor.ofDoubles(advantages, device).to(DType.F32).view(n, 1);          // [N, 1]
        Tensor c = Tensor.ofDoubles(scales, device).to(DType.F32).view(n, 1);              // [N, 1]
        Tensor tokensPerRow = Tensor.ofFloats(lengths, device, n, 1);                      // [N, 1], ≥ 1
        float[][] ratios = new float[1][];
        double value = ScoringPass.of(model, prompts, completions, padId).backward(model, true, sc -> {
            Tensor logRatio = sc.tokenLogprobs().sub(oldLogp);                              // [N, T], 0 at padding
            if (clip.sequenceLevel()) {
                logRatio = logRatio.sum(1, true).div(tokensPerRow);                         // [N, 1]
            }
            Tensor ratio = logRatio.exp();                                                  // [N, T] or [N, 1]
            Tensor clipped = ratio.clampMin(1 - clip.epsilon()).clampMax(1 + clip.epsilonHigh());
            Tensor surrogate = ratio.mul(a).minimum(clipped.mul(a));                       // min(r·A, clip(r)·A)
            ratios[0] = ratio.detach().toFloatArray();
            return surrogate.neg().mul(sc.mask()).mul(c).sum();                            // Σ_i c_i Σ_t −min(...)
        }, checkpointing);
        return counted(value, ratios[0], completions, advantages, scales, clip, t);
    }

    /** {@link ClippedLoss} of the ratios {@code [N, T]} (or {@code [N, 1]}), counted as the clamp compares them (float32). */
    private static ClippedLoss counted(double value, float[] ratios, List<long[]> completions, double[] advantages,
            double[] scales, Clip clip, int t) {
        float low = (float) (1 - clip.epsilon());
        float high = (float) (1 + clip.epsilonHigh());
        int perRow = ratios.length / completions.size(); // T, or 1 at sequence level
        long tokens = 0;
        long lowClipped = 0;
        long highClipped = 0;
        for (int i = 0; i < completions.size(); i++) {
            int len = completions.get(i).length;
            if (scales[i] == 0 || len == 0) {
                continue;
            }
            tokens += len;
            for (int col = t - len; col < t; col++) {
                float r = ratios[i * perRow + (perRow == 1 ? 0 : col)];
                lowClipped += r < low && advantages[i] < 0 ? 1 : 0;
                highClipped += r > high && advantages[i] > 0 ? 1 : 0;
            }
        }
        return new ClippedLoss(value, tokens, lowClipped, highClipped);
    }

    /**
     * Backpropagates a loss of the rows' {@link Scores} into the parameter gradients of the model and
     * of whatever else the loss uses (a value head reading {@link Scores#hidden()}), optionally with
     * layer-wise recomputation. Without {@code logits} only the hidden states are computed (a critic's
     * pass: no LM head) and {@link Scores#tokenLogprobs()} is null. Rows are left-padded, so column
     * {@code S−1} holds every row's last token and column {@code S−1−len_i} row i's last prompt token.
     * Must run inside a caller's scope.
     *
     * @return the loss (nothing is backpropagated when it is not finite)
     */
    public static double backward(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId,
            boolean logits, java.util.function.Function<Scores, Tensor> loss, boolean checkpointing) {
        return ScoringPass.written(model, prompts, completions, padId).backward(model, logits, loss, checkpointing);
    }

    /**
     * {@link #backward} for a loss that reads the hidden states only from each row's last prompt token
     * on (a value head at the last token, or at the prompt's last): {@link Scores#hidden()} may then
     * hold only the rows' last {@code 1 + T} positions, left-padded as the rows are, so that column
     * {@code S−1} is every row's last token and column {@code S−1−len_i} row i's last prompt token with
     * S its own length; the rows' repeated prompts are then computed once ({@link ScoringPass#of}).
     */
    public static double backwardFromPromptEnd(DecoderLm model, List<long[]> prompts, List<long[]> completions,
            long padId, boolean logits, java.util.function.Function<Scores, Tensor> loss, boolean checkpointing) {
        return ScoringPass.of(model, prompts, completions, padId).backward(model, logits, loss, checkpointing);
    }

    /**
     * The rows' final hidden states {@code [N, S, E]} without logits (a critic's forward), left-padded
     * as in {@link #backward}. Gradients flow unless a no-grad mode is active; inside a caller's scope.
     */
    public static Tensor hidden(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId) {
        return ScoringPass.written(model, prompts, completions, padId).hidden(model);
    }

    /**
     * Each row's final hidden state at its last token, {@code [N, E]} (a value head's input), without
     * logits; the rows' repeated prompts are computed once ({@link ScoringPass#of}), so this equals
     * {@link #hidden}{@code [:, S−1]} up to float rounding. Gradients flow unless a no-grad mode is
     * active; inside a caller's scope.
     */
    public static Tensor lastHidden(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId) {
        Tensor hidden = ScoringPass.of(model, prompts, completions, padId).hidden(model); // [N, S, E], S−1 the last token
        return hidden.select(1, hidden.size(1) - 1);
    }

    /**
     * Whether the log-probabilities of rows with repeated prompts are computed with each prompt once
     * ({@link ScoringPass#of}); {@code COMLRL_SHARED_PROMPTS=0} turns it off (to compare).
     */
    static boolean sharePrompts = !"0".equals(System.getenv("COMLRL_SHARED_PROMPTS"));

    /** Whether rows with repeated prompts score them once (a model may still not: {@link DecoderLm#sharesPrefixes}). */
    public static boolean sharesPrompts() {
        return sharePrompts;
    }

    /**
     * One scoring pass over rows {@code prompt_i ⊕ completion_i}: the rows written out ({@link #written},
     * {@code prefix} null, positions and mask those of {@link Rows}), or, where prompts repeat (the G
     * completions of one prompt), rows scored with each distinct prompt computed once ({@link #of}): a
     * {@link DecoderLm.Prefix} of the prompts without their last token, and rows
     * {@code last prompt token ⊕ completion_i} (left-padded as {@link Rows} pads, so every
     * log-probability comes from the rows' pass) whose positions continue their prefix and whose
     * attention mask ({@code [N, P + 1 + T]}) covers it. The same log-probabilities and gradients as
     * the rows written out, up to float rounding; the hidden states are the rows' own positions only,
     * so only losses of the log-probabilities, or of hidden states from the last prompt token on
     * ({@link Scorer#backwardFromPromptEnd}), use it. At G rows of P + T tokens per prompt the layers
     * see {@code P − 1 + G·(T + 1)} positions instead of {@code G·(P + T)}.
     *
     * @param positions {@code [N, S]} the rows' positions ({@code S = 1 + T} when shared)
     * @param mask {@code [N, S]}, or {@code [N, P + 1 + T]} when shared: 1 at each row's (prefix) tokens;
     *        null when no row is padded
     */
    record ScoringPass(DecoderLm.Prefix prefix, Rows rows, Tensor positions, Tensor mask) {
        /** The rows written out. */
        static ScoringPass written(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId) {
            Rows r = Scorer.rows(model, prompts, completions, padId);
            return new ScoringPass(null, r, r.batch.positions(), r.batch.mask());
        }

        /**
         * The shared rows of these prompts, or {@link #written} when none would share: no prompt repeats,
         * a prompt has a single token, no completion has a token, sharing is off, or the model does not
         * share prefixes ({@link DecoderLm#sharesPrefixes}).
         */
        static ScoringPass of(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId) {
            ScoringPass shared = shared(model, prompts, completions, padId);
            return shared != null ? shared : written(model, prompts, completions, padId);
        }

        /** {@link #of}'s shared rows, or null. */
        static ScoringPass shared(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId) {
            int n = prompts.size();
            if (!sharePrompts || n < 2 || n != completions.size() || !model.sharesPrefixes()
                    || completions.stream().allMatch(c -> c.length == 0)) {
                return null;
            }
            java.util.Map<java.nio.LongBuffer, Integer> seen = new java.util.HashMap<>();
            List<long[]> prefixes = new ArrayList<>();
            long[] rowPrefix = new long[n];
            for (int i = 0; i < n; i++) {
                long[] p = prompts.get(i);
                if (p.length < 2) {
                    return null;
                }
                // the prompt without its last token; equal and hashed by content
                Integer u = seen.putIfAbsent(java.nio.LongBuffer.wrap(p, 0, p.length - 1), prefixes.size());
                if (u == null) {
                    u = prefixes.size();
                    prefixes.add(java.util.Arrays.copyOf(p, p.length - 1));
                }
                rowPrefix[i] = u;
            }
            if (prefixes.size() == n) {
                return null;
            }
            Device device = model.device();
            PaddedBatch pb = PaddedBatch.leftPadded(prefixes, padId, device);
            List<long[]> lasts = new ArrayList<>();
            prompts.forEach(p -> lasts.add(new long[] {p[p.length - 1]}));
            Rows r = Scorer.rows(model, lasts, completions, padId);
            int pp = (int) pb.length();
            int s = (int) r.batch.length(); // 1 + T
            long[] pos = new long[n * s];
            long[] mask = new long[n * (pp + s)];
            for (int i = 0; i < n; i++) {
                int before = prompts.get(i).length - 1; // the prefix's tokens
                int pad = s - 1 - completions.get(i).length;
                for (int j = 0; j < pp; j++) {
                    mask[i * (pp + s) + j] = j >= pp - before ? 1 : 0;
                }
                for (int j = 0; j < s; j++) {
                    pos[i * s + j] = j >= pad ? before + j - pad : 1; // padding at 1, as PaddedBatch has it
                    mask[i * (pp + s) + pp + j] = j >= pad ? 1 : 0;
                }
            }
            return new ScoringPass(new DecoderLm.Prefix(pb.ids(), pb.positions(), pb.mask(),
                    Tensor.ofLongs(rowPrefix, device, n)), r, Tensor.ofLongs(pos, device, n, s),
                    Tensor.ofLongs(mask, device, n, pp + s));
        }

        /** {@link Scorer#score}'s scores (shared: hidden states of the rows' own positions only). */
        Scores score(DecoderLm model) {
            Rows r = rows;
            if (r.t == 0) {
                Tensor zeros = Tensor.zerosOf(DType.F32, model.device(), r.lengths.length, 1);
                return new Scores(zeros, zeros, hidden(model), r.lengths);
            }
            if (model.scoresTokensInHead()) {
                DecoderLm.Output out = forward(model, r.batch.length());
                return new Scores(model.tokenLogprobs(out.hidden(), r.logitsFrom(), r.targets()).mul(r.mask), r.mask,
                        out.hidden(), r.lengths);
            }
            DecoderLm.Output out = forward(model, r.logitsFrom());
            return new Scores(r.tokenLogprobs(out), r.mask, out.hidden(), r.lengths);
        }

        /** The final hidden states of the rows' positions, without logits. */
        Tensor hidden(DecoderLm model) {
            return forward(model, rows.batch.length()).hidden();
        }

        private DecoderLm.Output forward(DecoderLm model, long logitsFrom) {
            Tensor ids = rows.batch.ids();
            return prefix == null ? model.forward(ids, positions, mask, null, logitsFrom)
                    : model.forward(prefix, ids, positions, mask, logitsFrom);
        }

        /**
         * {@link Scorer#backward} (without {@code logits}: hidden states only); shared, the loss's hidden
         * states are the rows' own positions {@code [N, 1 + T, E]}, from the last prompt token on.
         */
        double backward(DecoderLm model, boolean logits, java.util.function.Function<Scores, Tensor> loss,
                boolean checkpointing) {
            Rows r = rows;
            Tensor ids = r.batch.ids();
            if (logits && r.t > 0 && model.scoresTokensInHead()) {
                return model.backward(ids, positions, mask, prefix, r.logitsFrom(), r.targets(),
                        sc -> loss.apply(new Scores(sc.tokenLogprobs().mul(r.mask), r.mask, sc.hidden(), r.lengths)),
                        checkpointing);
            }
            long from = logits && r.t > 0 ? r.logitsFrom() : r.batch.length();
            return model.backward(ids, positions, mask, prefix, from, out -> loss.apply(new Scores(
                    logits && r.t > 0 ? r.tokenLogprobs(out) : logits ? Tensor.zerosOf(DType.F32, model.device(),
                            r.lengths.length, 1) : null, r.mask, out.hidden(), r.lengths)), checkpointing);
        }
    }

    /**
     * Rows {@code prompt_i ⊕ completion_i} left-padded to one batch; completions end at the same
     * column, so the last {@code t} columns hold every completion token (t = longest completion).
     */
    private record Rows(PaddedBatch batch, int t, int[] lengths, Tensor mask) {
        /** Positions s-t-1 .. s-2 predict the tokens at columns s-t .. s-1. */
        long logitsFrom() {
            return batch.length() - t - 1;
        }

        /** The completion tokens {@code [N, T]}: columns s-t .. s-1. */
        Tensor targets() {
            return batch.ids().narrow(1, batch.length() - t, t);
        }

        /**
         * Masked per-token log-probabilities {@code [N, T]} from a forward's logits (float32), as
         * {@code log_softmax(float(logits))[y]}; 16-bit models compute the same in their head
         * ({@link DecoderLm#tokenLogprobs}) without the float32 {@code [N, T, V]} tensors.
         */
        Tensor tokenLogprobs(DecoderLm.Output out) {
            Tensor logits = out.logits().narrow(1, 0, t).toFloat();           // [N, T, V]
            Tensor targets = targets();                                        // [N, T]
            Tensor logp = logits.logSoftmax(-1).gather(2, targets.unsqueeze(2)).squeeze(2); // [N, T]
            return logp.mul(mask);
        }
    }

    private static Rows rows(DecoderLm model, List<long[]> prompts, List<long[]> completions, long padId) {
        if (prompts.size() != completions.size()) {
            throw new IllegalArgumentException(prompts.size() + " prompts but " + completions.size() + " completions");
        }
        int n = prompts.size();
        int maxCompletion = 0;
        int[] lengths = new int[n];
        List<long[]> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long[] p = prompts.get(i);
            long[] c = completions.get(i);
            if (p.length == 0) {
                throw new IllegalArgumentException("Prompt " + i + " is empty: scoring needs at least one prompt token");
            }
            lengths[i] = c.length;
            maxCompletion = Math.max(maxCompletion, c.length);
            long[] row = new long[p.length + c.length];
            System.arraycopy(p, 0, row, 0, p.length);
            System.arraycopy(c, 0, row, p.length, c.length);
            rows.add(row);
        }
        Device device = model.device();
        PaddedBatch batch = PaddedBatch.leftPadded(rows, padId, device);
        int t = maxCompletion;
        float[] maskValues = new float[n * Math.max(t, 1)];
        for (int i = 0; i < n; i++) {
            for (int j = t - lengths[i]; j < t; j++) {
                maskValues[i * t + j] = 1f;
            }
        }
        Tensor mask = Tensor.ofFloats(maskValues, device, n, Math.max(t, 1));
        return new Rows(batch, t, lengths, mask);
    }
}
