package comlrl.trainers.reinforce;

import comlrl.utils.ConfigName;

/**
 * {@code advantage_normalization_scope}: whose statistics {@code scale_rewards} (group or batch)
 * normalises agent i's advantages with. With A_m = baseline(R'_m) agent m's advantages at a node
 * (R'_m its shaped returns, {@link MAGRPOLoss}):
 * <pre>
 *   agent (default, Dr. MAS's agent-wise normalisation; what MAGRPO always did):
 *     group:  A_i ← (A_i − mean_k A_{i,k}) / max(std_pop_k A_{i,k}, 1e-6)
 *     batch:  A_i ← (A_i − mean_k A_{i,k}) / max(std_pop {R'_{i,s,k} : s ∈ B, all k}, 1e-6)
 *   joint (one normalisation shared by the agents of a node):
 *     group:  A_i ← (A_i − mean_{m,k} A_{m,k}) / max(std_pop_{m,k} A_{m,k}, 1e-6)      m over all N agents
 *     batch:  A_i ← (A_i − mean_k A_{i,k}) / max(std_pop {R'_{m,s,k} : s ∈ B, all m, all k}, 1e-6)
 * </pre>
 * (B is agent i's minibatch.) With team rewards, {@code joint_mode: aligned} and no reference KL joint
 * equals agent (up to rounding); otherwise joint lets the agent whose returns spread most set every
 * agent's scale. {@code scale_rewards: none} ignores the scope; {@code credit: counterfactual} needs
 * {@code agent}.
 */
public enum NormalizationScope implements ConfigName {
    AGENT, JOINT;

    /** Parses a config value (case and blanks ignored; null = agent); an unknown one fails. */
    public static NormalizationScope parse(String value) {
        return comlrl.utils.ConfigNames.parse("advantage_normalization_scope", value, AGENT, values(), NormalizationScope::configName, "");
    }

    @Override
    public String toString() {
        return configName();
    }
}
