package comlrl.trainers.common;

import comlrl.data.Dataset;
import comlrl.data.TaskSet;
import comlrl.distributed.DistributedContext;
import comlrl.logging.MetricSink;
import comlrl.model.LoraConfig;
import comlrl.reward.RewardFunction;
import comlrl.tensor.DType;
import comlrl.tokenizer.Tokenizer;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.ExternalTransition;
import comlrl.utils.RewardProcessor;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Everything a trainer's builder was given besides its algorithm config: one immutable value, a map
 * from typed {@link Key}s to values, that a trainer receives whole and that a trainer running another
 * as a stage (MARLHF's RL stage, the iterative trainers' inner trainer) or a wrapper (centralization)
 * passes on whole, replacing only what it means to replace ({@link #with}). No setting is copied by
 * hand, so none can be dropped on the way: a key added here, or declared by a family (its critics,
 * its centralized adapter), travels with the rest.
 *
 * <p>A key absent from the map reads as its default ({@link Key#defaultValue()}).
 */
public final class TrainerSettings {
    /** A setting: its snake_case name (the reference's keyword) and its default. */
    public static final class Key<T> {
        private final String name;
        private final T defaultValue;

        private Key(String name, T defaultValue) {
            this.name = Objects.requireNonNull(name, "name");
            this.defaultValue = defaultValue;
        }

        public String name() {
            return name;
        }

        public T defaultValue() {
            return defaultValue;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** A new key; families declare theirs beside their builders ({@code critic_model}, {@code centralized_adapter}). */
    public static <T> Key<T> key(String name, T defaultValue) {
        return new Key<>(name, defaultValue);
    }

    // what to train and on what
    public static final Key<List<?>> AGENTS = key("agents", null);
    /** {@code agent_model}: a model id or directory, or (actor-critic, one agent) a loaded model. */
    public static final Key<Object> AGENT_MODEL = key("agent_model", null);
    public static final Key<Integer> NUM_AGENTS = key("num_agents", null);
    /** Null, one {@link comlrl.utils.Formatter}, or a list of them ({@code Formatters#fromArgument}). */
    public static final Key<Object> FORMATTERS = key("formatters", null);
    public static final Key<RewardFunction> REWARD_FUNC = key("reward_func", null);
    public static final Key<RewardFunction> EVAL_REWARD_FUNC = key("eval_reward_func", null);
    public static final Key<RewardProcessor> REWARD_PROCESSOR = key("reward_processor", null);
    public static final Key<RewardProcessor> EVAL_REWARD_PROCESSOR = key("eval_reward_processor", null);
    public static final Key<TaskSet> TRAIN_DATASET = key("train_dataset", null);
    public static final Key<Dataset> EVAL_DATASET = key("eval_dataset", null);
    public static final Key<ExternalTransition> EXTERNAL_TRANSITION = key("external_transition", null);
    public static final Key<EvalLogger> EVAL_LOGGER = key("eval_logger", null);
    public static final Key<EvalAggregator> EVAL_AGGREGATOR = key("eval_aggregator", null);
    // models
    public static final Key<DType> DTYPE = key("dtype", null);
    public static final Key<Boolean> CHAT_TEMPLATE = key("chat_template", false);
    public static final Key<String> SYSTEM_PROMPT = key("system_prompt", null);
    public static final Key<LoraConfig> LORA = key("lora", null);
    public static final Key<Boolean> AGENTS_SHARE_BASE = key("agents_share_base", null);
    public static final Key<List<Path>> LORA_ADAPTERS = key("lora_adapters", null);
    public static final Key<Boolean> MERGE_ADAPTERS = key("merge_adapters", false);
    public static final Key<LoraConfig> CRITIC_LORA = key("critic_lora", null);
    /** IAC/MAAC (and MARLHF's actor-critic backends): the critics' model, one for all. */
    public static final Key<Object> CRITIC_MODEL = key("critic_model", null);
    /** IAC/MAAC (and MARLHF's actor-critic backends): one critic model per critic. */
    public static final Key<List<?>> CRITICS = key("critics", null);
    /** IAC/MAAC: the actors' tokenizers (one for all, or one per agent). */
    public static final Key<List<Tokenizer>> TOKENIZERS = key("tokenizers", null);
    // output
    public static final Key<Path> OUTPUT_DIR = key("output_dir", null);
    public static final Key<Boolean> VERBOSE = key("verbose", true);
    /** Null: {@code System.err} as it is when the trainer is built (a test may have replaced it). */
    public static final Key<PrintStream> CONSOLE = key("console", null);
    public static final Key<List<MetricSink>> SINKS = key("metric_sinks", List.of());
    public static final Key<Integer> LOG_HISTORY_LIMIT = key("log_history_limit", 1000);
    public static final Key<Map<String, ?>> WANDB_CONFIG = key("wandb_config", null);
    public static final Key<List<String>> WANDB_BRIDGE = key("wandb_bridge", null);
    public static final Key<Boolean> TENSORBOARD = key("tensorboard", false);
    // processes, stages
    public static final Key<DistributedContext> DISTRIBUTED = key("distributed", null);
    public static final Key<MetricsLogger> SHARED_LOGGER = key("shared_logger", null);
    public static final Key<TrainerCheckpoint.Extension> CHECKPOINT_EXTENSION = key("checkpoint_extension", null);

    private static final TrainerSettings DEFAULTS = new TrainerSettings(Map.of());

    /** Only the keys set (a value equal to the default included); insertion order. */
    private final Map<Key<?>, Object> values;

    private TrainerSettings(Map<Key<?>, Object> values) {
        this.values = values;
    }

    /** Every key at its default. */
    public static TrainerSettings defaults() {
        return DEFAULTS;
    }

    /** The value of {@code key}: the one set, else its default. */
    @SuppressWarnings("unchecked")
    public <T> T get(Key<T> key) {
        return values.containsKey(key) ? (T) values.get(key) : key.defaultValue();
    }

    /** These settings with {@code key} set to {@code value} (null included); this object is unchanged. */
    public <T> TrainerSettings with(Key<T> key, T value) {
        Map<Key<?>, Object> next = new LinkedHashMap<>(values);
        next.put(key, value);
        return new TrainerSettings(Collections.unmodifiableMap(next));
    }

    /** The keys that were set, in the order they were first set. */
    public Set<Key<?>> keys() {
        return values.keySet();
    }

    /**
     * Fails, naming each, when any of {@code keys} holds other than its default: settings a trainer
     * does not take are refused with a message rather than ignored.
     *
     * @param trainer the trainer's name for the message ("MADPO")
     * @param why what the trainer does instead, for the message
     */
    public void refuse(String trainer, String why, Key<?>... keys) {
        List<String> given = new java.util.ArrayList<>();
        for (Key<?> key : keys) {
            if (!Objects.equals(get(key), key.defaultValue())) {
                given.add(key.name());
            }
        }
        if (!given.isEmpty()) {
            throw new IllegalArgumentException(trainer + " does not take " + String.join(", ", given) + " (" + why
                    + "); remove " + (given.size() == 1 ? "it" : "them"));
        }
    }

    @Override
    public String toString() {
        return values.toString();
    }
}
