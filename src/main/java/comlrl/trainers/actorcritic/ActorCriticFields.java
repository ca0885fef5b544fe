package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ConfigField.atLeast;
import static comlrl.trainers.actorcritic.ConfigField.choice;
import static comlrl.trainers.actorcritic.ConfigField.devices;
import static comlrl.trainers.actorcritic.ConfigField.flag;
import static comlrl.trainers.actorcritic.ConfigField.integer64;
import static comlrl.trainers.actorcritic.ConfigField.nullableAtLeast;
import static comlrl.trainers.actorcritic.ConfigField.nullableNumber;
import static comlrl.trainers.actorcritic.ConfigField.number;

import comlrl.utils.ParallelTraining;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The table of actor-critic config fields: every field of the reference's {@code IACConfig} (§5.1)
 * and {@code MAACConfig} (§5.2) with its key, default and range, declared once and shared by both
 * configs; then the two configs' field lists, in the reference's order followed by our additions.
 * The getters' Javadoc in {@link ActorCriticConfig}, {@link IACConfig} and {@link MAACConfig} is
 * each field's documentation.
 */
final class ActorCriticFields {
    private ActorCriticFields() {
    }

    static final ConfigField<Double> AGENT_LEARNING_RATE = number("agent_learning_rate", 5e-6,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0 (the default is 5e-6)");
    /** MAAC's: a number. */
    static final ConfigField<Double> CRITIC_LEARNING_RATE = number("critic_learning_rate", 5e-6,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0 (the default is 5e-6)");
    /** IAC's: a number, or null for the agent learning rate. */
    static final ConfigField<Double> OPTIONAL_CRITIC_LEARNING_RATE = nullableNumber("critic_learning_rate", 5e-6,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0, or null to use agent_learning_rate")
            .orElse(AGENT_LEARNING_RATE);
    static final ConfigField<Integer> ROLLOUT_BUFFER_SIZE = atLeast("rollout_buffer_size", 8, 1, "");
    static final ConfigField<Integer> TRAIN_BATCH_SIZE = nullableAtLeast("train_batch_size", null, 1,
            " (leave it unset to use rollout_buffer_size)").orElse(ROLLOUT_BUFFER_SIZE);
    static final ConfigField<Double> VALUE_CLIP_RANGE = nullableNumber("value_clip_range", 0.2,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0, or null to turn value clipping off");
    static final ConfigField<Double> VALUE_LOSS_COEF = number("value_loss_coef", 0.6,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0 (it weighs the critic's squared error)");
    static final ConfigField<Boolean> ADVANTAGE_NORMALIZATION = flag("advantage_normalization", true);
    static final ConfigField<Integer> MAX_NEW_TOKENS = atLeast("max_new_tokens", 256, 1, "");
    static final ConfigField<Double> TEMPERATURE = number("temperature", 0.6, v -> Double.isFinite(v) && v > 0,
            "a finite number > 0 (sampling divides the logits by it; use a small value such as 0.1 for nearly "
                    + "greedy sampling)");
    static final ConfigField<Double> TOP_P = number("top_p", 0.6, v -> v > 0 && v <= 1,
            "in (0, 1] (1 disables nucleus sampling)");
    static final ConfigField<Integer> TOP_K = nullableAtLeast("top_k", null, 0,
            " (0 disables top-k; null takes the model's generation_config.json value, else 50)");
    static final ConfigField<Integer> NUM_TRAIN_EPOCHS = atLeast("num_train_epochs", 40, 1, "");
    static final ConfigField<Boolean> USE_SEPARATE_CRITIC = flag("use_separate_critic", true);
    static final ConfigField<CriticType> CRITIC_TYPE = choice("critic_type", CriticType.V, CriticType::parse,
            CriticType::configName);
    static final ConfigField<Integer> CRITIC_VALUE_HEAD_HIDDEN_DIM = nullableAtLeast("critic_value_head_hidden_dim",
            null, 0, " (null or 0 = one linear layer)");
    static final ConfigField<Integer> VALUE_HEAD_HIDDEN_DIM = nullableAtLeast("value_head_hidden_dim", null, 0,
            " (null or 0 = one linear layer)");
    static final ConfigField<Integer> NUM_AGENTS = atLeast("num_agents", 2, 1, "");
    static final ConfigField<Integer> NUM_TURNS = atLeast("num_turns", 2, 1, "");
    static final ConfigField<ParallelTraining> PARALLEL_TRAINING = choice("parallel_training", ParallelTraining.NONE,
            ParallelTraining::parse, ParallelTraining::configName);
    static final ConfigField<List<String>> AGENT_DEVICES = devices("agent_devices");
    static final ConfigField<List<String>> CRITIC_DEVICES = devices("critic_devices");
    static final ConfigField<Boolean> EXTERNAL_PROMPT_PASSTHROUGH = flag("external_prompt_passthrough", false);
    static final ConfigField<Double> DISCOUNT = number("discount", 0.9, v -> v >= 0 && v <= 1,
            "in [0, 1] (the γ of the TD targets y_t = r_t + γ·V(h_{t+1}))");
    static final ConfigField<Integer> NUM_GENERATIONS = atLeast("num_generations", 1, 1, "");
    static final ConfigField<Integer> EVAL_INTERVAL = atLeast("eval_interval", 16, 0,
            " (0 = evaluate only when evaluate() is called)");
    static final ConfigField<Integer> EVAL_NUM_SAMPLES = atLeast("eval_num_samples", 4, 1, ": it is the number of "
            + "evaluation task items per evaluation (use eval_interval=0 to turn automatic evaluation off)");
    static final ConfigField<Integer> EVAL_BATCH_SIZE = atLeast("eval_batch_size", 1, 1, "");
    static final ConfigField<Double> EARLY_TERMINATION_THRESHOLD = nullableNumber("early_termination_threshold", -0.2,
            v -> !Double.isNaN(v), "a number, or null to disable early termination");
    static final ConfigField<Integer> LOGGING_STEPS = atLeast("logging_steps", 1, 1, " (1 logs every entry)");
    static final ConfigField<Boolean> REFERENCE_KL_ENABLED = flag("reference_kl_enabled", false);
    static final ConfigField<Double> REFERENCE_KL_COEF = number("reference_kl_coef", 0.1,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0");
    static final ConfigField<List<String>> REFERENCE_DEVICES = devices("reference_devices");
    // ours, beyond the reference (as in MAGRPOConfig)
    static final ConfigField<Long> SEED = integer64("seed", 42);
    static final ConfigField<Boolean> GRADIENT_CHECKPOINTING = flag("gradient_checkpointing", false);
    static final ConfigField<Map<String, Object>> GENERATION_KWARGS = ConfigField.generationKwargs();
    static final ConfigField<Boolean> SKIP_NONFINITE_SAMPLES = flag("skip_nonfinite_samples", false);
    static final ConfigField<Integer> SAVE_TOTAL_LIMIT = nullableAtLeast("save_total_limit", null, 1,
            " (null keeps every checkpoint)");

    /** Our additions, after the reference's fields in both configs. */
    private static final List<ConfigField<?>> OURS = List.of(SEED, GRADIENT_CHECKPOINTING, GENERATION_KWARGS,
            SKIP_NONFINITE_SAMPLES, SAVE_TOTAL_LIMIT);

    /** {@link IACConfig}'s fields: §5.1 in the reference's order, then ours. */
    static final List<ConfigField<?>> IAC = concat(List.of(AGENT_LEARNING_RATE, OPTIONAL_CRITIC_LEARNING_RATE,
            ROLLOUT_BUFFER_SIZE, TRAIN_BATCH_SIZE, VALUE_CLIP_RANGE, VALUE_LOSS_COEF, ADVANTAGE_NORMALIZATION,
            MAX_NEW_TOKENS, TEMPERATURE, TOP_P, TOP_K, NUM_TRAIN_EPOCHS, USE_SEPARATE_CRITIC, CRITIC_TYPE,
            CRITIC_VALUE_HEAD_HIDDEN_DIM, VALUE_HEAD_HIDDEN_DIM, NUM_AGENTS, NUM_TURNS, PARALLEL_TRAINING,
            AGENT_DEVICES, CRITIC_DEVICES, EXTERNAL_PROMPT_PASSTHROUGH, DISCOUNT, NUM_GENERATIONS, EVAL_INTERVAL,
            EVAL_NUM_SAMPLES, EVAL_BATCH_SIZE, EARLY_TERMINATION_THRESHOLD, LOGGING_STEPS, REFERENCE_KL_ENABLED,
            REFERENCE_KL_COEF, REFERENCE_DEVICES));

    /**
     * {@link MAACConfig}'s fields: §5.2 in the reference's order (discount 1.0), with
     * {@code critic_value_head_hidden_dim} (the reference's {@code model_config} key) after
     * {@code critic_type}, then ours.
     */
    static final List<ConfigField<?>> MAAC = concat(List.of(AGENT_LEARNING_RATE, CRITIC_LEARNING_RATE,
            ROLLOUT_BUFFER_SIZE, TRAIN_BATCH_SIZE, VALUE_LOSS_COEF, ADVANTAGE_NORMALIZATION, MAX_NEW_TOKENS,
            TEMPERATURE, TOP_P, TOP_K, NUM_TRAIN_EPOCHS, NUM_AGENTS, NUM_GENERATIONS, NUM_TURNS, PARALLEL_TRAINING,
            AGENT_DEVICES, CRITIC_DEVICES, EXTERNAL_PROMPT_PASSTHROUGH, DISCOUNT.withDefault(1.0), CRITIC_TYPE,
            CRITIC_VALUE_HEAD_HIDDEN_DIM, EARLY_TERMINATION_THRESHOLD, EVAL_INTERVAL, EVAL_NUM_SAMPLES,
            EVAL_BATCH_SIZE, LOGGING_STEPS, REFERENCE_KL_ENABLED, REFERENCE_KL_COEF, REFERENCE_DEVICES));

    /** Advice for keys from the reference's older docs and versions, or from the other trainers. */
    static final Map<String, String> IAC_HINTS = hints(Map.of());

    /** {@link #IAC_HINTS} plus the IAC fields MAAC does not have. */
    static final Map<String, String> MAAC_HINTS = hints(Map.of(
            "use_separate_critic", "MAAC always trains one shared critic (critic_model / critics); "
                    + "use_separate_critic is an IACConfig field.",
            "value_clip_range", "MAAC does not clip values; value_clip_range is an IACConfig field (shared value "
                    + "heads only).",
            "value_head_hidden_dim", "MAAC's actors have no value heads; the shared critic's head width is "
                    + "critic_value_head_hidden_dim."));

    private static Map<String, String> hints(Map<String, String> more) {
        Map<String, String> hints = new HashMap<>(Map.of(
                "learning_rate", "use 'agent_learning_rate' for the actors and 'critic_learning_rate' for the "
                        + "critic (older docs call it learning_rate).",
                "termination_threshold", "use 'early_termination_threshold'.",
                "weight_decay", "not configurable: AdamW weight decay is fixed at 0.01, as in the reference.",
                "dataloader_drop_last", "not supported: training reads task items in order, one per step.",
                "dataloader_num_workers", "not supported: training reads task items in order, one per step.",
                "model", "the models are trainer arguments (agent_model / agents, critic_model / critics), not "
                        + "config fields.",
                "per_device_train_batch_size", "not a config field; see rollout_buffer_size and train_batch_size.",
                "mini_batch_size", "use 'train_batch_size' (older versions called it mini_batch_size).",
                "num_return_sequences", "use 'num_generations' (older versions called it num_return_sequences).",
                "critic_model_name_or_path", "the critic is a trainer argument (critic_model / critics), not a "
                        + "config field."));
        hints.putAll(Map.of(
                "pad_token_id", "not a config field: the pad id comes from each agent's tokenizer.",
                "reward_norm_eps", "not supported: rewards are not normalised here; use a reward processor, or "
                        + "advantage_normalization.",
                "joint_mode", "actor-critic trainers always pair the k-th completions of the agents (aligned); "
                        + "joint_mode is an MAGRPOConfig field.",
                "advantage_mode", "the critic is the baseline (A = y - V_old); advantage_mode is an MAGRPOConfig "
                        + "field.",
                "collaboration_mode", "not an actor-critic field: every agent has its own actor."));
        hints.putAll(more);
        return Map.copyOf(hints);
    }

    private static List<ConfigField<?>> concat(List<ConfigField<?>> reference) {
        java.util.ArrayList<ConfigField<?>> all = new java.util.ArrayList<>(reference);
        all.addAll(OURS);
        return List.copyOf(all);
    }
}
