package comlrl.trainers.reinforce;

import java.util.Map;

/**
 * Configuration of MARLOO: {@link MAGRPOConfig} with {@code advantage_mode: rloo} by default. With
 * {@code advantage_normalization} on (the default) the advantages equal MAGRPO's (reference §3.4).
 */
public interface MARLOOConfig extends MAGRPOConfig {
    @Override
    Builder<MARLOOConfig> toBuilder();

    /** A builder with MARLOO's defaults. */
    static Builder<MARLOOConfig> builder() {
        return new Builder<>(ReinforceAlgorithm.MARLOO, BaseReinforceConfig.Marloo::new);
    }

    /** A MARLOO config from snake_case keys; see {@link MAGRPOConfig#fromMap(Map)}. */
    static MARLOOConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }
}
