package comlrl.trainers.reinforce;

import static comlrl.utils.ConfigField.atLeast;
import static comlrl.utils.ConfigField.nullableNumber;
import static comlrl.utils.ConfigField.number;
import static comlrl.utils.TrainerFields.*;

import comlrl.utils.CollaborationMode;
import comlrl.utils.ConfigField;
import comlrl.utils.ConfigMaps;
import comlrl.utils.PerAgent;
import comlrl.utils.TrainerFields;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The MA-REINFORCE family's config fields (reference §3.1): MAGRPO's own, the shared ones of
 * {@link TrainerFields} with MAGRPO's defaults, and each algorithm's field list. Each field's
 * {@code means(...)} is its documentation.
 */
final class ReinforceFields {
    private ReinforceFields() {
    }

    static final ConfigField<Integer> NUM_TRAIN_EPOCHS = TrainerFields.NUM_TRAIN_EPOCHS.withDefault(20);
    static final ConfigField<Integer> LOGGING_STEPS = TrainerFields.LOGGING_STEPS.withDefault(50);
    static final ConfigField<PerAgent<Integer>> TOP_K = TrainerFields.TOP_K.withDefault(PerAgent.all(50));
    static final ConfigField<Integer> ROLLOUT_BUFFER_SIZE = TrainerFields.ROLLOUT_BUFFER_SIZE.withDefault(2);
    static final ConfigField<Integer> NUM_GENERATIONS = atLeast("num_generations", 4, 2,
            ": the group baseline requires multiple samples per agent")
            .means("Completions each agent samples per rollout node (G, the group of the baseline).");
    static final ConfigField<Double> DISCOUNT = number("discount", 1.0, Double::isFinite,
            "a finite number (MAGRPO keeps it for compatibility and does not use it)")
            .means("Kept for compatibility; MAGRPO's returns are undiscounted.");
    static final ConfigField<LossType> LOSS_TYPE = ConfigField.choice("loss_type", LossType.SEQUENCE_SUM,
            LossType::parse, LossType::configName)
            .means("How per-token terms are aggregated: sequence_sum (the reference's: token sum, mean over "
                    + "completions), grpo (token mean per completion), dr_grpo (token sum / max_new_tokens), dapo "
                    + "(token mean over the minibatch), bnpo (token mean per group).");
    /**
     * {@code scale_rewards}: see {@link ScaleRewards}; null follows advantage_normalization. "none" is
     * a value here, not YAML's null-like string ({@link ConfigMaps#isNullLike}).
     */
    static final ConfigField<ScaleRewards> SCALE_REWARDS = new ConfigField<ScaleRewards>("scale_rewards", null,
            (owner, key, raw) -> ScaleRewards.parse(ConfigMaps.isNullLike(raw)
                    && !(raw instanceof String s && s.trim().equalsIgnoreCase("none")) ? null : ConfigMaps.toStr(owner, key, raw)),
            v -> null, ScaleRewards::configName, null)
            .described("string or null", "\"group\", \"batch\", \"none\" or null")
            .means("What advantages are divided by: group (their std in the group), batch (the rewards' std over the "
                    + "minibatch) or none; null follows advantage_normalization (true = group, false = none).");
    static final ConfigField<Boolean> MASK_TRUNCATED_COMPLETIONS = ConfigField.flag("mask_truncated_completions", false)
            .means("Leave completions cut at max_new_tokens (no EOS) out of the loss and of its counts.");
    static final ConfigField<Credit> CREDIT = ConfigField.choice("credit", Credit.SHARED, Credit::parse,
            Credit::configName)
            .means("How joint returns credit each agent: shared (the sum over the joint actions holding its completion, "
                    + "one group of G) or counterfactual (joint_mode cross only: each choice of the other agents' "
                    + "completions is its own group of G, advantages averaged over those C = G^(N-1) groups).");
    static final ConfigField<Boolean> DYNAMIC_SAMPLING = ConfigField.flag("dynamic_sampling", false)
            .means("Drop a task item whose joint returns are all equal at every rollout node (no advantage, no "
                    + "gradient) and buffer the next item of the epoch in its place (DAPO's dynamic sampling); "
                    + "dropped items are counted in dynamic_sampling/dropped.");
    static final ConfigField<Integer> DYNAMIC_SAMPLING_MAX_DRAWS = ConfigField.nullableAtLeast(
            "dynamic_sampling_max_draws", null, 0, " (null = no cap)")
            .means("With dynamic_sampling: the most items dropped (and replaced by the next) per update batch, "
                    + "i.e. between two buffer drains; past it an all-equal item is trained on. null = no cap.");

    /** The update-rule fields of the loss and item loop, which MARLHF's RL stage takes too. */
    static final List<ConfigField<?>> UPDATE_RULES = List.of(LOSS_TYPE, SCALE_REWARDS, MASK_TRUNCATED_COMPLETIONS,
            DYNAMIC_SAMPLING, DYNAMIC_SAMPLING_MAX_DRAWS);

