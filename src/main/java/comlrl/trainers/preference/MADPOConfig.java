package comlrl.trainers.preference;

import java.util.List;
import java.util.Map;

/**
 * Training configuration of multi-agent DPO (reference §7.1): every field of the Python
 * {@code MADPOConfig} with the same defaults, plus the fields our MAGRPOConfig adds ({@code seed},
 * {@code gradient_checkpointing}, {@code generation_kwargs}, {@code skip_nonfinite_samples},
 * {@code save_total_limit}) and {@code dpo_reference}. Immutable and validated when built; each
 * field's meaning is declared once, in {@link PreferenceFields} ({@code docs/CONFIG.md}).
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

    /** A builder with the reference's MADPO defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A config from snake_case keys (an {@code args:} section); an unknown key fails naming the closest valid one. */
    public static MADPOConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    /** The snake_case keys of a MADPO config, in field order. */
    public static List<String> keys() {
        return keysOf(PreferenceFields.MADPO);
    }

    /** A builder holding this config's values (an unset train_batch_size stays unset). */
    public Builder toBuilder() {
        return copyInto(builder());
    }

    /** Builds a {@link MADPOConfig}; see {@link PreferenceConfig.Builder} for the shared setters. */
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
