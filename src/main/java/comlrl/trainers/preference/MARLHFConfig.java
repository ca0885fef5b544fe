package comlrl.trainers.preference;

import comlrl.reward.JointRewardModel;
import comlrl.rl.AdvantageMode;
import comlrl.trainers.actorcritic.CriticType;
import comlrl.utils.ConfigField;
import comlrl.utils.TrainerFields;
import java.util.List;
import java.util.Map;

/**
 * Training configuration of multi-agent RLHF (reference §7.3): the fields of
 * {@link PreferenceFields#MARLHF}; the critics' fields are passed to an IAC/MAAC stage by key (read
 * them with {@link #get}), the MAGRPO family's update rules to a MAGRPO-family one (an IAC/MAAC stage
 * rejects them when set). Immutable and validated when built.
 *
 * <pre>{@code
 * MARLHFConfig config = MARLHFConfig.builder()
 *         .rlAlgorithm(RlAlgorithm.IAC).numGenerations(1).rewardModelDevice("cpu")
 *         .build();
 * MARLHFConfig fromYaml = MARLHFConfig.fromMap(Map.of("rl_algorithm", "mareforce", "reward_train_batch_size", 2));
 * }</pre>
 *
 * <p>Where we differ from the reference: an {@code advantage_mode} set explicitly that contradicts a
 * MAGRPO-family {@code rl_algorithm} is an error (the reference silently overwrites it with the
 * algorithm's baseline; unset, it follows the algorithm as there); {@code value_head_hidden_dim} and
 * {@code critic_value_head_hidden_dim} must be ≥ 0 and {@code reward_model_name},
 * {@code reward_model_device} and {@code critic_model_name} must not be blank; and the shared
 * differences of {@link PreferenceConfig}.
 */
public final class MARLHFConfig extends PreferenceConfig {

