package comlrl.trainers.preference;

import static comlrl.trainers.actorcritic.ConfigField.atLeast;
import static comlrl.trainers.actorcritic.ConfigField.choice;
import static comlrl.trainers.actorcritic.ConfigField.devices;
import static comlrl.trainers.actorcritic.ConfigField.flag;
import static comlrl.trainers.actorcritic.ConfigField.integer64;
import static comlrl.trainers.actorcritic.ConfigField.nullableAtLeast;
import static comlrl.trainers.actorcritic.ConfigField.nullableNumber;
import static comlrl.trainers.actorcritic.ConfigField.number;

import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.trainers.actorcritic.ConfigField;
import comlrl.trainers.actorcritic.CriticType;
import comlrl.utils.CollaborationMode;
import comlrl.utils.ConfigMaps;
import comlrl.utils.ParallelTraining;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The table of preference-trainer config fields: every field of the reference's {@code MADPOConfig}
 * (§7.1) and {@code MARLHFConfig} (§7.3) with its key, default and range, declared once; then the
 * two configs' field lists, in the reference's order followed by ours. The getters' Javadoc in
 * {@link PreferenceConfig}, {@link MADPOConfig} and {@link MARLHFConfig} is each field's
 * documentation.
 */
final class PreferenceFields {
    private PreferenceFields() {
    }

