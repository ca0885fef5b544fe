package comlrl.trainers.preference;

import static comlrl.utils.ConfigField.atLeast;
import static comlrl.utils.ConfigField.choice;
import static comlrl.utils.ConfigField.flag;
import static comlrl.utils.ConfigField.nullableAtLeast;
import static comlrl.utils.ConfigField.nullableNumber;
import static comlrl.utils.ConfigField.number;
import static comlrl.utils.TrainerFields.ADVANTAGE_NORMALIZATION;
import static comlrl.utils.TrainerFields.AGENT_DEVICES;
import static comlrl.utils.TrainerFields.AGENT_LEARNING_RATE;
import static comlrl.utils.TrainerFields.CRITIC_DEVICES;
import static comlrl.utils.TrainerFields.CRITIC_VALUE_HEAD_HIDDEN_DIM;
import static comlrl.utils.TrainerFields.EVAL_BATCH_SIZE;
import static comlrl.utils.TrainerFields.EVAL_INTERVAL;
import static comlrl.utils.TrainerFields.EVAL_NUM_SAMPLES;
import static comlrl.utils.TrainerFields.EXTERNAL_PROMPT_PASSTHROUGH;
import static comlrl.utils.TrainerFields.MAX_NEW_TOKENS;
import static comlrl.utils.TrainerFields.NUM_AGENTS;
import static comlrl.utils.TrainerFields.OURS;
import static comlrl.utils.TrainerFields.PARALLEL_TRAINING;
import static comlrl.utils.TrainerFields.REFERENCE_DEVICES;
import static comlrl.utils.TrainerFields.REFERENCE_KL_COEF;
import static comlrl.utils.TrainerFields.REFERENCE_KL_ENABLED;
import static comlrl.utils.TrainerFields.TEMPERATURE;
import static comlrl.utils.TrainerFields.TOP_P;
import static comlrl.utils.TrainerFields.TRAIN_BATCH_SIZE;
import static comlrl.utils.TrainerFields.USE_SEPARATE_CRITIC;
import static comlrl.utils.TrainerFields.VALUE_CLIP_RANGE;
import static comlrl.utils.TrainerFields.VALUE_HEAD_HIDDEN_DIM;
import static comlrl.utils.TrainerFields.VALUE_LOSS_COEF;

import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.trainers.actorcritic.CriticType;
import comlrl.utils.CollaborationMode;
import comlrl.utils.ConfigField;
import comlrl.utils.ConfigMaps;
import comlrl.utils.TrainerFields;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The table of preference-trainer config fields: every field of the reference's {@code MADPOConfig}
 * (§7.1) and {@code MARLHFConfig} (§7.3) with its key, default and range, declared once (here, or
 * in {@link TrainerFields} when the actor-critic configs have it too, taken with this table's
 * default where it differs); then the two configs' field lists, in the reference's order followed by ours. The getters' Javadoc in
 * {@link PreferenceConfig}, {@link MADPOConfig} and {@link MARLHFConfig} is each field's
 * documentation.
 */
final class PreferenceFields {
    private PreferenceFields() {
    }

    // ------------------------------------------------------------------ MADPOConfig (§7.1)
    static final ConfigField<Integer> NUM_TRAIN_EPOCHS = TrainerFields.NUM_TRAIN_EPOCHS.withDefault(20);
    static final ConfigField<Integer> LOGGING_STEPS = TrainerFields.LOGGING_STEPS.withDefault(50);
    static final ConfigField<CollaborationMode> COLLABORATION_MODE = choice("collaboration_mode",
            CollaborationMode.DECENTRALIZED, CollaborationMode::parse, CollaborationMode::configName);
    static final ConfigField<Integer> TOP_K = TrainerFields.TOP_K.withDefault(50);
    static final ConfigField<Integer> NUM_TURNS = TrainerFields.NUM_TURNS.withDefault(1);
    static final ConfigField<Double> DISCOUNT = number("discount", 1.0, v -> v >= 0 && v <= 1,
            "in [0, 1] (kept for compatibility: with one turn nothing is discounted)");
    static final ConfigField<JointMode> JOINT_MODE = choice("joint_mode", JointMode.ALIGNED, JointMode::parse,
            JointMode::configName);
    static final ConfigField<Double> EARLY_TERMINATION_THRESHOLD =
            TrainerFields.EARLY_TERMINATION_THRESHOLD.withDefault(null);
    static final ConfigField<Integer> ROLLOUT_BUFFER_SIZE = TrainerFields.ROLLOUT_BUFFER_SIZE.withDefault(2);
    static final ConfigField<AdvantageMode> ADVANTAGE_MODE = choice("advantage_mode", AdvantageMode.MEAN,
            AdvantageMode::parse, AdvantageMode::configName);
    static final ConfigField<Integer> PREFERENCE_NUM_CANDIDATES = atLeast("preference_num_candidates", 80, 2,
            " (pairs are formed among one item's candidates)");
    static final ConfigField<Integer> PREFERENCE_PAIRS_PER_SAMPLE = nullableAtLeast("preference_pairs_per_sample", 16,
            1, " (or null to keep every pair with a reward gap)");
    static final ConfigField<PairSelection> PAIR_SELECTION = choice("pair_selection", PairSelection.REWARD_GAP,
            PairSelection::parse, PairSelection::configName);
    static final ConfigField<Double> DPO_BETA = number("dpo_beta", 0.1, v -> Double.isFinite(v) && v > 0,
            "a finite number > 0 (the β of the DPO loss −log σ(β·Δ))");
    static final ConfigField<Boolean> USE_ENVIRONMENT_STEP = flag("use_environment_step", true);
    static final ConfigField<Integer> ENVIRONMENT_STEPS_PER_PAIR = atLeast("environment_steps_per_pair", 2, 1, "");

