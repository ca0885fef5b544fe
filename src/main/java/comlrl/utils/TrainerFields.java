package comlrl.utils;

import static comlrl.utils.ConfigField.atLeast;
import static comlrl.utils.ConfigField.devices;
import static comlrl.utils.ConfigField.flag;
import static comlrl.utils.ConfigField.integer64;
import static comlrl.utils.ConfigField.nullableAtLeast;
import static comlrl.utils.ConfigField.nullableNumber;
import static comlrl.utils.ConfigField.number;

import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import java.util.List;
import java.util.Map;

/**
 * The config fields that several trainers' field tables share (the MA-REINFORCE family, the
 * actor-critic and the preference configs), each declared once: key, default, range rule and message. A table that needs another
 * default takes the field {@link ConfigField#withDefault with its own default} (the preference
 * configs' {@code num_train_epochs} 20, {@code top_k} 50, ...). The getters of the configs document
 * the fields.
 */
public final class TrainerFields {
    private TrainerFields() {
    }

    public static final ConfigField<Double> AGENT_LEARNING_RATE = number("agent_learning_rate", 5e-6,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0 (the default is 5e-6)")
            .means("AdamW learning rate of every agent's actor.");
    public static final ConfigField<Integer> ROLLOUT_BUFFER_SIZE = atLeast("rollout_buffer_size", 8, 1, "")
            .means("Samples each agent collects before its update.");
    public static final ConfigField<Integer> TRAIN_BATCH_SIZE = nullableAtLeast("train_batch_size", null, 1,
            " (leave it unset to use rollout_buffer_size)").orElse(ROLLOUT_BUFFER_SIZE)
            .means("Samples per minibatch (one optimizer step each) of an update; null = rollout_buffer_size.");
    public static final ConfigField<Double> VALUE_CLIP_RANGE = nullableNumber("value_clip_range", 0.2,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0, or null to turn value clipping off")
            .means("How far a critic's new value may move from its old one in an update; null = no clipping.");
    public static final ConfigField<Double> VALUE_LOSS_COEF = number("value_loss_coef", 0.6,
            v -> Double.isFinite(v) && v > 0, "a finite number > 0 (it weighs the critic's squared error)")
            .means("Weight of the critic loss.");
    public static final ConfigField<Boolean> ADVANTAGE_NORMALIZATION = flag("advantage_normalization", true)
            .means("Z-normalise the advantages of each update group.");
    // the generation settings: one value for every agent, or a list with one per agent (PerAgent)
    public static final ConfigField<PerAgent<Integer>> MAX_NEW_TOKENS = ConfigField.perAgent(
            atLeast("max_new_tokens", 256, 1, "")
                    .means("Most tokens an agent generates per turn; a list gives each agent its own."));
    public static final ConfigField<PerAgent<Double>> TEMPERATURE = ConfigField.perAgent(
            number("temperature", 0.6, v -> Double.isFinite(v) && v > 0,
                    "a finite number > 0 (sampling divides the logits by it; use a small value such as 0.1 for nearly "
                            + "greedy sampling)")
                    .means("Sampling temperature; a list gives each agent its own."));
    public static final ConfigField<PerAgent<Double>> TOP_P = ConfigField.perAgent(
            number("top_p", 0.6, v -> v > 0 && v <= 1, "in (0, 1] (1 disables nucleus sampling)")
                    .means("Nucleus sampling: the probability mass sampled from; a list gives each agent its own."));
    public static final ConfigField<PerAgent<Integer>> TOP_K = ConfigField.perAgent(
            nullableAtLeast("top_k", null, 0, " (0 disables top-k; null takes the model's generation_config.json value, "
                    + "else 50)")
                    .means("Sample from the k likeliest tokens (0 = no limit); null leaves it to the model's "
                            + "generation_config.json; a list gives each agent its own."));
    /**
     * {@code stop_strings}: a sequence ends once its decoded completion contains one of these (transformers'
     * {@code stop_strings}); a list of strings for every agent, or a list of such lists, one per agent (a
     * per-agent list's length is checked against {@code num_agents}); null (an agent's null entry) leaves it
     * to the model's generation_config.json; [] = none.
     */
    public static final ConfigField<PerAgent<List<String>>> STOP_STRINGS = stopStrings();
    public static final ConfigField<Integer> NUM_TRAIN_EPOCHS = atLeast("num_train_epochs", 40, 1, "")
            .means("Passes over the training task items.");
    public static final ConfigField<Boolean> USE_SEPARATE_CRITIC = flag("use_separate_critic", true)
            .means("A critic model per agent (true) or a value head on each actor (false).");
    public static final ConfigField<Integer> CRITIC_VALUE_HEAD_HIDDEN_DIM = nullableAtLeast(
            "critic_value_head_hidden_dim", null, 0, " (null or 0 = one linear layer)")
            .means("Hidden width of the critics' value heads; null or 0 = one linear layer.");
    public static final ConfigField<Integer> VALUE_HEAD_HIDDEN_DIM = nullableAtLeast("value_head_hidden_dim", null, 0,
            " (null or 0 = one linear layer)")
            .means("Hidden width of the value heads on the actors (use_separate_critic: false); null or 0 = one linear layer.");
    public static final ConfigField<Integer> NUM_AGENTS = atLeast("num_agents", 2, 1, "")
            .means("Number of agents in the team.");
    public static final ConfigField<Integer> NUM_TURNS = atLeast("num_turns", 2, 1, "")
            .means("Turns per episode; more than one needs an external transition.");
    public static final ConfigField<ParallelTraining> PARALLEL_TRAINING = ConfigField.choice("parallel_training",
            ParallelTraining.NONE, ParallelTraining::parse, ParallelTraining::configName)
            .means("Where models run: none (one device), mp (each agent on its own device) or ddp (several processes).");
    /** {@code ddp_split}: how the processes of a {@code parallel_training: ddp} run divide the work. */
    public static final ConfigField<DdpSplit> DDP_SPLIT = ConfigField.choice("ddp_split", DdpSplit.DATA,
            DdpSplit::parse, DdpSplit::configName)
            .means("How the processes of a ddp run divide the work: by agents or by task items (data).");
    public static final ConfigField<List<String>> AGENT_DEVICES = devices("agent_devices")
            .means("Device of the actors: one for all or one per agent; null = automatic.");
    public static final ConfigField<List<String>> CRITIC_DEVICES = devices("critic_devices")
            .means("Device of the critics: one for all or one per critic; null = the agents' devices.");
    public static final ConfigField<Boolean> EXTERNAL_PROMPT_PASSTHROUGH = flag("external_prompt_passthrough", false)
            .means("Use the prompts an external transition returns as they are, without the formatters.");
    public static final ConfigField<Integer> EVAL_INTERVAL = atLeast("eval_interval", 16, 0,
            " (0 = evaluate only when evaluate() is called)")
            .means("Evaluate every this many training items; 0 = only when evaluate() is called.");
    public static final ConfigField<Integer> EVAL_NUM_SAMPLES = atLeast("eval_num_samples", 4, 1, ": it is the number "
            + "of evaluation task items per evaluation (use eval_interval=0 to turn automatic evaluation off)")
            .means("Task items per evaluation.");
    public static final ConfigField<Integer> EVAL_BATCH_SIZE = atLeast("eval_batch_size", 1, 1, "")
            .means("Task items per evaluation batch.");
    public static final ConfigField<Double> EARLY_TERMINATION_THRESHOLD = nullableNumber(
            "early_termination_threshold", -0.2, v -> !Double.isNaN(v), "a number, or null to disable early termination")
            .means("End a multi-turn episode after a turn whose reward exceeds this; null = never.");
    public static final ConfigField<Integer> LOGGING_STEPS = atLeast("logging_steps", 1, 1, " (1 logs every entry)")
            .means("Fewest env_steps between two training log entries.");
    public static final ConfigField<Boolean> REFERENCE_KL_ENABLED = flag("reference_kl_enabled", false)
            .means("Shape rewards with a KL penalty against frozen copies of the initial agents: r - beta * KL.");
    public static final ConfigField<Double> REFERENCE_KL_COEF = number("reference_kl_coef", 0.1,
            v -> Double.isFinite(v) && v >= 0, "a finite number >= 0")
            .means("Beta, the weight of the reference-KL penalty.");
    public static final ConfigField<List<String>> REFERENCE_DEVICES = devices("reference_devices")
            .means("Device of the frozen reference copies; null = the agents' devices.");
    public static final ConfigField<JointMode> JOINT_MODE = ConfigField.choice("joint_mode", JointMode.ALIGNED,
            JointMode::parse, JointMode::configName)
            .means("How the agents' samples form joint actions: aligned (k-th with k-th) or cross (every combination).");
    public static final ConfigField<AdvantageMode> ADVANTAGE_MODE = ConfigField.choice("advantage_mode",
            AdvantageMode.MEAN, AdvantageMode::parse, AdvantageMode::configName)
            .means("The group baseline subtracted from rewards: mean, raw (none), max or rloo (leave-one-out mean).");
    public static final ConfigField<CollaborationMode> COLLABORATION_MODE = ConfigField.choice("collaboration_mode",
            CollaborationMode.DECENTRALIZED, CollaborationMode::parse, CollaborationMode::configName)
            .means("centralized: one actor model plays every agent's role.");

    // ours, beyond the reference (as in MAGRPOConfig)
    public static final ConfigField<Long> SEED = integer64("seed", 42)
            .means("Seed of every random stream of the run (sampling, shuffles, pair selection).");
    public static final ConfigField<Boolean> GRADIENT_CHECKPOINTING = flag("gradient_checkpointing", false)
            .means("Recompute activations in the backward pass to save memory (same gradients, one more forward).");
    public static final ConfigField<Map<String, Object>> GENERATION_KWARGS = ConfigField.generationKwargs()
            .means("Further generate settings, e.g. {repetition_penalty: 1.05}.");
    public static final ConfigField<Boolean> SKIP_NONFINITE_SAMPLES = flag("skip_nonfinite_samples", false)
            .means("Leave out samples with a NaN or infinite reward, target or loss instead of stopping with an error.");
    public static final ConfigField<Integer> SAVE_TOTAL_LIMIT = nullableAtLeast("save_total_limit", null, 1,
            " (null keeps every checkpoint)")
            .means("Keep only the newest N checkpoints; null = keep all.");
    /**
     * {@code eval_num_generations}: joint samples of each evaluation item (pass@k needs k of them); in the tables
     * whose trainers evaluate with the joint evaluator (MA-REINFORCE family, MADPO, MADPOIter), not in {@link #OURS}.
     */
    public static final ConfigField<Integer> EVAL_NUM_GENERATIONS = atLeast("eval_num_generations", 1, 1, "")
            .means("Joint samples drawn of each evaluation item, each with its own seeds (pass@k needs k of them).");

    /** Our additions, after the reference's fields in every table. */
    public static final List<ConfigField<?>> OURS = List.of(SEED, GRADIENT_CHECKPOINTING, GENERATION_KWARGS,
            SKIP_NONFINITE_SAMPLES, SAVE_TOTAL_LIMIT, STOP_STRINGS);

    private static ConfigField<PerAgent<List<String>>> stopStrings() {
        String shapes = "a list of strings (for every agent), a list of such lists (one per agent), or null (the model's "
                + "generation_config.json)";
        ConfigField.Reader<PerAgent<List<String>>> reader = (owner, key, raw) -> {
            if (ConfigMaps.isNullLike(raw)) {
                return PerAgent.all(null);
            }
            if (raw instanceof List<?> list && list.stream().allMatch(e -> e instanceof String)) {
                return PerAgent.all(list.stream().map(String.class::cast).toList());
            }
            if (raw instanceof List<?> list && !list.isEmpty()
                    && list.stream().allMatch(e -> ConfigMaps.isNullLike(e) || e instanceof List<?>)) {
                java.util.List<List<String>> each = new java.util.ArrayList<>();
                for (Object entry : list) {
                    if (entry instanceof List<?> inner && !inner.stream().allMatch(e -> e instanceof String)) {
                        throw new IllegalArgumentException(owner + " key '" + key + "' is a per-agent list, so each entry "
                                + "must be a list of strings (or null), got " + entry + " in " + raw);
                    }
                    each.add(entry instanceof List<?> inner ? inner.stream().map(String.class::cast).toList() : null);
                }
                return PerAgent.each(each);
            }
            throw new IllegalArgumentException(owner + " key '" + key + "' must be " + shapes + ", got " + raw);
        };
        ConfigField.Rule<PerAgent<List<String>>> rule = v -> {
            if (v == null) {
                return null;
            }
            for (List<String> stops : v.isList() ? v.values() : java.util.Collections.singletonList(v.get(0))) {
                if (stops != null && stops.stream().anyMatch(String::isEmpty)) {
                    return "stop_strings must hold non-empty strings, got " + v;
                }
            }
            return null;
        };
        return new ConfigField<>("stop_strings", PerAgent.<List<String>>all(null), reader, rule,
                v -> v.isList() ? v.values() : v.get(0), null)
                .described("list of strings, a list of them (one per agent), or null", shapes)
                .means("A sequence ends once its decoded completion contains one of these strings (kept up to the "
                        + "token that completes it); a list of lists gives each agent its own; null = the model's "
                        + "generation_config.json.");
    }
}
