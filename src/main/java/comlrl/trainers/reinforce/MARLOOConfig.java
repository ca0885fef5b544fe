package comlrl.trainers.reinforce;

import java.util.List;
import java.util.Map;

/**
 * Configuration of MARLOO: {@link MAGRPOConfig} with {@code advantage_mode = "rloo"} by default
 * (leave-one-out baseline, A_k = R_k − mean_{l≠k} R_l). With the default {@code advantage_normalization = true} the normalised advantages
 * equal MAGRPO's; the baseline only matters with normalisation off (reference §3.4).
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

    /** The snake_case keys, in field order. */
    static List<String> keys() {
        return ReinforceAlgorithm.MARLOO.keys();
    }
}