    // ------------------------------------------------------------------ MARLHFConfig's own (§7.3)
    static final ConfigField<RlAlgorithm> RL_ALGORITHM = choice("rl_algorithm", RlAlgorithm.MAGRPO,
            RlAlgorithm::parse, RlAlgorithm::configName);
    /** MARLHF's advantage_mode: null (the default) follows rl_algorithm. */
    static final ConfigField<AdvantageMode> OPTIONAL_ADVANTAGE_MODE = new ConfigField<>("advantage_mode", null,
            (owner, key, raw) -> ConfigMaps.isNullLike(raw) ? null
                    : AdvantageMode.parse(ConfigMaps.toStr(owner, key, raw)),
            v -> null, AdvantageMode::configName, null);
    static final ConfigField<Integer> NUM_GENERATIONS = atLeast("num_generations", 4, 1, "");
    static final ConfigField<String> REWARD_MODEL_NAME = text("reward_model_name", null,
            "null to use the first agent's model");
    static final ConfigField<String> REWARD_MODEL_DEVICE = text("reward_model_device", "cuda:0",
            "null for the trainer's device");
    static final ConfigField<Double> REWARD_LEARNING_RATE = number("reward_learning_rate", 1e-5,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0 (the default is 1e-5)");
    static final ConfigField<Integer> REWARD_NUM_TRAIN_EPOCHS = atLeast("reward_num_train_epochs", 1, 1, "");
    static final ConfigField<Integer> REWARD_TRAIN_BATCH_SIZE = atLeast("reward_train_batch_size", 1, 1, "");
    static final ConfigField<Integer> REWARD_MAX_LENGTH = nullableAtLeast("reward_max_length", null, 1,
            " (or null to score the whole joint text)");
    static final ConfigField<Boolean> REWARD_FREEZE_BACKBONE = flag("reward_freeze_backbone", false);
    static final ConfigField<String> CRITIC_MODEL_NAME = text("critic_model_name", null,
            "null to use the first agent's model");
    static final ConfigField<Double> CRITIC_LEARNING_RATE = nullableNumber("critic_learning_rate", null,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0, or null to use agent_learning_rate")
            .orElse(AGENT_LEARNING_RATE);

    // ------------------------------------------------------------------ ours, beyond the reference (and TrainerFields.OURS)
    static final ConfigField<DpoReference> DPO_REFERENCE = choice("dpo_reference", DpoReference.NONE,
            DpoReference::parse, DpoReference::configName);

    /** §7.1's fields in the reference's order, with {@code advantage_mode} as given. */
    private static List<ConfigField<?>> madpoReference(ConfigField<AdvantageMode> advantageMode) {
        return List.of(NUM_TRAIN_EPOCHS, AGENT_LEARNING_RATE, LOGGING_STEPS, NUM_AGENTS, COLLABORATION_MODE,
                PARALLEL_TRAINING, AGENT_DEVICES, MAX_NEW_TOKENS, TEMPERATURE, TOP_P, TOP_K, NUM_TURNS, DISCOUNT,
                JOINT_MODE, EARLY_TERMINATION_THRESHOLD, EXTERNAL_PROMPT_PASSTHROUGH, EVAL_INTERVAL, EVAL_NUM_SAMPLES,
                EVAL_BATCH_SIZE, ROLLOUT_BUFFER_SIZE, TRAIN_BATCH_SIZE, ADVANTAGE_NORMALIZATION, advantageMode,
                REFERENCE_KL_ENABLED, REFERENCE_KL_COEF, REFERENCE_DEVICES, PREFERENCE_NUM_CANDIDATES,
                PREFERENCE_PAIRS_PER_SAMPLE, PAIR_SELECTION, DPO_BETA, USE_ENVIRONMENT_STEP, ENVIRONMENT_STEPS_PER_PAIR);
    }

    /** {@link MADPOConfig}'s fields: §7.1 in the reference's order, then {@code dpo_reference} and the rest of ours. */
    static final List<ConfigField<?>> MADPO = concat(madpoReference(ADVANTAGE_MODE), List.of(DPO_REFERENCE), OURS);

    /** MARLHF's fields beyond MADPO's, in the reference's order. */
    private static final List<ConfigField<?>> MARLHF_OWN = List.of(RL_ALGORITHM, NUM_GENERATIONS, REWARD_MODEL_NAME,
            REWARD_MODEL_DEVICE, REWARD_LEARNING_RATE, REWARD_NUM_TRAIN_EPOCHS, REWARD_TRAIN_BATCH_SIZE,
            REWARD_MAX_LENGTH, REWARD_FREEZE_BACKBONE, CRITIC_MODEL_NAME, CRITIC_LEARNING_RATE, CRITIC_DEVICES,
            USE_SEPARATE_CRITIC, CriticType.CONFIG_FIELD, VALUE_LOSS_COEF, VALUE_CLIP_RANGE, CRITIC_VALUE_HEAD_HIDDEN_DIM,
            VALUE_HEAD_HIDDEN_DIM);

    /**
     * {@link MARLHFConfig}'s fields: MADPO's reference fields (advantage_mode unset by default, so
     * that it follows rl_algorithm), §7.3's own, then ours (no dpo_reference: MARLHF has no DPO loss).
     */
    static final List<ConfigField<?>> MARLHF = concat(madpoReference(OPTIONAL_ADVANTAGE_MODE), MARLHF_OWN, OURS);

    /** Advice for keys from the reference's older docs and versions, or from the other trainers. */
    private static final Map<String, String> SHARED_HINTS = Map.of(
            "learning_rate", "use 'agent_learning_rate' (older docs call it learning_rate).",
            "termination_threshold", "use 'early_termination_threshold'.",
            "weight_decay", "not configurable: AdamW weight decay is fixed at 0.01, as in the reference.",
            "model", "the models are trainer arguments (agent_model / agents), not config fields.",
            "per_device_train_batch_size", "not a config field; train_batch_size is the number of preference pairs "
                    + "per update.",
            "num_iterations", "iterative preference training has its own config (MADPOIterConfig / "
                    + "MARLHFIterConfig); this config builds one preference dataset from the initial policy.",
            "comparator_policy", "comparators belong to the iterative configs (MADPOIterConfig / MARLHFIterConfig).");

    static final Map<String, String> MADPO_HINTS = madpoHints();

    static final Map<String, String> MARLHF_HINTS = hints(Map.of(
            "dpo_reference", "MARLHF trains a reward model on the preference pairs and then runs rl_algorithm; it "
                    + "has no DPO loss, so dpo_reference is a MADPOConfig field."));

    private static Map<String, String> madpoHints() {
        Map<String, String> more = new HashMap<>(Map.of(
                "beta", "use 'dpo_beta'.",
                "reference_free", "use dpo_reference: \"none\" (reference-free, the default) or \"frozen_initial\".",
                "num_generations", "MADPO samples preference_num_candidates completions per agent and item, once, "
                        + "from the initial policy; num_generations is a MARLHFConfig field (its RL phase)."));
        for (ConfigField<?> field : MARLHF_OWN) {
            more.putIfAbsent(field.key, field.key + " is a MARLHFConfig field; MADPO trains the agents directly on "
                    + "the preference pairs (no reward model, no RL phase).");
        }
        return hints(more);
    }

    private static Map<String, String> hints(Map<String, String> more) {
        Map<String, String> hints = new HashMap<>(SHARED_HINTS);
        hints.putAll(more);
        return Map.copyOf(hints);
    }

    /** A string, or null (also from a null-like value); a set value must not be blank. */
    private static ConfigField<String> text(String key, String defaultValue, String nullMeaning) {
        return new ConfigField<>(key, defaultValue,
                (owner, k, raw) -> ConfigMaps.isNullLike(raw) ? null : ConfigMaps.toStr(owner, k, raw),
                v -> v == null || !v.isBlank() ? null : key + " must not be blank; use " + nullMeaning,
                v -> v, null);
    }

    @SafeVarargs
    private static List<ConfigField<?>> concat(List<ConfigField<?>>... parts) {
        List<ConfigField<?>> all = new ArrayList<>();
        for (List<ConfigField<?>> part : parts) {
            all.addAll(part);
        }
        return List.copyOf(all);
    }
}
