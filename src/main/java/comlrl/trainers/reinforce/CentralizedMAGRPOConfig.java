package comlrl.trainers.reinforce;

import comlrl.utils.CollaborationMode;
import java.util.Map;

/**
 * Configuration of centralized MAGRPO (reference §3.7, {@link CentralizedMAGRPOTrainer}):
 * {@code num_turns} must be 1 (the default here) and {@code collaboration_mode} "centralized";
 * {@code num_agents} is the number of roles; device lists refer to the single actor.
 */
public interface CentralizedMAGRPOConfig extends MAGRPOConfig {
    /** {@code collaboration_mode}: always {@link CollaborationMode#CENTRALIZED}. */
    default CollaborationMode collaborationMode() {
        return get(comlrl.utils.TrainerFields.COLLABORATION_MODE);
    }

    @Override
    Builder<CentralizedMAGRPOConfig> toBuilder();

    /** A builder with the centralized defaults (num_turns 1, collaboration_mode centralized). */
    static Builder<CentralizedMAGRPOConfig> builder() {
        return new Builder<>(ReinforceAlgorithm.CENTRALIZED_MAGRPO, BaseReinforceConfig.Centralized::new);
    }

    /** A centralized config from snake_case keys (collaboration_mode included); see {@link MAGRPOConfig#fromMap(Map)}. */
    static CentralizedMAGRPOConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }
}
