package comlrl.trainers.actorcritic;

import static comlrl.utils.ConfigField.atLeast;
import static comlrl.utils.ConfigField.nullableNumber;
import static comlrl.utils.ConfigField.number;
import static comlrl.utils.TrainerFields.*;

import comlrl.utils.ConfigField;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The actor-critic config fields (reference §5.1, §5.2; those the preference configs share are in
 * {@link comlrl.utils.TrainerFields}), each documented by its {@code means(...)}, and the two configs'
 * field lists: the reference's order, then ours.
 */
final class ActorCriticFields {
    private ActorCriticFields() {
    }

    /** MAAC's: a number. */
    static final ConfigField<Double> CRITIC_LEARNING_RATE = number("critic_learning_rate", 5e-6,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0 (the default is 5e-6)")
            .means("AdamW learning rate of the critics.");
    /** IAC's: a number, or null for the agent learning rate. */
    static final ConfigField<Double> OPTIONAL_CRITIC_LEARNING_RATE = nullableNumber("critic_learning_rate", 5e-6,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0, or null to use agent_learning_rate")
            .orElse(AGENT_LEARNING_RATE)
            .means("AdamW learning rate of the critics; null = agent_learning_rate.");
    static final ConfigField<CriticType> CRITIC_TYPE = CriticType.CONFIG_FIELD;
    static final ConfigField<Double> DISCOUNT = number("discount", 0.9, v -> v >= 0 && v <= 1,
            "in [0, 1] (the γ of the TD targets y_t = r_t + γ·V(h_{t+1}))")
            .means("Discount gamma of the TD targets across turns.");
    static final ConfigField<Integer> NUM_GENERATIONS = atLeast("num_generations", 1, 1, "")
            .means("Samples per agent per prompt.");

    static final List<ConfigField<?>> IAC = concat(List.of(AGENT_LEARNING_RATE, OPTIONAL_CRITIC_LEARNING_RATE,
            ROLLOUT_BUFFER_SIZE, TRAIN_BATCH_SIZE, VALUE_CLIP_RANGE, VALUE_LOSS_COEF, ADVANTAGE_NORMALIZATION,
            MAX_NEW_TOKENS, TEMPERATURE, TOP_P, TOP_K, NUM_TRAIN_EPOCHS, USE_SEPARATE_CRITIC, CRITIC_TYPE,
            CRITIC_VALUE_HEAD_HIDDEN_DIM, VALUE_HEAD_HIDDEN_DIM, NUM_AGENTS, NUM_TURNS, PARALLEL_TRAINING,
            AGENT_DEVICES, CRITIC_DEVICES, EXTERNAL_PROMPT_PASSTHROUGH, DISCOUNT, NUM_GENERATIONS, EVAL_INTERVAL,
            EVAL_NUM_SAMPLES, EVAL_BATCH_SIZE, EARLY_TERMINATION_THRESHOLD, LOGGING_STEPS, REFERENCE_KL_ENABLED,
            REFERENCE_KL_COEF, REFERENCE_DEVICES));

    /** {@link MAACConfig}'s fields (discount 1.0), {@code critic_value_head_hidden_dim} from {@code model_config}. */
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
        ArrayList<ConfigField<?>> all = new ArrayList<>(reference);
        all.add(DDP_SPLIT);
        all.addAll(OURS);
        return List.copyOf(all);
    }
}
