package comlrl.trainers.reinforce;

import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.rl.Advantages;
import comlrl.rl.ReferenceKl;
import comlrl.rl.Stats;
import comlrl.tensor.Scope;
import comlrl.distributed.RankWork;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The MA-REINFORCE policy loss of one agent (MAGRPO and its baselines). For one NodeSample s (one
 * agent at one rollout-tree node, G completions y_k of prompt x):
 * <pre>
 *   R'_k = R_k − β·KL_k                                    (reference-KL shaping, when enabled)
 *   A    = baseline(R')  [mean / raw / max / rloo]          (rl.AdvantageMode)
 *   A    ← (A − mean A) / max(std_pop A, 1e-6)            (scale_rewards group = advantage_normalization, G &gt; 1;
 *                                                          batch and none: {@link ScaleRewards})
 *   L_s  = (1/M) Σ_k −A_k · Σ_t log π(y_{k,t} | x, y_{k,&lt;t})   M = completions in the loss (≥ 1 token);
 *                                                               t over real tokens (EOS included, padding never)
 * </pre>
 * and for a minibatch B, with gradient accumulation and then one AdamW step:
 * <pre>
 *   L_B  = (1/|B|) Σ_{s∈B} L_s = Σ_s Σ_k w_{s,k} Σ_t log π(y_{s,k,t}),    w_{s,k} = −A_{s,k} / (M_s · |B|)
 * </pre>
 * ({@link #weights}). That is {@code loss_type: sequence_sum}, the default; the others change only the
 * divisor of w ({@link LossType}). With {@code mask_truncated_completions} a completion that reached
 * max_new_tokens without an EOS is not in the loss: w = 0, and it counts in none of M, |y|, T_s, T_B
 * (TRL's grpo and dr_grpo still count such rows in their denominators).
 *
 * <p>With {@code num_iterations} μ &gt; 1 each drained buffer is stepped μ times ({@link AgentBuffers}) and
 * L_B is the clipped surrogate of the ratio r to the sampling policy π_old, with the same A and D:
 * <pre>
 *   L_B = Σ_{s∈B} Σ_k (1/D_{s,k}) Σ_t −min(r_{s,k,t}·A_{s,k}, clip(r_{s,k,t}, 1 − ε, 1 + ε_high)·A_{s,k})
 * </pre>
 * (r per token, or per completion with {@code importance_sampling_level: sequence}). At r = 1 its
 * gradient is that of the μ = 1 loss above.
 */
public final class MAGRPOLoss {
    private MAGRPOLoss() {
    }

    /** A of one NodeSample in a minibatch of itself. */
    public static double[] advantages(NodeSample s, MAGRPOConfig args) {
        return advantages(List.of(s), args)[0];
    }

    /**
     * A of every sample of a minibatch, {@code [|B|][G]}: shaped returns, the config's baseline, then
     * {@code scale_rewards} ({@link ScaleRewards}) with the statistics of the sample's agent or of every
     * agent of its node ({@link NormalizationScope}, where the formulas are).
     *
     * <p>{@code credit: counterfactual} ({@link Credit}; {@code joint_mode: cross}): for agent i at a node,
     * each context c (one choice of the other N−1 agents' completions, C = G^(N−1) of them, in mixed
     * radix G, {@link comlrl.rl.JointMode#contextReturns}) is its own group of G:
     * <pre>
     *   R'(k,c) = R_i[k][c] − β·KL_{i,k}                   (reference-KL shaping, when enabled)
     *   A(k,c)  = scale( baseline( R'(·,c) ) )_k            (group: the context's G values; batch: std of
     *                                                        every R'(k,c) of B; none: unscaled)
     *   A_i[k]  = (1/C) Σ_c A(k,c)
     * </pre>
     * Not the naive COMA sum {@code Σ_c (R(k,c) − mean_k' R(k',c))}: with every joint action scored that
     * equals shared credit's {@code R_i[k] − mean_k' R_i[k']}. So with the mean baseline, scale none and no
     * KL counterfactual A_i = shared A_i / C; they differ where scaling or baseline is not linear across
     * contexts (with group scaling a context where agent i's choice changes nothing gives A(·,c) = 0 and
     * every other context weighs alike; max and rloo per context; β weighs each context's return, not a
     * sum of C). Multi-turn: R(k,c) are the tree returns of the node's joint actions.
     */
    public static double[][] advantages(List<NodeSample> minibatch, MAGRPOConfig args) {
        boolean counterfactual = args.credit() == Credit.COUNTERFACTUAL;
        double[][][] groups = new double[minibatch.size()][][];   // [|B|][C][G]; C = 1 for shared credit
        for (int j = 0; j < groups.length; j++) {
            NodeSample s = minibatch.get(j);
            double[][] byContext = counterfactual ? contexts(s) : new double[][] {s.returns()};
            groups[j] = Arrays.stream(byContext).map(r -> shaped(r, s.referenceKls(), args)).toArray(double[][]::new);
        }
        ScaleRewards scale = args.scaleRewards();
        boolean joint = args.advantageNormalizationScope() == NormalizationScope.JOINT && scale != ScaleRewards.NONE;
        double[][][] pooled = joint ? peerGroups(minibatch, args) : null;   // [|B|][N][G]: every agent's R' of the node
        double batchStd = scale != ScaleRewards.BATCH ? Double.NaN
                : Math.max(Stats.populationStd(Arrays.stream(joint ? pooled : groups).flatMap(Arrays::stream)
                        .flatMapToDouble(Arrays::stream).toArray()), Advantages.STD_FLOOR);
        double[][] out = new double[groups.length][];
        for (int j = 0; j < groups.length; j++) {
            double[][] perContext = new double[groups[j].length][];   // [C][G]
            for (int c = 0; c < perContext.length; c++) {
                double[] a = args.advantageMode().advantages(groups[j][c]);
                perContext[c] = switch (scale) {
                    case GROUP -> joint ? jointNormalize(a, pooled[j], args) : Advantages.normalize(a);
                    case BATCH -> Advantages.centerAndScale(a, batchStd);
                    case NONE -> a;
                };
            }
            out[j] = meanOverContexts(perContext);
        }
        return out;
    }

    /** R'_m of every agent m at each sample's node, {@code [|B|][N][G]}, each shaped with its own reference KL. */
    private static double[][][] peerGroups(List<NodeSample> minibatch, MAGRPOConfig args) {
        double[][][] pooled = new double[minibatch.size()][][];
        for (int j = 0; j < pooled.length; j++) {
            NodeSample s = minibatch.get(j);
            if (s.peers() == null) {
                throw new IllegalArgumentException("advantage_normalization_scope \"joint\" needs every agent's returns at "
                        + "the node; agent " + s.agent() + "'s sample of " + s.item() + " has none");
            }
            double[][] returns = s.peers().returns();
            double[][] kls = s.peers().referenceKls();
            pooled[j] = IntStream.range(0, returns.length).mapToObj(m -> shaped(returns[m], kls == null ? null : kls[m],
                    args)).toArray(double[][]::new);
        }
        return pooled;
    }

    /** R' = R − β·KL, or R when reference KL is off ({@code kls} null). */
    private static double[] shaped(double[] returns, double[] kls, MAGRPOConfig args) {
        return kls == null ? returns : ReferenceKl.shapeReturns(returns, kls, args.referenceKlCoef());
    }

    /**
     * Joint group normalisation (G &gt; 1): {@code (A − mean_{m,k} A_{m,k}) / max(std_pop_{m,k} A_{m,k}, 1e-6)},
     * A_m = baseline(R'_m) of every agent m of the node ({@code peers}, {@code [N][G]}).
     */
    private static double[] jointNormalize(double[] a, double[][] peers, MAGRPOConfig args) {
        if (a.length <= 1) {
            return a.clone();
        }
        double[] all = Arrays.stream(peers).map(r -> args.advantageMode().advantages(r)).flatMapToDouble(Arrays::stream)
                .toArray();
        double mean = Stats.mean(all);
        double std = Math.max(Stats.populationStd(all), Advantages.STD_FLOOR);
        return Arrays.stream(a).map(x -> (x - mean) / std).toArray();
    }

    /** R_i[·][c] of each context c, {@code [C][G]} (the sample's {@code [G][C]} transposed). */
    private static double[][] contexts(NodeSample s) {
        double[][] byCompletion = s.contextReturns();   // [G][C]
        if (byCompletion == null) {
            throw new IllegalArgumentException("credit \"counterfactual\" needs the returns per context of the other "
                    + "agents' completions (joint_mode \"cross\"); agent " + s.agent() + "'s sample of " + s.item()
                    + " has none");
        }
        double[][] byContext = new double[byCompletion[0].length][byCompletion.length];
        for (int k = 0; k < byCompletion.length; k++) {
            for (int c = 0; c < byContext.length; c++) {
                byContext[c][k] = byCompletion[k][c];
            }
        }
        return byContext;
    }

    /** (1/C) Σ_c A(k,c), {@code [G]}; one context is returned as it is. */
    private static double[] meanOverContexts(double[][] perContext) {
        if (perContext.length == 1) {
            return perContext[0];
        }
        double[] mean = new double[perContext[0].length];
        for (double[] a : perContext) {
            for (int k = 0; k < mean.length; k++) {
                mean[k] += a[k] / perContext.length;
            }
        }
        return mean;
    }

    /** The weights of the config's loss type ({@link #weights(List, double[][], LossType, boolean, int)}). */
    public static double[][] weights(List<NodeSample> minibatch, MAGRPOConfig args) {
        return weights(minibatch, advantages(minibatch, args), args);
    }

    /** The weights of {@code advantages} under the config's loss type, L = the agent's max_new_tokens. */
    private static double[][] weights(List<NodeSample> minibatch, double[][] advantages, MAGRPOConfig args) {
        return weights(minibatch, advantages, args.lossType(), args.maskTruncatedCompletions(),
                minibatch.isEmpty() ? args.maxNewTokens(0) : args.maxNewTokens(minibatch.get(0).agent()));
    }

    /**
     * {@code w_{s,k} = −A_{s,k} / D_{s,k}}, D as {@code type} defines it ({@link LossType}), 0 for a
     * completion not in the loss (no token, or truncated when {@code maskTruncated}). Always from whole
     * groups (a ddp rank scoring some rows of a group weighs them by the whole group's counts).
     */
    public static double[][] weights(List<NodeSample> minibatch, double[][] advantages, LossType type,
            boolean maskTruncated, int maxNewTokens) {
        int[] m = new int[minibatch.size()];
        int[] groupTokens = new int[minibatch.size()];
        int batchTokens = 0;
        for (int j = 0; j < minibatch.size(); j++) {
            NodeSample s = minibatch.get(j);
            for (int k = 0; k < s.completionIds().size(); k++) {
                int len = inLoss(s, k, maskTruncated) ? s.completionIds().get(k).length : 0;
                m[j] += len > 0 ? 1 : 0;
                groupTokens[j] += len;
            }
            batchTokens += groupTokens[j];
        }
        double[][] w = new double[minibatch.size()][];
        for (int j = 0; j < w.length; j++) {
            NodeSample s = minibatch.get(j);
            w[j] = new double[advantages[j].length];
            for (int k = 0; k < w[j].length; k++) {
                if (inLoss(s, k, maskTruncated)) {
                    w[j][k] = type.weight(advantages[j][k], Math.max(m[j], 1), s.completionIds().get(k).length,
                            Math.max(groupTokens[j], 1), Math.max(batchTokens, 1), minibatch.size(), maxNewTokens);
                }
            }
        }
        return w;
    }

    /** Whether completion k of {@code s} is in the loss: at least one token, and not masked as truncated. */
    private static boolean inLoss(NodeSample s, int k, boolean maskTruncated) {
        return s.completionIds().get(k).length > 0 && !(maskTruncated && s.truncated()[k]);
    }

    /**
     * Adds ∇ L_B ({@code num_iterations} 1) to the model's parameter gradients, one forward and backward
     * per NodeSample. With the completions divided between processes ({@link RankWork#splitsRows()})
     * this rank adds its completions' terms, the per-sample losses are summed across ranks before any
     * is checked (so every rank throws for the same sample, or none does), and the caller sums the
     * gradients ({@link RankWork#sumGradients}).
     *
     * @return L_s of every sample, in order (|B| times its terms of L_B)
     * @throws NonFiniteException when a sample's loss is not finite (its gradient is then not added;
     *         earlier samples' are, so callers drop the gradients)
     */
    public static double[] accumulate(DecoderLm model, List<NodeSample> minibatch, MAGRPOConfig args, long padId,
            RankWork work) {
        double[][] weights = weights(minibatch, args);
        return perSample(minibatch, work, (j, s, rows) -> Scorer.backwardWeighted(model,
                Collections.nCopies(rows.length, s.promptIds()), pick(s.completionIds(), rows), padId,
                pick(weights[j], rows), args.gradientCheckpointing()));
    }

    /**
     * L_s of each sample and, summed over the minibatch, the tokens in the loss and those the clip cut
     * off ({@code r < 1 − ε} with A &lt; 0; {@code r > 1 + ε_high} with A &gt; 0).
     */
    public record ClippedLosses(double[] losses, double tokens, double lowClipped, double highClipped) {
    }

    /**
     * The update of {@code num_iterations} μ &gt; 1: adds ∇ L_B of the clipped surrogate (TRL's GRPOTrainer
     * loss) as {@link #accumulate} does, with π_old the sampling policy ({@link #behaviourLogprobs}):
     * <pre>
     *   r_{s,k,t} = exp(log π_θ(y_{s,k,t}) − log π_old(y_{s,k,t}))                       token level
     *   r_{s,k,t} = exp((1/|y_{s,k}|) Σ_u [log π_θ(y_{s,k,u}) − log π_old(y_{s,k,u})])    sequence level (GSPO)
     *   L_B = Σ_{s∈B} Σ_k (1/D_{s,k}) Σ_t −min(r_{s,k,t}·A_{s,k}, clip(r_{s,k,t}, 1 − ε, 1 + ε_high)·A_{s,k})
     * </pre>
     * (1/D_{s,k} is the weight of A = −1, as w is linear in A). At r = 1 the gradient is that of
     * {@link #accumulate}, but the loss value is {@code Σ_k w_{s,k}·|y_{s,k}|}, not the weighted log-likelihood.
     *
     * @param oldLogprobs per sample, per completion, log π_old of each token (null for rows another process scores)
     */
    public static ClippedLosses accumulateClipped(DecoderLm model, List<NodeSample> minibatch,
            List<float[][]> oldLogprobs, MAGRPOConfig args, long padId, RankWork work) {
        double[][] advantages = advantages(minibatch, args);
        // 1/D_{s,k}: the weights of A = −1; 0 for a completion not in the loss
        double[][] scales = weights(minibatch, Arrays.stream(advantages)
                .map(a -> Arrays.stream(a).map(x -> -1).toArray()).toArray(double[][]::new), args);
        Scorer.Clip clip = new Scorer.Clip(args.epsilon(), args.epsilonHigh(),
                args.importanceSamplingLevel() == ImportanceSamplingLevel.SEQUENCE);
        double[] counts = new double[3]; // tokens, clipped low, clipped high
        double[] losses = perSample(minibatch, work, (j, s, rows) -> {
            float[][] old = oldLogprobs.get(j);
            Scorer.ClippedLoss l = Scorer.backwardClipped(model, Collections.nCopies(rows.length, s.promptIds()),
                    pick(s.completionIds(), rows), padId, pick(advantages[j], rows), pick(scales[j], rows),
                    Arrays.stream(rows).mapToObj(k -> old[k]).toArray(float[][]::new), clip,
                    args.gradientCheckpointing());
            counts[0] += l.tokens();
            counts[1] += l.lowClipped();
            counts[2] += l.highClipped();
            return l.value();
        });
        double[] total = work.splitsRows() ? work.sum(counts) : counts;
        return new ClippedLosses(losses, total[0], total[1], total[2]);
    }

    /**
     * log π_old of every token of {@code s}'s completions under {@code model} as it is now, computed the
     * way the loss computes log π_θ ({@link Scorer#tokenLogprobs}) so that the first pass's ratios are
     * exactly 1 (the log-probabilities sampling recorded come from the KV-cached decode and differ by
     * rounding). Only this process's rows ({@link RankWork#localRows}); null for the others. A LoRA agent
     * with {@code dropout} &gt; 0 is scored here without dropout, so its first-pass ratios are 1 only up to
     * that noise (as in TRL).
     */
    public static float[][] behaviourLogprobs(DecoderLm model, NodeSample s, long padId, RankWork work) {
        int[] rows = work.localRows(s.completionIds().size());
        float[][] out = new float[s.completionIds().size()][];
        float[][] local = Scorer.tokenLogprobs(model, Collections.nCopies(rows.length, s.promptIds()),
                pick(s.completionIds(), rows), padId);
        for (int r = 0; r < rows.length; r++) {
            out[rows[r]] = local[r];
        }
        return out;
    }

    /** Sample j's loss from this process's rows of it ({@code rows}: all of them unless rows are split). */
    private interface RowsLoss {
        double backward(int j, NodeSample s, int[] rows);
    }

    /**
     * Runs {@code loss} on each sample that has rows here, each in its own scope, and returns L_s = |B| ·
     * its value; a non-finite one throws {@link NonFiniteException} (after the sum over processes when rows are split).
     */
    private static double[] perSample(List<NodeSample> minibatch, RankWork work, RowsLoss loss) {
        double[] losses = new double[minibatch.size()];
        for (int j = 0; j < minibatch.size(); j++) {
            NodeSample s = minibatch.get(j);
            int[] rows = work.localRows(s.completionIds().size());
            if (rows.length > 0) {
                try (Scope scope = Scope.open()) {
                    losses[j] = loss.backward(j, s, rows) * minibatch.size(); // this rank's part when rows are split
                }
            }
            if (!work.splitsRows()) {
                requireFinite(losses[j], s);
            }
        }
        if (work.splitsRows()) {
            losses = work.sum(losses);
            for (int j = 0; j < losses.length; j++) {
                requireFinite(losses[j], minibatch.get(j));
            }
        }
        return losses;
    }

    private static void requireFinite(double loss, NodeSample s) {
        if (!Double.isFinite(loss)) {
            throw new NonFiniteException("the policy loss is " + loss, s);
        }
    }

    private static List<long[]> pick(List<long[]> values, int[] rows) {
        return Arrays.stream(rows).mapToObj(values::get).toList();
    }

    private static double[] pick(double[] values, int[] rows) {
        return Arrays.stream(rows).mapToDouble(k -> values[k]).toArray();
    }

    /** A NaN or infinite value met on the way to an optimizer step, with the sample it came from. */
    public static final class NonFiniteException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient NodeSample sample;

        NonFiniteException(String what, NodeSample s) {
            super(what + " for agent " + s.agent() + ", turn " + (s.turn() + 1) + " of " + s.item()
                    + " (returns " + Arrays.toString(s.returns()) + ")");
            this.sample = s;
        }

        /** The sample whose value was not finite. */
        NodeSample sample() {
            return sample;
        }
    }
}
