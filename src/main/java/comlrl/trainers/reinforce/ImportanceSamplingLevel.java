package comlrl.trainers.reinforce;

import comlrl.utils.ConfigName;

/**
 * {@code importance_sampling_level}: which ratio of the current policy π_θ to the sampling policy
 * π_old the clipped surrogate of {@code num_iterations} &gt; 1 uses, as TRL's GRPOConfig names it.
 * With ρ_t = log π_θ(y_t | x, y_&lt;t) − log π_old(y_t | x, y_&lt;t) over the |y| tokens of a completion:
 * <pre>
 *   token:     r_t = exp(ρ_t)                          (GRPO, PPO)
 *   sequence:  r_t = s = exp((1/|y|) Σ_u ρ_u)  for every t   (GSPO)
 * </pre>
 * Unclipped, {@code ∇s = s · (1/|y|) Σ_u ∇log π_θ(y_u)}; a completion is clipped whole or not at all.
 * With {@code num_iterations} 1 every ratio is 1 and the level makes no difference.
 */
public enum ImportanceSamplingLevel implements ConfigName {
    TOKEN, SEQUENCE;

    /** Parses a config value (case and blanks ignored; null = token); an unknown one fails. */
    public static ImportanceSamplingLevel parse(String value) {
        return comlrl.utils.ConfigNames.parse("importance_sampling_level", value, TOKEN, values(), ImportanceSamplingLevel::configName, "");
    }

    @Override
    public String toString() {
        return configName();
    }
}