    private MARLHFConfig(Builder b) {
        super(b);
        RlAlgorithm algorithm = rlAlgorithm();
        check(numGenerations() < algorithm.minGenerations() ? "num_generations must be >= 2 for MAGRPO-family MARLHF "
                + "backends, got " + numGenerations() + " with rl_algorithm=\"" + algorithm + "\": the group baseline "
                + "needs several samples per prompt; raise num_generations, or use rl_algorithm \"iac\" or \"maac\""
                : null);
        AdvantageMode explicit = get(PreferenceFields.OPTIONAL_ADVANTAGE_MODE);
        check(explicit != null && !algorithm.isActorCritic() && explicit != algorithm.advantageMode()
                ? "advantage_mode=\"" + explicit + "\" contradicts rl_algorithm=\"" + algorithm + "\", which trains "
                + "with advantage_mode=\"" + algorithm.advantageMode() + "\"; choose the baseline through rl_algorithm "
                + "(magrpo: mean, mareinforce: raw, maremax: max, marloo: rloo) and leave advantage_mode unset" : null);
        for (ConfigField<?> rule : PreferenceFields.RL_STAGE_RULES) {
            check(algorithm.isActorCritic() && !java.util.Objects.equals(get(rule), rule.defaultValue) ? rule.key + "="
                    + rule.write(get(rule)) + " is an update rule of the MAGRPO-family backends (rl_algorithm magrpo, "
                    + "mareinforce, maremax, marloo), which rl_algorithm=\"" + algorithm + "\" does not use; remove it "
                    + "or choose one of those backends" : null);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A config from snake_case keys; unknown keys fail naming the closest valid one. */
    public static MARLHFConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    public static List<String> keys() {
        return keysOf(PreferenceFields.MARLHF);
    }

    public Builder toBuilder() {
        return copyInto(builder());
    }

    /**
     * {@code advantage_mode}, resolved: the MAGRPO-family backends' own baseline (magrpo → mean,
     * mareinforce → raw, maremax → max, marloo → rloo); IAC and MAAC do not use it (unset reads "mean").
     */
    @Override
    public AdvantageMode advantageMode() {
        AdvantageMode explicit = get(PreferenceFields.OPTIONAL_ADVANTAGE_MODE);
        AdvantageMode algorithms = rlAlgorithm().advantageMode();
        return algorithms != null ? algorithms : explicit != null ? explicit : AdvantageMode.MEAN;
    }

    @Override
    protected Object resolved(ConfigField<?> field) {
        return field == PreferenceFields.OPTIONAL_ADVANTAGE_MODE ? advantageMode() : super.resolved(field);
    }

    public RlAlgorithm rlAlgorithm() {
        return get(PreferenceFields.RL_ALGORITHM);
    }

    /** {@code num_generations}: ≥ 2 for the MAGRPO family (a group baseline), ≥ 1 for IAC and MAAC. */
    public int numGenerations() {
        return get(PreferenceFields.NUM_GENERATIONS);
    }

    public int rlNumIterations() {
        return get(PreferenceFields.RL_NUM_ITERATIONS);
    }

    /** {@code reward_model_name}: the {@link JointRewardModel}'s backbone; required when the agents are objects. */
    public String rewardModelName() {
        return get(PreferenceFields.REWARD_MODEL_NAME);
    }

    public String rewardModelDevice() {
        return get(PreferenceFields.REWARD_MODEL_DEVICE);
    }

    public double rewardLearningRate() {
        return get(PreferenceFields.REWARD_LEARNING_RATE);
    }

    public int rewardNumTrainEpochs() {
        return get(PreferenceFields.REWARD_NUM_TRAIN_EPOCHS);
    }

    public int rewardTrainBatchSize() {
        return get(PreferenceFields.REWARD_TRAIN_BATCH_SIZE);
    }

    public Integer rewardMaxLength() {
        return get(PreferenceFields.REWARD_MAX_LENGTH);
    }

    public boolean rewardFreezeBackbone() {
        return get(PreferenceFields.REWARD_FREEZE_BACKBONE);
    }

    public String criticModelName() {
        return get(PreferenceFields.CRITIC_MODEL_NAME);
    }

    public double criticLearningRate() {
        return get(PreferenceFields.CRITIC_LEARNING_RATE);
    }

    public List<String> criticDevices() {
        return get(TrainerFields.CRITIC_DEVICES);
    }

    public static final class Builder extends PreferenceConfig.Builder<MARLHFConfig, Builder> {
        private Builder() {
            super("MARLHFConfig", "MARLHF", PreferenceFields.MARLHF, PreferenceFields.MARLHF_HINTS);
        }

        public Builder rlAlgorithm(RlAlgorithm rlAlgorithm) {
            return put(PreferenceFields.RL_ALGORITHM, rlAlgorithm == null ? RlAlgorithm.MAGRPO : rlAlgorithm);
        }

        public Builder rlAlgorithm(String rlAlgorithm) {
            return put(PreferenceFields.RL_ALGORITHM, RlAlgorithm.parse(rlAlgorithm));
        }

        public Builder numGenerations(int numGenerations) {
            return put(PreferenceFields.NUM_GENERATIONS, numGenerations);
        }

        public Builder rewardModelName(String rewardModelName) {
            return put(PreferenceFields.REWARD_MODEL_NAME, rewardModelName);
        }

        public Builder rewardModelDevice(String rewardModelDevice) {
            return put(PreferenceFields.REWARD_MODEL_DEVICE, rewardModelDevice);
        }

        public Builder rewardLearningRate(double rewardLearningRate) {
            return put(PreferenceFields.REWARD_LEARNING_RATE, rewardLearningRate);
        }

        public Builder rewardNumTrainEpochs(int rewardNumTrainEpochs) {
            return put(PreferenceFields.REWARD_NUM_TRAIN_EPOCHS, rewardNumTrainEpochs);
        }

        public Builder rewardTrainBatchSize(int rewardTrainBatchSize) {
            return put(PreferenceFields.REWARD_TRAIN_BATCH_SIZE, rewardTrainBatchSize);
        }

        public Builder rewardMaxLength(Integer rewardMaxLength) {
            return put(PreferenceFields.REWARD_MAX_LENGTH, rewardMaxLength);
        }

        public Builder rewardFreezeBackbone(boolean rewardFreezeBackbone) {
            return put(PreferenceFields.REWARD_FREEZE_BACKBONE, rewardFreezeBackbone);
        }

        public Builder criticModelName(String criticModelName) {
            return put(PreferenceFields.CRITIC_MODEL_NAME, criticModelName);
        }

        public Builder criticLearningRate(Double criticLearningRate) {
            return put(PreferenceFields.CRITIC_LEARNING_RATE, criticLearningRate);
        }

        public Builder criticDevices(List<String> criticDevices) {
            return put(TrainerFields.CRITIC_DEVICES, copy(criticDevices));
        }

        public Builder criticDevices(String device) {
            return put(TrainerFields.CRITIC_DEVICES, device == null ? null : List.of(device));
        }

        public Builder useSeparateCritic(boolean useSeparateCritic) {
            return put(TrainerFields.USE_SEPARATE_CRITIC, useSeparateCritic);
        }

        public Builder criticType(CriticType criticType) {
            return put(CriticType.CONFIG_FIELD, criticType == null ? CriticType.V : criticType);
        }

        public Builder criticType(String criticType) {
            return put(CriticType.CONFIG_FIELD, CriticType.parse(criticType));
        }

        public Builder valueLossCoef(double valueLossCoef) {
            return put(TrainerFields.VALUE_LOSS_COEF, valueLossCoef);
        }

        public Builder valueClipRange(Double valueClipRange) {
            return put(TrainerFields.VALUE_CLIP_RANGE, valueClipRange);
        }

        public Builder criticValueHeadHiddenDim(Integer hiddenDim) {
            return put(TrainerFields.CRITIC_VALUE_HEAD_HIDDEN_DIM, hiddenDim);
        }

        public Builder valueHeadHiddenDim(Integer hiddenDim) {
            return put(TrainerFields.VALUE_HEAD_HIDDEN_DIM, hiddenDim);
        }

        @Override
        public MARLHFConfig build() {
            return new MARLHFConfig(this);
        }
    }
}
