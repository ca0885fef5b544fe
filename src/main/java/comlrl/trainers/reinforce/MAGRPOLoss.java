package comlrl.trainers.reinforce;

import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.rl.Advantages;
import comlrl.rl.ReferenceKl;
import comlrl.tensor.Scope;
import comlrl.trainers.common.RankWork;
import java.util.Collections;
import java.util.List;

/**
 * The MA-REINFORCE policy loss of one agent (MAGRPO and its baselines), one place for its math.
 * For one NodeSample s (one agent at one rollout-tree node, G completions y_k of prompt x):
 * <pre>
 *   R'_k = R_k − β·KL_k                                    (reference-KL shaping, when enabled)
 *   A    = baseline(R')  [mean / raw / max / rloo]          (rl.AdvantageMode)
 *   A    ← (A − mean A) / max(std_pop A, 1e-6)            (when advantage_normalization, G &gt; 1)
 *   L_s  = (1/M) Σ_k −A_k · Σ_t log π(y_{k,t} | x, y_{k,&lt;t})   M = completions with ≥ 1 token;
 *                                                               t over real tokens (EOS included, padding never)
 * </pre>
 * and for a minibatch B of NodeSamples, with gradient accumulation:
 * <pre>
 *   L_B  = (1/|B|) Σ_{s∈B} L_s,      ∇ ← ∇ L_B,  then one AdamW step
 * </pre>
 * so each completion is a weighted log-likelihood term: {@code L_B = Σ_s Σ_k w_{s,k} Σ_t log π(y_{s,k,t})}
 * with {@code w_{s,k} = −A_{s,k} / (M_s · |B|)} ({@link #weights}).
 */
public final class MAGRPOLoss {
    private MAGRPOLoss() {
    }

    /** A of one NodeSample: shaped returns, the config's baseline, optional normalisation. {@code [G]}. */
    public static double[] advantages(NodeSample s, MAGRPOConfig args) {
        double[] returns = s.referenceKls() == null ? s.returns()
                : ReferenceKl.shapeReturns(s.returns(), s.referenceKls(), args.referenceKlCoef());
        return Advantages.compute(returns, args.advantageMode(), args.advantageNormalization());
    }

    /** {@code w_k = −A_k / (M · minibatchSize)}: the weight of completion k's Σ_t log π in L_B. */
    public static double[] weights(double[] advantages, List<long[]> completions, int minibatchSize) {
        int m = 0;
        for (long[] y : completions) {
            m += y.length > 0 ? 1 : 0;
        }
        double[] w = new double[advantages.length];
        for (int k = 0; k < w.length; k++) {
            w[k] = -advantages[k] / Math.max(m, 1) / minibatchSize;
        }
        return w;
    }

    /**
     * Adds ∇ L_B to the model's parameter gradients, one NodeSample at a time (one forward and
     * backward per sample, so the activations of one sample are alive at once). With the completions
     * divided between processes ({@link RankWork#splitsRows()}; L_B is a sum over completions) this rank
     * adds the gradient of its completions' terms (weights from the whole group), the per-sample losses
     * are summed across ranks before any is checked, and the caller sums the gradients
     * ({@link RankWork#sumGradients}); every rank then throws for the same sample, or none does.
     *
     * @return L_s of every sample of the minibatch, in order (the sum over B of L_s/|B| is L_B)
     * @throws NonFiniteException when a sample's loss is not finite (its gradient is then not added;
     *         earlier samples' are, so callers drop the gradients)
     */
    public static double[] accumulate(DecoderLm model, List<NodeSample> minibatch, MAGRPOConfig args, long padId,
            RankWork work) {
        double[] losses = new double[minibatch.size()];
        for (int j = 0; j < minibatch.size(); j++) {
            NodeSample s = minibatch.get(j);
            double[] w = weights(advantages(s, args), s.completionIds(), minibatch.size());
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
