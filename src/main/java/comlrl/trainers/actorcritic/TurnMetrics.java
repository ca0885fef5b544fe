package comlrl.trainers.actorcritic;

import comlrl.distributed.Codec;
import comlrl.distributed.Codecs;
import comlrl.trainers.common.JointEvaluator;
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
 * Evaluation logs the first four, each the mean over the turn's samples of all items ({@link #add}).
 */
final class TurnMetrics {
    private static final String[] KEYS = {"reward_mean", "expected_return", "reference_kl_mean",
        "reference_kl_penalty_mean", "policy_loss", "value_loss", "explained_variance"};

    /** One agent's metrics, keys in order, between processes (the agents split: from each agent's owner). */
    static final Codec<Map<String, Double>> CODEC = Codecs.mapOf(Codecs.STRING,
            Codecs.DOUBLES.as(v -> v[0], d -> new double[] {d}));

    private TurnMetrics() {
    }

    /** Adds a sample's first four values (evaluation's) to the means of its turn. */
    static void add(JointEvaluator.Means means, RolloutSample s) {
        double[] values = {s.reward(), s.returns(), s.referenceKl(), s.referenceKlPenalty()};
        for (int j = 0; j < values.length; j++) {
            means.turn(s.turnIdx(), KEYS[j], values[j]);
        }
    }

    /** Puts the keys of {@code samples} (one turn's) under {@code prefix}; NaN values are left out. */
    static void put(Map<String, Double> metrics, String prefix, List<RolloutSample> samples, double policyLoss,
            double valueLoss, double explainedVariance) {
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
        double[] values = {reward / n, returns / n, kl / n, penalty / n, policyLoss, valueLoss, explainedVariance};
        String p = prefix + "turn_" + (samples.get(0).turnIdx() + 1) + "/";
        for (int j = 0; j < KEYS.length; j++) {
            if (!Double.isNaN(values[j])) {
                metrics.put(p + KEYS[j], values[j]);
            }
        }
    }
}
