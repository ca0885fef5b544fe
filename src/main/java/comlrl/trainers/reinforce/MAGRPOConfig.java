package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFields.*;
import static comlrl.utils.TrainerFields.ADVANTAGE_MODE;
import static comlrl.utils.TrainerFields.COLLABORATION_MODE;
import static comlrl.utils.TrainerFields.JOINT_MODE;

import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.utils.CollaborationMode;
import comlrl.utils.FieldTableConfig;
import comlrl.utils.TrainerConfig;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Training configuration of MAGRPO and the MA-REINFORCE family (reference §3.1): every field of the
 * Python {@code MAGRPOConfig} with the same defaults, plus {@code seed}; immutable, validated when built.
 * The fields are declared in {@code ReinforceFields} (or {@link comlrl.utils.TrainerFields} when shared),
 * which, with {@code docs/CONFIG.md}, documents each field's meaning and default.
 *
 * <pre>{@code
 * MAGRPOConfig config = MAGRPOConfig.builder()
 *         .numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(4).maxNewTokens(128)
 *         .build();
 * MAGRPOConfig fromYaml = MAGRPOConfig.fromMap(Map.of("num_turns", 1, "num_generations", 8));
 * }</pre>
 *
 * <p>The variants ({@link MAREINFORCEConfig}, {@link MAReMaxConfig}, {@link MARLOOConfig},
 * {@link CentralizedMAGRPOConfig}) are sub-types with other defaults and their own {@code builder()}
 * and {@code fromMap}; trainers take this type.
 *
 * <p>With non-negative rewards the default {@code early_termination_threshold} of −0.2 stops multi-turn
 * training after the first turn unless raised or set to null. AdamW keeps PyTorch's defaults (betas
 * 0.9/0.999, eps 1e-8, weight decay 0.01), with no schedule and no clipping. Where we differ from the
 * reference: as every {@link FieldTableConfig}; {@code scale_rewards} (ours, TRL's name) is one setting
 * with {@code advantage_normalization}: unset it follows it, a contradicting pair is rejected.
 */
public interface MAGRPOConfig extends TrainerConfig {

    /** Which algorithm of the family these defaults belong to. */
    ReinforceAlgorithm algorithm();

    default int numGenerations() {
        return get(NUM_GENERATIONS);
    }

    /** {@code discount}: <b>not used</b>, returns along the rollout tree are undiscounted (§14 item 2). */
    default double discount() {
        return get(DISCOUNT);
    }

    default JointMode jointMode() {
        return get(JOINT_MODE);
    }

    default AdvantageMode advantageMode() {
        return get(ADVANTAGE_MODE);
    }

    default LossType lossType() {
        return get(LOSS_TYPE);
    }

    /** {@code scale_rewards} ({@link ScaleRewards}); never null (unset: what advantage_normalization stands for). */
    ScaleRewards scaleRewards();

    /** {@code advantage_normalization}: {@code scale_rewards != none}. */
    @Override
    default boolean advantageNormalization() {
        return scaleRewards() != ScaleRewards.NONE;
    }

    default boolean maskTruncatedCompletions() {
        return get(MASK_TRUNCATED_COMPLETIONS);
    }

    default Credit credit() {
        return get(CREDIT);
    }

    default boolean dynamicSampling() {
        return get(DYNAMIC_SAMPLING);
    }

    default Integer dynamicSamplingMaxDraws() {
        return get(DYNAMIC_SAMPLING_MAX_DRAWS);
    }

    default int numIterations() {
        return get(NUM_ITERATIONS);
    }

    default double epsilon() {
        return get(EPSILON);
    }

    /** {@code epsilon_high}: ε_high, resolved ({@code epsilon} when unset). */
    default double epsilonHigh() {
        Double high = get(EPSILON_HIGH);
        return high != null ? high : epsilon();
    }

    default ImportanceSamplingLevel importanceSamplingLevel() {
        return get(IMPORTANCE_SAMPLING_LEVEL);
    }

    default NormalizationScope advantageNormalizationScope() {
        return get(ADVANTAGE_NORMALIZATION_SCOPE);
    }

    /** A builder holding this config's values (train_batch_size stays unset if it was). */
    Builder<? extends MAGRPOConfig> toBuilder();

    /** A builder with MAGRPO's defaults. */
    static Builder<MAGRPOConfig> builder() {
        return new Builder<>(ReinforceAlgorithm.MAGRPO, BaseReinforceConfig.Magrpo::new);
    }

    /** An MAGRPO config from snake_case keys (a YAML/JSON {@code args:} section). */
    static MAGRPOConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    /** The update-rule fields, which configs running this family as a stage (MARLHF's RL stage) pass on. */
    static List<comlrl.utils.ConfigField<?>> updateRuleFields() {
        return ReinforceFields.UPDATE_RULES;
    }

    /** The snake_case keys of an MAGRPO config, in field order. */
    static List<String> keys() {
        return ReinforceAlgorithm.MAGRPO.keys();
    }

    /**
     * Builds a config of type {@code C}: setters take the Java values (a String overload the config
     * spelling), {@link #apply(Map)} and {@link #set(String, Object)} the snake_case keys; {@link #build()}
     * validates.
     *
     * @param <C> the config type built
     */
    final class Builder<C extends MAGRPOConfig> extends FieldTableConfig.Builder<C, Builder<C>> {
        final ReinforceAlgorithm algorithm;
        final Function<Builder<C>, C> factory;
        /** A collaboration_mode given to a config that has none (rejected by {@link #build()}). */
        CollaborationMode misplacedCollaborationMode;
        /** Whether advantage_normalization was set on this builder (not only copied or defaulted). */
        boolean advantageNormalizationSet;

        Builder(ReinforceAlgorithm algorithm, Function<Builder<C>, C> factory) {
            super(algorithm.configTypeName(), algorithm.displayName(), ReinforceFields.of(algorithm),
                    ReinforceFields.HINTS);
            this.algorithm = algorithm;
            this.factory = factory;
        }

        public Builder<C> numGenerations(int numGenerations) {
            return put(NUM_GENERATIONS, numGenerations);
        }

        public Builder<C> discount(double discount) {
            return put(DISCOUNT, discount);
        }

        public Builder<C> jointMode(JointMode jointMode) {
            return put(JOINT_MODE, Objects.requireNonNull(jointMode, "jointMode"));
        }

        public Builder<C> jointMode(String jointMode) {
            return put(JOINT_MODE, JointMode.parse(jointMode));
        }

        public Builder<C> advantageMode(AdvantageMode advantageMode) {
            return put(ADVANTAGE_MODE, Objects.requireNonNull(advantageMode, "advantageMode"));
        }

        public Builder<C> advantageMode(String advantageMode) {
            return put(ADVANTAGE_MODE, AdvantageMode.parse(advantageMode));
        }

        public Builder<C> lossType(LossType lossType) {
            return put(LOSS_TYPE, Objects.requireNonNull(lossType, "lossType"));
        }

        public Builder<C> lossType(String lossType) {
            return put(LOSS_TYPE, LossType.parse(lossType));
        }

        public Builder<C> scaleRewards(ScaleRewards scaleRewards) {
            return put(SCALE_REWARDS, scaleRewards);
        }

        public Builder<C> scaleRewards(String scaleRewards) {
            return put(SCALE_REWARDS, ScaleRewards.parse(scaleRewards));
        }

        public Builder<C> maskTruncatedCompletions(boolean mask) {
            return put(MASK_TRUNCATED_COMPLETIONS, mask);
        }

        public Builder<C> credit(Credit credit) {
            return put(CREDIT, Objects.requireNonNull(credit, "credit"));
        }

        public Builder<C> credit(String credit) {
            return put(CREDIT, Credit.parse(credit));
        }

        public Builder<C> dynamicSampling(boolean dynamicSampling) {
            return put(DYNAMIC_SAMPLING, dynamicSampling);
        }

        public Builder<C> dynamicSamplingMaxDraws(Integer maxDraws) {
            return put(DYNAMIC_SAMPLING_MAX_DRAWS, maxDraws);
        }

        public Builder<C> numIterations(int numIterations) {
            return put(NUM_ITERATIONS, numIterations);
        }

        public Builder<C> epsilon(double epsilon) {
            return put(EPSILON, epsilon);
        }

        public Builder<C> epsilonHigh(Double epsilonHigh) {
            return put(EPSILON_HIGH, epsilonHigh);
        }

        public Builder<C> importanceSamplingLevel(ImportanceSamplingLevel level) {
            return put(IMPORTANCE_SAMPLING_LEVEL, Objects.requireNonNull(level, "importanceSamplingLevel"));
        }

        public Builder<C> importanceSamplingLevel(String level) {
            return put(IMPORTANCE_SAMPLING_LEVEL, ImportanceSamplingLevel.parse(level));
        }

        public Builder<C> advantageNormalizationScope(NormalizationScope scope) {
            return put(ADVANTAGE_NORMALIZATION_SCOPE, Objects.requireNonNull(scope, "advantage_normalization_scope"));
        }

        public Builder<C> advantageNormalizationScope(String scope) {
            return put(ADVANTAGE_NORMALIZATION_SCOPE, NormalizationScope.parse(scope));
        }

        @Override
        public Builder<C> advantageNormalization(boolean advantageNormalization) {
            advantageNormalizationSet = true;
            return super.advantageNormalization(advantageNormalization);
        }

        @Override
        public Builder<C> apply(Map<String, ?> values) {
            super.apply(values);
            advantageNormalizationSet |= values.containsKey("advantage_normalization");
            return this;
        }

        /** {@code collaboration_mode}: only {@link CentralizedMAGRPOConfig} has it ("centralized"). */
        public Builder<C> collaborationMode(CollaborationMode collaborationMode) {
            if (algorithm == ReinforceAlgorithm.CENTRALIZED_MAGRPO) {
                return put(COLLABORATION_MODE, collaborationMode);
            }
            misplacedCollaborationMode = collaborationMode;
            return this;
        }

        public Builder<C> collaborationMode(String collaborationMode) {
            return collaborationMode(CollaborationMode.parse(collaborationMode));
        }

        @Override
        public C build() {
            return factory.apply(this);
        }
    }
}
