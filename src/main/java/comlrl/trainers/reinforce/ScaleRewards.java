package comlrl.trainers.reinforce;

import comlrl.utils.ConfigName;

/**
 * {@code scale_rewards}: what the advantages of a NodeSample s are divided by, the names as TRL's
 * GRPOConfig spells them. With A_s = baseline(R'_s) ({@code advantage_mode}, R' the shaped returns):
 * <pre>
 *   group:  A_s ← (A_s − mean A_s) / max(std_pop A_s, 1e-6)                    (= advantage_normalization: true)
 *   batch:  A_s ← (A_s − mean A_s) / max(std_pop {R'_{s',k} : s' ∈ B, all k}, 1e-6)
 *   none:   A_s unchanged                                                     (= advantage_normalization: false)
 * </pre>
 * each only for G &gt; 1. {@code batch} is TRL's, B the minibatch of one optimizer step (by default the
 * whole rollout buffer, TRL's generation batch). Unset, it follows {@code advantage_normalization}, and
 * a run's {@code config.json} holds the pair consistent.
 */
public enum ScaleRewards implements ConfigName {
    GROUP, BATCH, NONE;

    /** The value {@code advantage_normalization} stands for: group when true, none when false. */
    static ScaleRewards of(boolean advantageNormalization) {
        return advantageNormalization ? GROUP : NONE;
    }

    /** Parses a config value (case and blanks ignored); null stays null (unset). */
    public static ScaleRewards parse(String value) {
        return comlrl.utils.ConfigNames.parse("scale_rewards", value, null, values(), ScaleRewards::configName, " or null");
    }

    @Override
    public String toString() {
        return configName();
    }
}