    // ------------------------------------------------------------------ MADPOConfig (§7.1)
    static final ConfigField<Integer> NUM_TRAIN_EPOCHS = atLeast("num_train_epochs", 20, 1, "");
    static final ConfigField<Double> AGENT_LEARNING_RATE = number("agent_learning_rate", 5e-6,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0 (the default is 5e-6)");
    static final ConfigField<Integer> LOGGING_STEPS = atLeast("logging_steps", 50, 1, " (1 logs every entry)");
    static final ConfigField<Integer> NUM_AGENTS = atLeast("num_agents", 2, 1, "");
    static final ConfigField<CollaborationMode> COLLABORATION_MODE = choice("collaboration_mode",
            CollaborationMode.DECENTRALIZED, CollaborationMode::parse, CollaborationMode::configName);
    static final ConfigField<ParallelTraining> PARALLEL_TRAINING = choice("parallel_training", ParallelTraining.NONE,
            ParallelTraining::parse, ParallelTraining::configName);
    static final ConfigField<List<String>> AGENT_DEVICES = devices("agent_devices");
    static final ConfigField<Integer> MAX_NEW_TOKENS = atLeast("max_new_tokens", 256, 1, "");
    static final ConfigField<Double> TEMPERATURE = number("temperature", 0.6, v -> Double.isFinite(v) && v > 0,
            "a finite number > 0 (sampling divides the logits by it; use a small value such as 0.1 for nearly "
                    + "greedy sampling)");
    static final ConfigField<Double> TOP_P = number("top_p", 0.6, v -> v > 0 && v <= 1,
            "in (0, 1] (1 disables nucleus sampling)");
    static final ConfigField<Integer> TOP_K = nullableAtLeast("top_k", 50, 0,
            " (0 disables top-k; null takes the model's generation_config.json value, else 50)");
    static final ConfigField<Integer> NUM_TURNS = atLeast("num_turns", 1, 1, "");
    static final ConfigField<Double> DISCOUNT = number("discount", 1.0, v -> v >= 0 && v <= 1,
            "in [0, 1] (kept for compatibility: with one turn nothing is discounted)");
    static final ConfigField<JointMode> JOINT_MODE = choice("joint_mode", JointMode.ALIGNED, JointMode::parse,
            JointMode::configName);
    static final ConfigField<Double> EARLY_TERMINATION_THRESHOLD = nullableNumber("early_termination_threshold", null,
            v -> !Double.isNaN(v), "a number, or null to disable early termination");
    static final ConfigField<Boolean> EXTERNAL_PROMPT_PASSTHROUGH = flag("external_prompt_passthrough", false);
    static final ConfigField<Integer> EVAL_INTERVAL = atLeast("eval_interval", 16, 0,
            " (0 = evaluate only when evaluate() is called)");
    static final ConfigField<Integer> EVAL_NUM_SAMPLES = atLeast("eval_num_samples", 4, 1, ": it is the number of "
            + "evaluation task items per evaluation (use eval_interval=0 to turn automatic evaluation off)");
    static final ConfigField<Integer> EVAL_BATCH_SIZE = atLeast("eval_batch_size", 1, 1, "");
    static final ConfigField<Integer> ROLLOUT_BUFFER_SIZE = atLeast("rollout_buffer_size", 2, 1, "");
    static final ConfigField<Integer> TRAIN_BATCH_SIZE = nullableAtLeast("train_batch_size", null, 1,
            " (leave it unset to use rollout_buffer_size)").orElse(ROLLOUT_BUFFER_SIZE);
    static final ConfigField<Boolean> ADVANTAGE_NORMALIZATION = flag("advantage_normalization", true);
    static final ConfigField<AdvantageMode> ADVANTAGE_MODE = choice("advantage_mode", AdvantageMode.MEAN,
            AdvantageMode::parse, AdvantageMode::configName);
    static final ConfigField<Boolean> REFERENCE_KL_ENABLED = flag("reference_kl_enabled", false);
    static final ConfigField<Double> REFERENCE_KL_COEF = number("reference_kl_coef", 0.1,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0");
    static final ConfigField<List<String>> REFERENCE_DEVICES = devices("reference_devices");
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
    static final ConfigField<List<String>> CRITIC_DEVICES = devices("critic_devices");
    static final ConfigField<Boolean> USE_SEPARATE_CRITIC = flag("use_separate_critic", true);
    static final ConfigField<CriticType> CRITIC_TYPE = choice("critic_type", CriticType.V, CriticType::parse,
            CriticType::configName);
    static final ConfigField<Double> VALUE_LOSS_COEF = number("value_loss_coef", 0.6,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0 (it weighs the critic's squared error)");
    static final ConfigField<Double> VALUE_CLIP_RANGE = nullableNumber("value_clip_range", 0.2,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0, or null to turn value clipping off");
    static final ConfigField<Integer> CRITIC_VALUE_HEAD_HIDDEN_DIM = nullableAtLeast("critic_value_head_hidden_dim",
            null, 0, " (null or 0 = one linear layer)");
    static final ConfigField<Integer> VALUE_HEAD_HIDDEN_DIM = nullableAtLeast("value_head_hidden_dim", null, 0,
            " (null or 0 = one linear layer)");

    // ------------------------------------------------------------------ ours, beyond the reference
    static final ConfigField<DpoReference> DPO_REFERENCE = choice("dpo_reference", DpoReference.NONE,
            DpoReference::parse, DpoReference::configName);
    static final ConfigField<Long> SEED = integer64("seed", 42);
    static final ConfigField<Boolean> GRADIENT_CHECKPOINTING = flag("gradient_checkpointing", false);
    static final ConfigField<Map<String, Object>> GENERATION_KWARGS = ConfigField.generationKwargs();
    static final ConfigField<Boolean> SKIP_NONFINITE_SAMPLES = flag("skip_nonfinite_samples", false);
    static final ConfigField<Integer> SAVE_TOTAL_LIMIT = nullableAtLeast("save_total_limit", null, 1,
            " (null keeps every checkpoint)");

    /** Our additions that both configs have, after the reference's fields. */
    private static final List<ConfigField<?>> OURS = List.of(SEED, GRADIENT_CHECKPOINTING, GENERATION_KWARGS,
            SKIP_NONFINITE_SAMPLES, SAVE_TOTAL_LIMIT);

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
            USE_SEPARATE_CRITIC, CRITIC_TYPE, VALUE_LOSS_COEF, VALUE_CLIP_RANGE, CRITIC_VALUE_HEAD_HIDDEN_DIM,
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
