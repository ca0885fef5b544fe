package comlrl.trainers.preference;

import static comlrl.utils.ConfigField.atLeast;
import static comlrl.utils.ConfigField.choice;
import static comlrl.utils.ConfigField.flag;
import static comlrl.utils.ConfigField.nullableAtLeast;
import static comlrl.utils.ConfigField.nullableNumber;
import static comlrl.utils.ConfigField.number;
import static comlrl.utils.TrainerFields.*;

import comlrl.rl.PairSelection;
import comlrl.rl.ReplayMode;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.generation.api.ApiComparatorSettings;
import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.trainers.actorcritic.CriticType;
import comlrl.utils.CollaborationMode;
import comlrl.utils.ConfigField;
import comlrl.utils.ConfigMaps;
import comlrl.utils.PerAgent;
import comlrl.utils.TrainerFields;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The table of preference-trainer config fields: every field of the reference's {@code MADPOConfig}
 * (§7.1) and {@code MARLHFConfig} (§7.3) with its key, default and range, declared once (here, or
 * in {@link TrainerFields} with this table's default); then the configs' field lists, in the
 * reference's order followed by ours. Each field's {@code means(...)} is its documentation.
 */
final class PreferenceFields {
    private PreferenceFields() {
    }

    // ------------------------------------------------------------------ MADPOConfig (§7.1)
    static final ConfigField<Integer> NUM_TRAIN_EPOCHS = TrainerFields.NUM_TRAIN_EPOCHS.withDefault(20);
    static final ConfigField<Integer> LOGGING_STEPS = TrainerFields.LOGGING_STEPS.withDefault(50);
    static final ConfigField<CollaborationMode> COLLABORATION_MODE = TrainerFields.COLLABORATION_MODE;
    static final ConfigField<PerAgent<Integer>> TOP_K = TrainerFields.TOP_K.withDefault(PerAgent.all(50));
    static final ConfigField<Integer> NUM_TURNS = TrainerFields.NUM_TURNS.withDefault(1);
    static final ConfigField<Double> DISCOUNT = number("discount", 1.0, v -> v >= 0 && v <= 1,
            "in [0, 1] (kept for compatibility: with one turn nothing is discounted)")
            .means("Discount of an actor-critic RL stage; kept for compatibility elsewhere (one turn is not discounted).");
    static final ConfigField<JointMode> JOINT_MODE = TrainerFields.JOINT_MODE;
    static final ConfigField<Double> EARLY_TERMINATION_THRESHOLD =
            TrainerFields.EARLY_TERMINATION_THRESHOLD.withDefault(null);
    static final ConfigField<Integer> ROLLOUT_BUFFER_SIZE = TrainerFields.ROLLOUT_BUFFER_SIZE.withDefault(2);
    static final ConfigField<AdvantageMode> ADVANTAGE_MODE = TrainerFields.ADVANTAGE_MODE;
    static final ConfigField<Integer> PREFERENCE_NUM_CANDIDATES = atLeast("preference_num_candidates", 80, 2,
            " (pairs are formed among one item's candidates)")
            .means("Completions each agent samples per task item to build preference pairs.");
    static final ConfigField<Integer> PREFERENCE_PAIRS_PER_SAMPLE = nullableAtLeast("preference_pairs_per_sample", 16,
            1, " (or null to keep every pair with a reward gap)")
            .means("Most preference pairs kept per task item; null = every pair.");
    static final ConfigField<PairSelection> PAIR_SELECTION = choice("pair_selection", PairSelection.REWARD_GAP,
            PairSelection::parse, PairSelection::configName)
            .means("Which pairs an item keeps: reward_gap (largest gaps), random, all, or comparator_reward (against the comparator).");
    static final ConfigField<Double> DPO_BETA = number("dpo_beta", 0.1, v -> Double.isFinite(v) && v > 0,
            "a finite number > 0 (the β of the DPO loss −log σ(β·Δ))")
            .means("Beta of the DPO loss -log sigmoid(beta * sum of log-ratio differences).");
    static final ConfigField<Boolean> USE_ENVIRONMENT_STEP = flag("use_environment_step", true)
            .means("Advance env_step (the logs' x-axis) by environment_steps_per_pair per trained pair.");
    static final ConfigField<Integer> ENVIRONMENT_STEPS_PER_PAIR = atLeast("environment_steps_per_pair", 2, 1, "")
            .means("env_step increment per trained preference pair.");

    // ------------------------------------------------------------------ MARLHFConfig's own (§7.3)
    static final ConfigField<RlAlgorithm> RL_ALGORITHM = choice("rl_algorithm", RlAlgorithm.MAGRPO,
            RlAlgorithm::parse, RlAlgorithm::configName)
            .means("The RL stage trained against the learned reward model.");
    /** MARLHF's advantage_mode: null (the default) follows rl_algorithm. */
    static final ConfigField<AdvantageMode> OPTIONAL_ADVANTAGE_MODE = new ConfigField<>("advantage_mode", null,
            (owner, key, raw) -> ConfigMaps.isNullLike(raw) ? null
                    : AdvantageMode.parse(ConfigMaps.toStr(owner, key, raw)),
            v -> null, AdvantageMode::configName, null).described("string or null",
            "\"mean\", \"raw\", \"max\", \"rloo\"; null follows rl_algorithm")
            .means("The group baseline of the RL stage; null follows rl_algorithm.");
    static final ConfigField<Integer> NUM_GENERATIONS = atLeast("num_generations", 4, 1, "")
            .means("Samples per agent per prompt in the RL stage.");
    static final ConfigField<String> REWARD_MODEL_NAME = text("reward_model_name", null,
            "null to use the first agent's model")
            .naming(ConfigField.PathKind.MODEL)
            .means("Model the reward model starts from; null = the first agent's model.");
    static final ConfigField<String> REWARD_MODEL_DEVICE = text("reward_model_device", "cuda:0",
            "null for the trainer's device")
            .means("Device of the reward model; null = the trainer's device.");
    static final ConfigField<Double> REWARD_LEARNING_RATE = number("reward_learning_rate", 1e-5,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0 (the default is 1e-5)")
            .means("AdamW learning rate of the reward model.");
    static final ConfigField<Integer> REWARD_NUM_TRAIN_EPOCHS = atLeast("reward_num_train_epochs", 1, 1, "")
            .means("Bradley-Terry passes over the preference pairs.");
    static final ConfigField<Integer> REWARD_TRAIN_BATCH_SIZE = atLeast("reward_train_batch_size", 1, 1, "")
            .means("Preference pairs per reward-model step.");
    static final ConfigField<Integer> REWARD_MAX_LENGTH = nullableAtLeast("reward_max_length", null, 1,
            " (or null to score the whole joint text)")
            .means("Tokens of each joint text the reward model reads; null = no truncation.");
    static final ConfigField<Boolean> REWARD_FREEZE_BACKBONE = flag("reward_freeze_backbone", false)
            .means("Train only the reward head, not the backbone.");
    static final ConfigField<String> CRITIC_MODEL_NAME = text("critic_model_name", null,
            "null to use the first agent's model")
            .naming(ConfigField.PathKind.MODEL)
            .means("Critic model of an actor-critic RL stage; null = the first agent's model.");
    static final ConfigField<Double> CRITIC_LEARNING_RATE = nullableNumber("critic_learning_rate", null,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0, or null to use agent_learning_rate")
            .orElse(AGENT_LEARNING_RATE)
            .means("AdamW learning rate of an actor-critic RL stage's critics; null = agent_learning_rate.");

    // ------------------------------------------------------------------ ours, beyond the reference (and TrainerFields.OURS)
    static final ConfigField<DpoReference> DPO_REFERENCE = choice("dpo_reference", DpoReference.NONE,
            DpoReference::parse, DpoReference::configName)
            .means("What the DPO log-ratios are measured against: none (reference-free) or frozen_initial (standard DPO).");

    // ------------------------------------------------------------------ the iterative configs' own (§7.4)
    static final ConfigField<Integer> NUM_ITERATIONS = atLeast("num_iterations", 6, 1, "")
            .means("Rounds of preference collection and training.");
    static final ConfigField<Integer> ITER_PREFERENCE_NUM_CANDIDATES = PREFERENCE_NUM_CANDIDATES.withDefault(20);
    static final ConfigField<Integer> ITER_PREFERENCE_PAIRS_PER_SAMPLE = PREFERENCE_PAIRS_PER_SAMPLE.withDefault(4);
    static final ConfigField<PairSelection> ITER_PAIR_SELECTION = PAIR_SELECTION.withDefault(PairSelection.COMPARATOR_REWARD);
    static final ConfigField<ReplayMode> PREFERENCE_REPLAY_MODE = choice("preference_replay_mode", ReplayMode.CURRENT,
            ReplayMode::parse, ReplayMode::configName)
            .means("Which stored iterations' pairs are trained on: current, nearest_k, all_history or lambda_decay.");
    static final ConfigField<Integer> PREFERENCE_REPLAY_K = nullableAtLeast("preference_replay_k", null, 1,
            " (the number of newest shards nearest_k trains on)")
            .means("How many recent iterations nearest_k replays.");
    static final ConfigField<Double> PREFERENCE_REPLAY_LAMBDA = nullableNumber("preference_replay_lambda", null,
            v -> v >= 0 && v <= 1, "in [0, 1] (shard weights (1-λ)λ^age; 1 = uniform)")
            .means("Weight decay per iteration of age under lambda_decay.");
    static final ConfigField<Integer> PREFERENCE_REPLAY_SAMPLE_SIZE = nullableAtLeast("preference_replay_sample_size",
            null, 1, " (or null for the current iteration's pair count)")
            .means("Pairs drawn from the replay per iteration; null = the current iteration's pair count.");
    static final ConfigField<String> PREFERENCE_REPLAY_DIR = text("preference_replay_dir", null,
            "null for <output_dir>/preference_replay")
            .naming(ConfigField.PathKind.DIRECTORY)
            .means("Directory of the replay shards; null = <output_dir>/preference_replay.");
    static final ConfigField<Boolean> LOG_REWARD_DISTRIBUTION = flag("log_reward_distribution", false)
            .means("Write per-iteration reward histograms (JSON, SVG and metrics).");
    static final ConfigField<String> POLICY_CHECKPOINT_DIR = text("policy_checkpoint_dir", null,
            "null for <output_dir>/policy_checkpoints (written for comparator_policy history)")
            .naming(ConfigField.PathKind.DIRECTORY)
            .means("Where the initial and per-iteration policies are saved.");
    static final ConfigField<ComparatorPolicy> COMPARATOR_POLICY = choice("comparator_policy", ComparatorPolicy.CURRENT,
            ComparatorPolicy::parse, ComparatorPolicy::configName)
            .means("What the current policy's candidates are compared against.");
    static final ConfigField<CollaborationMode> COMPARATOR_GENERATION_MODE = choice("comparator_generation_mode",
            CollaborationMode.DECENTRALIZED, CollaborationMode::parse, CollaborationMode::configName)
            .means("decentralized: each comparator agent writes its own part; centralized: one agent writes all.");
    static final ConfigField<Integer> COMPARATOR_CENTRALIZED_AGENT_INDEX = atLeast("comparator_centralized_agent_index",
            0, 0, "")
            .means("The agent that writes the joint comparator completions when centralized.");
    static final ConfigField<String> COMPARATOR_MODEL_NAME = text("comparator_model_name", null,
            "null unless comparator_policy is model")
            .naming(ConfigField.PathKind.MODEL)
            .means("Model of every comparator agent (comparator_policy: model).");
    static final ConfigField<List<String>> COMPARATOR_AGENTS = new ConfigField<>("comparator_agents", null,
            ConfigMaps::toNullableStringList, v -> v == null || v.stream().noneMatch(x -> x == null || x.isBlank())
                    ? null : "comparator_agents must list model ids or directories, got " + v, v -> v, null)
            .described("list of strings or null", "model ids or directories, one per agent")
            .naming(ConfigField.PathKind.MODEL_LIST)
            .means("One model per comparator agent (comparator_policy: model), instead of comparator_model_name.");
    static final ConfigField<List<String>> COMPARATOR_DEVICES = ConfigField.devices("comparator_devices")
            .means("Device of the frozen comparator models; null = the agents' devices.");
    static final ConfigField<Integer> COMPARATOR_NUM_CANDIDATES = nullableAtLeast("comparator_num_candidates", null, 1,
            " (or null for preference_num_candidates)")
            .means("Comparator samples per agent and item; null = preference_num_candidates.");
    static final ConfigField<Integer> COMPARATOR_HISTORY_K = nullableAtLeast("comparator_history_k", null, 1,
            " (how many iterations back the history comparator looks; null = 1)")
            .means("The history comparator is the policy of k iterations ago; null = 1.");
    /** The comparator_api_* fields, in the reference's order, then ours: declared with the API comparator. */
    static final List<ConfigField<?>> COMPARATOR_API = ApiComparatorSettings.FIELDS;

    /** The iterative fields (both iterative configs), in the reference's order. */
    static final List<ConfigField<?>> ITERATIVE_OWN = concat(List.of(NUM_ITERATIONS, PREFERENCE_REPLAY_MODE,
            PREFERENCE_REPLAY_K, PREFERENCE_REPLAY_LAMBDA, PREFERENCE_REPLAY_SAMPLE_SIZE, PREFERENCE_REPLAY_DIR,
            LOG_REWARD_DISTRIBUTION, POLICY_CHECKPOINT_DIR, COMPARATOR_POLICY, COMPARATOR_GENERATION_MODE,
            COMPARATOR_CENTRALIZED_AGENT_INDEX, COMPARATOR_MODEL_NAME, COMPARATOR_AGENTS, COMPARATOR_DEVICES,
            COMPARATOR_NUM_CANDIDATES, COMPARATOR_HISTORY_K), COMPARATOR_API);

    /** §7.1's fields with the iterative defaults: {@code epochs}, 20 candidates, 4 pairs, comparator_reward. */
    private static List<ConfigField<?>> iterativeMadpoReference(int epochs, ConfigField<AdvantageMode> advantageMode) {
        List<ConfigField<?>> fields = new ArrayList<>(madpoReference(advantageMode));
        fields.replaceAll(f -> f == NUM_TRAIN_EPOCHS ? TrainerFields.NUM_TRAIN_EPOCHS.withDefault(epochs)
                : f == PREFERENCE_NUM_CANDIDATES ? ITER_PREFERENCE_NUM_CANDIDATES
                : f == PREFERENCE_PAIRS_PER_SAMPLE ? ITER_PREFERENCE_PAIRS_PER_SAMPLE
                : f == PAIR_SELECTION ? ITER_PAIR_SELECTION : f);
        return fields;
    }

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
    static final List<ConfigField<?>> MADPO = concat(madpoReference(ADVANTAGE_MODE), List.of(DPO_REFERENCE, DDP_SPLIT), OURS,
            List.of(TrainerFields.EVAL_NUM_GENERATIONS));

    /** {@link MADPOIterConfig}'s fields: §7.1 with the iterative defaults (1 DPO epoch), §7.4's, then ours. */
    static final List<ConfigField<?>> MADPO_ITER = concat(iterativeMadpoReference(1, ADVANTAGE_MODE), ITERATIVE_OWN,
            List.of(DPO_REFERENCE, DDP_SPLIT), OURS, List.of(TrainerFields.EVAL_NUM_GENERATIONS));

    // ------------------------------------------------------------------ the MAGRPO family's rules, for MARLHF's RL stage
    static final ConfigField<Integer> RL_NUM_ITERATIONS = atLeast("rl_num_iterations", 1, 1,
            " (1 = strictly on-policy, the reference's update)")
            .means("num_iterations (mu) of a MAGRPO-family RL stage: optimisation passes over each drained rollout "
                    + "buffer; above 1 its loss is the clipped surrogate (epsilon, epsilon_high, importance_sampling_level).");

    /**
     * What a MAGRPO-family RL stage takes from a MARLHF config ({@link MARLHFBackend}) and an IAC/MAAC
     * one refuses: the family's update rules and clipped-surrogate fields, with {@code num_iterations}
     * as {@code rl_num_iterations} (the iterative configs' {@code num_iterations} counts iterations).
     */
    static final List<ConfigField<?>> RL_STAGE_RULES = concat(MAGRPOConfig.updateRuleFields(),
            List.of(RL_NUM_ITERATIONS), magrpoFields("epsilon", "epsilon_high", "importance_sampling_level"));

    /** The MAGRPO config's fields of {@code keys}, as that config declares them. */
    private static List<ConfigField<?>> magrpoFields(String... keys) {
        List<ConfigField<?>> all = MAGRPOConfig.builder().build().fields();
        return java.util.Arrays.stream(keys).<ConfigField<?>>map(k -> all.stream().filter(f -> f.key.equals(k))
                .findFirst().orElseThrow()).toList();
    }

    /** MARLHF's fields beyond MADPO's, in the reference's order. */
    private static final List<ConfigField<?>> MARLHF_OWN = List.of(RL_ALGORITHM, NUM_GENERATIONS, REWARD_MODEL_NAME,
            REWARD_MODEL_DEVICE, REWARD_LEARNING_RATE, REWARD_NUM_TRAIN_EPOCHS, REWARD_TRAIN_BATCH_SIZE,
            REWARD_MAX_LENGTH, REWARD_FREEZE_BACKBONE, CRITIC_MODEL_NAME, CRITIC_LEARNING_RATE, CRITIC_DEVICES,
            USE_SEPARATE_CRITIC, CriticType.CONFIG_FIELD, VALUE_LOSS_COEF, VALUE_CLIP_RANGE, CRITIC_VALUE_HEAD_HIDDEN_DIM,
            VALUE_HEAD_HIDDEN_DIM);

    static final ConfigField<PreferenceScoringReward> PREFERENCE_SCORING_REWARD = choice("preference_scoring_reward",
            PreferenceScoringReward.TASK, PreferenceScoringReward::parse, PreferenceScoringReward::configName)
            .means("What ranks the aligned pairs: the task reward or the reward model.");

    /**
     * {@link MARLHFConfig}'s fields: MADPO's reference fields (advantage_mode following rl_algorithm
     * when unset), §7.3's own, ours (no dpo_reference), then {@link #RL_STAGE_RULES}.
     */
    static final List<ConfigField<?>> MARLHF = concat(madpoReference(OPTIONAL_ADVANTAGE_MODE), MARLHF_OWN, List.of(DDP_SPLIT),
            OURS, RL_STAGE_RULES);

    /** {@link MARLHFIterConfig}'s fields: MARLHF's with the iterative defaults (2 RL and 2 reward-model epochs). */
    static final List<ConfigField<?>> MARLHF_ITER = concat(iterativeMadpoReference(2, OPTIONAL_ADVANTAGE_MODE),
            MARLHF_OWN.stream().map(f -> f == REWARD_NUM_TRAIN_EPOCHS
                    ? (ConfigField<?>) REWARD_NUM_TRAIN_EPOCHS.withDefault(2) : f).toList(),
            List.of(PREFERENCE_SCORING_REWARD), ITERATIVE_OWN, List.of(DDP_SPLIT), OURS, RL_STAGE_RULES);

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
            "num_iterations", "iterative preference training has its own config (MARLHFIterConfig); the optimisation "
                    + "passes of a MAGRPO-family RL stage are rl_num_iterations.",
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
                v -> v, null).described("string or null", "non-blank; " + nullMeaning);
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
