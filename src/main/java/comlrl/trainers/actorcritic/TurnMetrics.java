package comlrl.trainers.actorcritic;

import comlrl.distributed.Codec;
import comlrl.distributed.Codecs;
import java.util.List;
import java.util.Map;

/**
 * What one agent's samples of one turn log, under {@code prefix + "turn_" + (t+1) + "/"}:
 * <pre>
 *   reward_mean                 mean r (after the reward processor, before KL shaping)
 *   expected_return             mean G_t
 *   reference_kl_mean           mean KL to the reference;  reference_kl_penalty_mean  mean β·KL
 *   policy_loss, value_loss     means over the update's minibatches           (training only)
 *   explained_variance          1 − Var[y − V_old] / Var[y] over the update   (training only; absent
 *                               when Var[y] = 0, where it is undefined: one sample, or equal targets)
 * </pre>
 * Evaluation logs the first four (losses and explained variance NaN here, and not logged).
 */
record TurnMetrics(double rewardMean, double expectedReturn, double referenceKlMean, double referenceKlPenaltyMean,
        double policyLoss, double valueLoss, double explainedVariance) {

    /** The rollout means of {@code samples} (losses and explained variance NaN). */
    static TurnMetrics ofRollouts(List<RolloutSample> samples) {
        return ofUpdate(samples, Double.NaN, Double.NaN, Double.NaN);
    }

    /** The rollout means of {@code samples} with the losses and explained variance of their update. */
    static TurnMetrics ofUpdate(List<RolloutSample> samples, double policyLoss, double valueLoss, double explainedVariance) {
        double reward = 0;
        double returns = 0;
        double kl = 0;
        double penalty = 0;
        for (RolloutSample s : samples) {
            reward += s.reward();
            returns += s.returns();
            kl += s.referenceKl();
            penalty += s.referenceKlPenalty();
        }
        int n = samples.size();
        return new TurnMetrics(reward / n, returns / n, kl / n, penalty / n, policyLoss, valueLoss, explainedVariance);
    }

    /** Puts the keys of turn {@code turn} (0-based) under {@code prefix}; NaN values are left out. */
    void putInto(Map<String, Double> metrics, String prefix, int turn) {
        String p = prefix + "turn_" + (turn + 1) + "/";
        put(metrics, p + "reward_mean", rewardMean);
        put(metrics, p + "expected_return", expectedReturn);
        put(metrics, p + "reference_kl_mean", referenceKlMean);
        put(metrics, p + "reference_kl_penalty_mean", referenceKlPenaltyMean);
        put(metrics, p + "policy_loss", policyLoss);
        put(metrics, p + "value_loss", valueLoss);
        put(metrics, p + "explained_variance", explainedVariance);
    }

    private static void put(Map<String, Double> metrics, String key, double value) {
        if (!Double.isNaN(value)) {
            metrics.put(key, value);
        }
    }

    /** Sends one agent's metrics by turn between processes (the agents split: from each agent's owner). */
    static final Codec<Map<Integer, TurnMetrics>> BY_TURN =
            Codecs.mapOf(Codecs.INT, Codecs.DOUBLES.as(TurnMetrics::ofComponents, TurnMetrics::components));

    /** The components in declaration order. */
    double[] components() {
        return new double[] {rewardMean, expectedReturn, referenceKlMean, referenceKlPenaltyMean, policyLoss, valueLoss,
            explainedVariance};
    }

    /** The metrics of {@link #components()}. */
    static TurnMetrics ofComponents(double[] v) {
        return new TurnMetrics(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    }
}
