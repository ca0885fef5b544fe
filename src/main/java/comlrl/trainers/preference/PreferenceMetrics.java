package comlrl.trainers.preference;

import comlrl.rl.Stats;
import java.util.Map;

/**
 * The health metrics of preference learning, as TRL logs them: the DPO implicit rewards of one
 * agent on one batch ({@link DpoRewards}) (a reward model's pair accuracy is {@link Stats#pairAccuracy}).
 */
public final class PreferenceMetrics {
    private PreferenceMetrics() {
    }

    /**
     * One agent's DPO implicit rewards on a batch of B pairs (TRL's {@code rewards/*}), from the
     * sequence log-probabilities s(y) of the winners w_b and losers l_b under the policy π and the
     * frozen reference π_ref:
     * <pre>
     *   r_w,b = β · (s_π(w_b) − s_ref(w_b))        r_l,b = β · (s_π(l_b) − s_ref(l_b))
     *   chosen   = (1/|B|) Σ_b r_w,b                rejected = (1/|B|) Σ_b r_l,b
     *   accuracy = (1/|B|) Σ_b [r_w,b > r_l,b]      margin   = (1/|B|) Σ_b (r_w,b − r_l,b) = β · mean Δ_b
     * </pre>
     * With {@code dpo_reference: none} there is no π_ref and {@code s_ref = 0} (TRL's reference-free
     * rewards {@code β · s_π(y)}).
     */
    public record DpoRewards(double chosen, double rejected, double accuracy, double margin) {
        /** The rewards of one batch; {@code reference} null means reference-free ({@code s_ref = 0}). */
        public static DpoRewards of(double beta, MADPOLoss.SequenceLogprobs policy, MADPOLoss.SequenceLogprobs reference) {
            int pairs = policy.size();
            if (reference != null && reference.size() != pairs) {
                throw new IllegalArgumentException(pairs + " policy but " + reference.size()
                        + " reference log-probability pairs");
            }
            double[] chosenRewards = new double[pairs];
            double[] rejectedRewards = new double[pairs];
            double chosen = 0;
            double rejected = 0;
            double margin = 0;
            for (int b = 0; b < pairs; b++) {
                chosenRewards[b] = beta * (policy.winners()[b] - (reference == null ? 0 : reference.winners()[b]));
                rejectedRewards[b] = beta * (policy.losers()[b] - (reference == null ? 0 : reference.losers()[b]));
                chosen += chosenRewards[b] / pairs;
                rejected += rejectedRewards[b] / pairs;
                margin += (chosenRewards[b] - rejectedRewards[b]) / pairs;
            }
            return new DpoRewards(chosen, rejected, Stats.pairAccuracy(chosenRewards, rejectedRewards), margin);
        }

        /**
         * Puts {@code <prefix>rewards/chosen}, {@code rewards/rejected}, {@code rewards/accuracies} and
         * {@code rewards/margins} into {@code metrics} (prefix e.g. {@code "agent_0/"}).
         */
        public void putInto(Map<String, Double> metrics, String prefix) {
            metrics.put(prefix + "rewards/chosen", chosen);
            metrics.put(prefix + "rewards/rejected", rejected);
            metrics.put(prefix + "rewards/accuracies", accuracy);
            metrics.put(prefix + "rewards/margins", margin);
        }
    }
}
