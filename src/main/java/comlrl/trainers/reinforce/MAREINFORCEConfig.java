package comlrl.trainers.reinforce;

import java.util.Map;

/**
 * Configuration of MAREINFORCE: {@link MAGRPOConfig} with {@code advantage_mode: raw} by default. With
 * {@code advantage_normalization} on (the default) the advantages equal MAGRPO's (reference §3.4).
 */
public interface MAREINFORCEConfig extends MAGRPOConfig {
    @Override
    Builder<MAREINFORCEConfig> toBuilder();

    /** A builder with MA-REINFORCE's defaults. */
    static Builder<MAREINFORCEConfig> builder() {
        return new Builder<>(ReinforceAlgorithm.MAREINFORCE, BaseReinforceConfig.Mareinforce::new);
    }

    /** A MA-REINFORCE config from snake_case keys; see {@link MAGRPOConfig#fromMap(Map)}. */
    static MAREINFORCEConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }
}
