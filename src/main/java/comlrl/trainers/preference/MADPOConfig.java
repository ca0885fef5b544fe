package comlrl.trainers.preference;

import java.util.List;
import java.util.Map;

/**
 * Training configuration of multi-agent DPO (reference §7.1): every field of the Python
 * {@code MADPOConfig} with the same defaults, plus {@code dpo_reference} and the fields our
 * MAGRPOConfig adds. Immutable and validated when built; the fields: {@link PreferenceFields}.
 *
 * <pre>{@code
 * MADPOConfig config = MADPOConfig.builder()
 *         .preferenceNumCandidates(8).preferencePairsPerSample(4).dpoBeta(0.1)
 *         .build();
 * MADPOConfig fromYaml = MADPOConfig.fromMap(Map.of("pair_selection", "all", "preference_pairs_per_sample", "null"));
 * }</pre>
 */
public final class MADPOConfig extends PreferenceConfig implements DpoConfig {

    private MADPOConfig(Builder b) {
        super(b);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A config from snake_case keys; unknown keys fail naming the closest valid one. */
    public static MADPOConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    public static List<String> keys() {
        return keysOf(PreferenceFields.MADPO);
    }

    /** A builder holding this config's values (unset ones stay unset). */
    public Builder toBuilder() {
        return copyInto(builder());
    }

    public static final class Builder extends PreferenceConfig.Builder<MADPOConfig, Builder>
            implements DpoConfig.Builder<Builder> {
        private Builder() {
            super("MADPOConfig", "MADPO", PreferenceFields.MADPO, PreferenceFields.MADPO_HINTS);
        }

        public Builder dpoReference(DpoReference dpoReference) {
            return put(PreferenceFields.DPO_REFERENCE, dpoReference == null ? DpoReference.NONE : dpoReference);
        }

        @Override
        public MADPOConfig build() {
            return new MADPOConfig(this);
        }
    }
}
