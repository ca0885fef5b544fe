package comlrl.trainers.reinforce;

import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.rl.Advantages;
import comlrl.rl.ReferenceKl;
import comlrl.rl.Stats;
import comlrl.tensor.Scope;
import comlrl.trainers.common.RankWork;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The MA-REINFORCE policy loss of one agent (MAGRPO and its baselines), one place for its math.
 * For one NodeSample s (one agent at one rollout-tree node, G completions y_k of prompt x):
 * <pre>
 *   R'_k = R_k − β·KL_k                                    (reference-KL shaping, when enabled)
 *   A    = baseline(R')  [mean / raw / max / rloo]          (rl.AdvantageMode)
 *   A    ← (A − mean A) / max(std_pop A, 1e-6)            (scale_rewards group = advantage_normalization, G &gt; 1;
 *                                                          batch and none: {@link ScaleRewards})
 *   L_s  = (1/M) Σ_k −A_k · Σ_t log π(y_{k,t} | x, y_{k,&lt;t})   M = completions in the loss (≥ 1 token);
 *                                                               t over real tokens (EOS included, padding never)
 * </pre>
 * and for a minibatch B of NodeSamples, with gradient accumulation:
 * <pre>
 *   L_B  = (1/|B|) Σ_{s∈B} L_s,      ∇ ← ∇ L_B,  then one AdamW step
 * </pre>
 * so each completion is a weighted log-likelihood term: {@code L_B = Σ_s Σ_k w_{s,k} Σ_t log π(y_{s,k,t})}
 * with {@code w_{s,k} = −A_{s,k} / (M_s · |B|)} ({@link #weights}). That is {@code loss_type: sequence_sum},
 * the default; the other loss types only change the divisor of w ({@link LossType}). With
 * {@code mask_truncated_completions} a completion that reached max_new_tokens without an EOS is not
 * in the loss: w = 0, and it counts in none of M, |y|, T_s, T_B (TRL's grpo and dr_grpo still count
 * such rows in their denominators; here M counts the completions in the loss, as for empty ones).
 */
public final class MAGRPOLoss {
    private MAGRPOLoss() {
    }

    /** A of one NodeSample, as {@link #advantages(List, MAGRPOConfig)} gives it in a minibatch of itself. */
    public static double[] advantages(NodeSample s, MAGRPOConfig args) {
        return advantages(List.of(s), args)[0];
    }

    /**
     * A of every sample of a minibatch: shaped returns, the config's baseline, then
     * {@code scale_rewards} ({@link ScaleRewards}; {@code batch} takes the std of every sample's R'),
     * with the statistics of the sample's agent or of every agent of its node
     * ({@code advantage_normalization_scope}, {@link NormalizationScope}, where the formulas are).
     * {@code [|B|][G]}.
     *
     * <p>{@code credit: counterfactual} ({@link Credit}; {@code joint_mode: cross}): for agent i at a node,
     * each context c (one choice of the other N−1 agents' completions, C = G^(N−1) of them) is its own
     * group of the G joint actions that vary only agent i's completion k:
     * <pre>
     *   R'(k,c) = R_i[k][c] − β·KL_{i,k}                   (reference-KL shaping, when enabled)
     *   A(k,c)  = scale( baseline( R'(·,c) ) )_k            (baseline: advantage_mode within the context;
     *                                                        scale: group → normalise the context's G values,
     *                                                        batch → (A − mean A) / std_pop of every R'(k,c) of B,
     *                                                        none → A)
     *   A_i[k]  = (1/C) Σ_c A(k,c)                          (the advantage of completion k in the loss)
     * </pre>
     * Why not the naive COMA sum {@code Σ_c (R(k,c) − mean_k' R(k',c))}: with every joint action scored,
     * it equals {@code R_i[k] − mean_k' R_i[k']} exactly (R_i[k] = Σ_c R(k,c) is shared credit's
     * return), i.e. shared credit. Hence with the mean baseline, scale none and no KL, counterfactual
     * A_i = shared A_i / C: the same direction. They differ where the scaling or the baseline is not
     * linear across contexts: with group scaling a context where agent i's choice changes nothing
     * (all R'(·,c) equal) gives A(·,c) = 0, and every context where it matters weighs alike,
     * however large its returns; max and rloo baselines are taken per context. The KL term
     * keeps its weight β per context, where shared credit sets it against a sum of C returns.
     *
     * <p>3+ agents: C = G^(N−1) contexts of G each, the K = G^N joint returns of the node read once per
     * agent (N·K values per node, as scoring the K joint actions already costs K reward calls); a
     * context is the other agents' completion indices in mixed radix G ({@link comlrl.rl.JointMode#contextReturns}).
     * Multi-turn: R(k,c) are the tree returns of the node's joint actions (children's mean return
     * included), one node at a time.
     */
    public static double[][] advantages(List<NodeSample> minibatch, MAGRPOConfig args) {
        boolean counterfactual = args.credit() == Credit.COUNTERFACTUAL;
        double[][][] groups = new double[minibatch.size()][][];   // [|B|][C][G]; C = 1 for shared credit
        for (int j = 0; j < groups.length; j++) {
            NodeSample s = minibatch.get(j);
            double[][] byContext = counterfactual ? contexts(s) : new double[][] {s.returns()};
            groups[j] = new double[byContext.length][];
            for (int c = 0; c < byContext.length; c++) {
                groups[j][c] = s.referenceKls() == null ? byContext[c]
                        : ReferenceKl.shapeReturns(byContext[c], s.referenceKls(), args.referenceKlCoef());
            }
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

    /**
     * R'_m of every agent m at each sample's node, {@code [|B|][N][G]} ({@code advantage_normalization_scope:
     * joint}, {@link NormalizationScope}): each agent's returns shaped with its own reference KL.
     */
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
            pooled[j] = new double[returns.length][];
            for (int m = 0; m < returns.length; m++) {
                pooled[j][m] = kls == null ? returns[m] : ReferenceKl.shapeReturns(returns[m], kls[m], args.referenceKlCoef());
            }
        }
        return pooled;
    }

    /**
     * Joint group normalisation of one agent's A (G &gt; 1): {@code (A − mean_{m,k} A_{m,k}) / max(std_pop_{m,k}
     * A_{m,k}, 1e-6)}, A_m = baseline(R'_m) of every agent m of the node ({@code peers}, {@code [N][G]}).
     */
    private static double[] jointNormalize(double[] a, double[][] peers, MAGRPOConfig args) {
        if (a.length <= 1) {
            return a.clone();
        }
        double[] all = Arrays.stream(peers).map(r -> args.advantageMode().advantages(r)).flatMapToDouble(Arrays::stream)
                .toArray();
        double mean = Stats.mean(all);
        double std = Math.max(Stats.populationStd(all), Advantages.STD_FLOOR);
        double[] out = new double[a.length];
        for (int k = 0; k < a.length; k++) {
            out[k] = (a[k] - mean) / std;
        }
        return out;
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

    /** The weights of the config's loss type ({@link #weights(List, double[][], LossType, boolean, int)}; L = the agent's max_new_tokens). */
    public static double[][] weights(List<NodeSample> minibatch, MAGRPOConfig args) {
        return weights(minibatch, advantages(minibatch, args), args.lossType(), args.maskTruncatedCompletions(),
                minibatch.isEmpty() ? args.maxNewTokens(0) : args.maxNewTokens(minibatch.get(0).agent()));
    }

    /**
     * {@code w_{s,k} = −A_{s,k} / D_{s,k}}, the weight of completion k of sample s's Σ_t log π in L_B,
     * D as {@code type} defines it ({@link LossType}), and 0 for a completion not in the loss (no token,
     * or truncated when {@code maskTruncated}). Always from whole groups (a ddp rank that scores
     * some rows of a group still weighs them by the whole group's counts).
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
     * Adds ∇ L_B to the model's parameter gradients, one NodeSample at a time (one forward and
     * backward per sample, so the activations of one sample are alive at once). With the completions
     * divided between processes ({@link RankWork#splitsRows()}; L_B is a sum over completions) this rank
     * adds the gradient of its completions' terms (weights from the whole group), the per-sample losses
     * are summed across ranks before any is checked, and the caller sums the gradients
     * ({@link RankWork#sumGradients}); every rank then throws for the same sample, or none does.
     *
     * @return L_s of every sample of the minibatch, in order: |B| times its terms of L_B (the sum over B of
     *         L_s/|B| is L_B)
     * @throws NonFiniteException when a sample's loss is not finite (its gradient is then not added;
     *         earlier samples' are, so callers drop the gradients)
     */
    public static double[] accumulate(DecoderLm model, List<NodeSample> minibatch, MAGRPOConfig args, long padId,
            RankWork work) {
        double[] losses = new double[minibatch.size()];
        double[][] weights = weights(minibatch, args);
        for (int j = 0; j < minibatch.size(); j++) {
            NodeSample s = minibatch.get(j);
            double[] w = weights[j];
            int[] rows = work.localRows(s.completionIds().size());
            if (rows.length > 0) {
                List<long[]> ys = s.completionIds();
                double[] wl = w;
                if (work.splitsRows()) { // this process's completions of the group
                    ys = java.util.Arrays.stream(rows).mapToObj(ys::get).toList();
                    wl = java.util.Arrays.stream(rows).mapToDouble(k -> w[k]).toArray();
                }
                try (Scope scope = Scope.open()) {
                    double lb = Scorer.backwardWeighted(model, Collections.nCopies(rows.length, s.promptIds()), ys,
                            padId, wl, args.gradientCheckpointing());
                    losses[j] = lb * minibatch.size(); // L_s (this rank's part of it when the rows are split)
                }
            }
            if (!work.splitsRows() && !Double.isFinite(losses[j])) {
                throw new NonFiniteException("the policy loss is " + losses[j], s);
            }
        }
        if (work.splitsRows()) {
            losses = work.sum(losses);
            for (int j = 0; j < losses.length; j++) {
                if (!Double.isFinite(losses[j])) {
                    throw new NonFiniteException("the policy loss is " + losses[j], minibatch.get(j));
                }
            }
        }
        return losses;
    }

    /** A NaN or infinite value met on the way to an optimizer step, with the sample it came from. */
    public static final class NonFiniteException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient NodeSample sample;

        NonFiniteException(String what, NodeSample s) {
            super(what + " for agent " + s.agent() + ", turn " + (s.turn() + 1) + " of " + s.item()
                    + " (returns " + java.util.Arrays.toString(s.returns()) + ")");
            this.sample = s;
        }

        /** The sample whose value was not finite. */
        NodeSample sample() {
            return sample;
        }
    }
}
