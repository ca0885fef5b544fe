package comlrl.trainers.preference;

import comlrl.rl.AdvantageMode;
import comlrl.utils.ConfigField;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Training configuration of iterative multi-agent RLHF (reference §7.4): MARLHF's fields with the
 * iterative defaults ({@code num_train_epochs} 2 RL epochs and {@code reward_num_train_epochs} 2
 * per iteration, {@code preference_num_candidates} 20, {@code preference_pairs_per_sample} 4,
 * {@code pair_selection} "comparator_reward"), {@code preference_scoring_reward}, the iterative
 * fields of {@link IterativePreferenceConfig} and ours. MARLHF's rules apply ({@link #marlhf()}
 * builds the MARLHF view and fails as {@link MARLHFConfig} does).
 *
 * <pre>{@code
 * MARLHFIterConfig config = MARLHFIterConfig.fromMap(Map.of("rl_algorithm", "iac", "num_generations", 1,
 *         "num_iterations", 3, "reward_model_device", "cpu"));
 * }</pre>
 */
public final class MARLHFIterConfig extends IterativePreferenceConfig {
    private final MARLHFConfig marlhf;

    private MARLHFIterConfig(Builder b) {
        super(b);
        this.marlhf = MARLHFConfig.fromMap(marlhfFields());
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A config from snake_case keys; unknown keys fail naming the closest valid one. */
    public static MARLHFIterConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    public static List<String> keys() {
        return keysOf(PreferenceFields.MARLHF_ITER);
    }

    /**
     * This config's MARLHF fields as a {@link MARLHFConfig}: what each iteration's reward-model and RL
     * stages run with; its pair selection is MARLHF's default (the iterations pair index by index).
     */
    public MARLHFConfig marlhf() {
        return marlhf;
    }

    private Map<String, Object> marlhfFields() {
        // the pairing rule is the iterations' own; an unset advantage_mode follows rl_algorithm
        Map<String, Object> out = new LinkedHashMap<>(valuesOf(MARLHFConfig.keys(),
                java.util.Set.of("pair_selection", "preference_pairs_per_sample")));
        if (get(PreferenceFields.OPTIONAL_ADVANTAGE_MODE) == null) {
            out.remove("advantage_mode");
        }
        return out;
    }

    public PreferenceScoringReward preferenceScoringReward() {
        return get(PreferenceFields.PREFERENCE_SCORING_REWARD);
    }

    public RlAlgorithm rlAlgorithm() {
        return marlhf.rlAlgorithm();
    }

    @Override
    public AdvantageMode advantageMode() {
        return marlhf.advantageMode();
    }

    @Override
    protected Object resolved(ConfigField<?> field) {
        return field == PreferenceFields.OPTIONAL_ADVANTAGE_MODE ? get(field) : super.resolved(field);
    }

    /** Builds a {@link MARLHFIterConfig}; MARLHF's other fields are set by key ({@link #set}). */
    public static final class Builder extends IterativePreferenceConfig.Builder<MARLHFIterConfig, Builder> {
        private Builder() {
            super("MARLHFIterConfig", "MARLHFIter", PreferenceFields.MARLHF_ITER, PreferenceFields.MARLHF_HINTS);
        }

        public Builder preferenceScoringReward(String value) {
            return put(PreferenceFields.PREFERENCE_SCORING_REWARD, PreferenceScoringReward.parse(value));
        }

        public Builder rlAlgorithm(String rlAlgorithm) {
            return set("rl_algorithm", rlAlgorithm);
        }

        public Builder numGenerations(int numGenerations) {
            return set("num_generations", numGenerations);
        }

        public Builder rewardModelDevice(String device) {
            return set("reward_model_device", device);
        }

        public Builder rewardModelName(String name) {
            return set("reward_model_name", name);
        }

        @Override
        public MARLHFIterConfig build() {
            return new MARLHFIterConfig(this);
        }
    }
}
