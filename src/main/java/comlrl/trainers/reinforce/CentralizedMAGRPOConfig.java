package comlrl.trainers.reinforce;

import comlrl.utils.CollaborationMode;
import java.util.Map;

/**
 * Configuration of centralized MAGRPO (reference §3.7): one actor model writes every role's
 * response in a single joint completion, so {@code num_turns} must be 1 (the default here) and
 * {@code collaboration_mode} must be "centralized". {@code num_agents} is the number of roles;
 * {@code max_new_tokens} is the budget of the whole joint completion; each joint sample is one
 * env step. Device lists refer to the single actor.
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
