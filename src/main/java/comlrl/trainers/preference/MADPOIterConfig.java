package comlrl.trainers.preference;

import java.util.Map;

/**
 * Training configuration of iterative multi-agent DPO (reference §7.4): MADPO's fields with the
 * iterative defaults ({@code num_train_epochs} 1 DPO epoch per iteration,
 * {@code preference_num_candidates} 20, {@code preference_pairs_per_sample} 4,
 * {@code pair_selection} "comparator_reward"), the iterative fields of
 * {@link IterativePreferenceConfig}, {@code dpo_reference} and the fields our MAGRPOConfig adds.
 * Immutable and validated when built.
 *
 * <pre>{@code
 * MADPOIterConfig config = MADPOIterConfig.builder().numIterations(3).comparatorPolicy("history").build();
 * MADPOIterConfig fromYaml = MADPOIterConfig.fromMap(Map.of("preference_replay_mode", "lambda_decay",
 *         "preference_replay_lambda", 0.5));
 * }</pre>
 */
public final class MADPOIterConfig extends IterativePreferenceConfig implements DpoConfig {

    private MADPOIterConfig(Builder b) {
        super(b);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A config from snake_case keys; unknown keys fail naming the closest valid one. */
    public static MADPOIterConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    public static final class Builder extends IterativePreferenceConfig.Builder<MADPOIterConfig, Builder>
            implements DpoConfig.Builder<Builder> {
        private Builder() {
            super("MADPOIterConfig", "MADPOIter", PreferenceFields.MADPO_ITER, PreferenceFields.MADPO_HINTS);
        }

        @Override
        public MADPOIterConfig build() {
            return new MADPOIterConfig(this);
        }
    }
}
