package comlrl.trainers.reinforce;

import java.util.Map;

/**
 * Configuration of MAReMax: {@link MAGRPOConfig} with {@code advantage_mode: max} by default. With
 * {@code advantage_normalization} on (the default) the advantages equal MAGRPO's (reference §3.4).
 */
public interface MAReMaxConfig extends MAGRPOConfig {
    @Override
    Builder<MAReMaxConfig> toBuilder();

    /** A builder with MAReMax's defaults. */
    static Builder<MAReMaxConfig> builder() {
        return new Builder<>(ReinforceAlgorithm.MAREMAX, BaseReinforceConfig.Maremax::new);
    }

    /** A MAReMax config from snake_case keys; see {@link MAGRPOConfig#fromMap(Map)}. */
    static MAReMaxConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }
}