    static final ConfigField<Integer> NUM_ITERATIONS = atLeast("num_iterations", 1, 1,
            " (1 = strictly on-policy, the reference's update)")
            .means("Optimisation passes (μ) over each drained rollout buffer; above 1 the loss is the clipped "
                    + "surrogate of the ratio to the sampling policy (epsilon, epsilon_high, importance_sampling_level).");
    static final ConfigField<Double> EPSILON = number("epsilon", 0.2, v -> v > 0 && Double.isFinite(v),
            "a finite number > 0")
            .means("Clip range of the ratio: r is clipped to [1 - epsilon, 1 + epsilon_high]; used when num_iterations > 1.");
    static final ConfigField<Double> EPSILON_HIGH = nullableNumber("epsilon_high", null,
            v -> v > 0 && Double.isFinite(v), "a finite number > 0, or null (= epsilon)")
            .means("Upper clip range (DAPO's clip-higher), at least epsilon; null = epsilon.");
    static final ConfigField<ImportanceSamplingLevel> IMPORTANCE_SAMPLING_LEVEL = ConfigField.choice(
            "importance_sampling_level", ImportanceSamplingLevel.TOKEN, ImportanceSamplingLevel::parse,
            ImportanceSamplingLevel::configName)
            .means("The ratio of the clipped surrogate: token (per-token ratios, GRPO) or sequence (the exp of the "
                    + "mean token log-ratio of a completion, GSPO); no effect with num_iterations 1.");
    static final ConfigField<NormalizationScope> ADVANTAGE_NORMALIZATION_SCOPE = ConfigField.choice(
            "advantage_normalization_scope", NormalizationScope.AGENT, NormalizationScope::parse,
            NormalizationScope::configName)
            .means("Whose statistics scale_rewards (group or batch) normalises an agent's advantages with: agent (its "
                    + "own, Dr. MAS's agent-wise normalisation) or joint (pooled over every agent of the node; "
                    + "credit shared only).");

    /** Advice for keys users bring from the reference docs or other libraries (§14 item 1). */
    static final String CENTRALIZED_ONLY = "collaboration_mode is a CentralizedMAGRPOConfig field; the agents of "
            + "this config are always decentralized. For one actor playing every role use CentralizedMAGRPOConfig "
            + "(algorithm: centralized_magrpo)";
    static final Map<String, String> HINTS = Map.of(
            "learning_rate", "use 'agent_learning_rate' (older docs call it learning_rate).",
            "termination_threshold", "use 'early_termination_threshold'.",
            "weight_decay", "not configurable: AdamW weight decay is fixed at 0.01, as in the reference.",
            "dataloader_drop_last", "not supported: training reads task items in order, one per step.",
            "dataloader_num_workers", "not supported: training reads task items in order, one per step.",
            "model", "the model is a trainer argument (agent_model / agents), not a config field.",
            "per_device_train_batch_size", "not a config field; see rollout_buffer_size and train_batch_size.",
            "collaboration_mode", CENTRALIZED_ONLY + ".");

    /**
     * {@code algorithm}'s fields: §3.1 in the reference's order, then ours; the variants differ only
     * in defaults ({@code advantage_mode}; the centralized one: {@code num_turns} 1 and
     * {@code collaboration_mode} "centralized", which only it has).
     */
    static List<ConfigField<?>> of(ReinforceAlgorithm algorithm) {
        List<ConfigField<?>> fields = new ArrayList<>(List.of(NUM_TRAIN_EPOCHS, AGENT_LEARNING_RATE, LOGGING_STEPS,
                NUM_AGENTS));
        if (algorithm == ReinforceAlgorithm.CENTRALIZED_MAGRPO) {
            fields.add(COLLABORATION_MODE.withDefault(CollaborationMode.CENTRALIZED));
        }
        fields.addAll(List.of(PARALLEL_TRAINING, AGENT_DEVICES, DDP_SPLIT, NUM_GENERATIONS, MAX_NEW_TOKENS, TEMPERATURE,
                TOP_P, TOP_K, NUM_TURNS.withDefault(algorithm.defaultNumTurns()), DISCOUNT, JOINT_MODE,
                EARLY_TERMINATION_THRESHOLD, EXTERNAL_PROMPT_PASSTHROUGH, EVAL_INTERVAL, EVAL_NUM_SAMPLES,
                EVAL_BATCH_SIZE, ROLLOUT_BUFFER_SIZE, TRAIN_BATCH_SIZE,
                ADVANTAGE_NORMALIZATION, ADVANTAGE_MODE.withDefault(algorithm.defaultAdvantageMode()),
                REFERENCE_KL_ENABLED, REFERENCE_KL_COEF, REFERENCE_DEVICES));
        fields.addAll(OURS);
        fields.addAll(List.of(LOSS_TYPE, SCALE_REWARDS, MASK_TRUNCATED_COMPLETIONS, TrainerFields.EVAL_NUM_GENERATIONS,
                NUM_ITERATIONS, EPSILON, EPSILON_HIGH, IMPORTANCE_SAMPLING_LEVEL, CREDIT, DYNAMIC_SAMPLING,
                DYNAMIC_SAMPLING_MAX_DRAWS, ADVANTAGE_NORMALIZATION_SCOPE));
        return List.copyOf(fields);
    }
}
