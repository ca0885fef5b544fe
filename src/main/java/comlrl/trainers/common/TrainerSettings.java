package comlrl.trainers.common;

import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.data.Dataset;
import comlrl.data.RequiredFields;
import comlrl.data.TaskSet;
import comlrl.distributed.DistributedContext;
import comlrl.generation.CausalLm;
import comlrl.generation.PromptEncoder;
import comlrl.logging.MetricSink;
import comlrl.logging.MetricsLogger;
import comlrl.logging.RunRecord;
import comlrl.model.LoraConfig;
import comlrl.reward.JointRewarder;
import comlrl.reward.RewardFunction;
import comlrl.tensor.DType;
import comlrl.tokenizer.Tokenizer;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.ExternalTransition;
import comlrl.utils.RewardProcessor;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Everything a trainer's builder was given besides its algorithm config: an immutable map from typed
 * {@link Key}s to values (an absent key reads as its default). A stage (MARLHF's RL stage, the iterative
 * trainers' inner trainer) or wrapper (centralization) is passed it whole, with only what it must see
 * differently replaced ({@link #with}), so no setting is copied by hand or dropped on the way.
 */
public final class TrainerSettings {
    /** A setting: its snake_case name and default; compared by identity (families may reuse a name). */
    public record Key<T>(String name, T defaultValue) {
        @Override
        public boolean equals(Object other) {
            return this == other;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** A new key; families declare theirs beside their builders ({@code centralized_adapter}). */
    public static <T> Key<T> key(String name, T defaultValue) {
        return new Key<>(Objects.requireNonNull(name, "name"), defaultValue);
    }

    // what to train and on what
    public static final Key<List<?>> AGENTS = key("agents", null);
    /** {@code agent_model}: a model id or directory, or (actor-critic, one agent) a loaded model. */
    public static final Key<Object> AGENT_MODEL = key("agent_model", null);
    public static final Key<Integer> NUM_AGENTS = key("num_agents", null);
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
    /** Centralized collaboration: the roles the one actor plays, set by the wrapper (no setter); else null. */
    public static final Key<Integer> NUM_ROLES = key("num_roles", null);
    // models
    public static final Key<DType> DTYPE = key("dtype", null);
    public static final Key<Boolean> CHAT_TEMPLATE = key("chat_template", false);
    public static final Key<String> SYSTEM_PROMPT = key("system_prompt", null);
    public static final Key<LoraConfig> LORA = key("lora", null);
    public static final Key<Boolean> AGENTS_SHARE_BASE = key("agents_share_base", null);
    public static final Key<List<Path>> LORA_ADAPTERS = key("lora_adapters", null);
    public static final Key<Boolean> MERGE_ADAPTERS = key("merge_adapters", false);
    public static final Key<LoraConfig> CRITIC_LORA = key("critic_lora", null);
    /** IAC/MAAC (and MARLHF's actor-critic backends): the critics' model, one for all, or one per critic. */
    public static final Key<Object> CRITIC_MODEL = key("critic_model", null);
    public static final Key<List<?>> CRITICS = key("critics", null);
    /** IAC/MAAC: the actors' tokenizers (one for all, or one per agent). */
    public static final Key<List<Tokenizer>> TOKENIZERS = key("tokenizers", null);
    // output
    public static final Key<Path> OUTPUT_DIR = key("output_dir", null);
    public static final Key<Boolean> VERBOSE = key("verbose", true);
    public static final Key<PrintStream> CONSOLE = key("console", null);
    public static final Key<List<MetricSink>> SINKS = key("metric_sinks", List.of());
    public static final Key<Integer> LOG_HISTORY_LIMIT = key("log_history_limit", 1000);
    public static final Key<Map<String, ?>> WANDB_CONFIG = key("wandb_config", null);
    public static final Key<List<String>> WANDB_BRIDGE = key("wandb_bridge", null);
    public static final Key<Boolean> TENSORBOARD = key("tensorboard", false);
    /** Whether a trainer records its run in its output directory; the command line (which does so itself) won't. */
    public static final Key<Boolean> RECORD_RUN = key("record_run", true);
    public static final Key<Boolean> REPORT = key("report", false);
    // processes, stages
    public static final Key<DistributedContext> DISTRIBUTED = key("distributed", null);
    public static final Key<MetricsLogger> SHARED_LOGGER = key("shared_logger", null);
    public static final Key<TrainerCheckpoint.Extension> CHECKPOINT_EXTENSION = key("checkpoint_extension", null);

    private static final TrainerSettings DEFAULTS = new TrainerSettings(Map.of());
    private final Map<Key<?>, Object> values; // only the keys set, in insertion order

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

    /** The keys set, in first-set order. */
    public Set<Key<?>> keys() {
        return values.keySet();
    }

    /**
     * Fails, naming each, when any of {@code keys} is not at its default: settings a trainer does not
     * take are refused, not ignored. {@code trainer} ("MADPO") and {@code why} (what it does instead) go
     * into the message.
     */
    public void refuse(String trainer, String why, Key<?>... keys) {
        List<String> given = Arrays.stream(keys).filter(k -> !Objects.equals(get(k), k.defaultValue())).map(Key::name)
                .toList();
        if (!given.isEmpty()) {
            throw new IllegalArgumentException(trainer + " does not take " + String.join(", ", given) + " (" + why
                    + "); remove " + (given.size() == 1 ? "it" : "them"));
        }
    }

    /** The values of {@code keys} that keep state (a streaming task set, ...), by key name, for checkpoints. */
    public Map<String, comlrl.data.Stateful> statefulParts(Key<?>... keys) {
        Map<String, comlrl.data.Stateful> out = new LinkedHashMap<>();
        for (Key<?> key : keys) {
            if (get(key) instanceof comlrl.data.Stateful stateful) {
                out.put(key.name(), stateful);
            }
        }
        return out;
    }

    /** {@code console}, or {@code System.err} as it is now (a test may have replaced it). */
    public PrintStream console() {
        return Objects.requireNonNullElse(get(CONSOLE), System.err);
    }

    /** How prompts become token ids: {@code chat_template} with {@code system_prompt} ({@link PromptEncoder}). */
    public PromptEncoder promptEncoder() {
        return new PromptEncoder(get(CHAT_TEMPLATE), get(SYSTEM_PROMPT));
    }

    /** {@code reward_processor}, or the identity when none is given. */
    public RewardProcessor rewardProcessor() {
        return Objects.requireNonNullElse(get(REWARD_PROCESSOR), comlrl.utils.RewardProcessors.identity());
    }

    /** A trainer's rewards: training's, and evaluation's (the same object when evaluation adds nothing). */
    public record Rewarders(JointRewarder training, JointRewarder evaluation) {
    }

    /**
     * Training's rewarder ({@code reward_func}, {@link #rewardProcessor()}) and evaluation's, with
     * {@code eval_reward_func} and {@code eval_reward_processor} where given; {@code generations}: K.
     */
    public Rewarders rewarders(int agents, int generations, String algorithm, boolean skipNonfinite) {
        JointRewarder training = new JointRewarder(get(REWARD_FUNC), rewardProcessor(), agents, generations,
                algorithm, skipNonfinite);
        RewardFunction evalReward = get(EVAL_REWARD_FUNC);
        RewardProcessor evalProcessor = get(EVAL_REWARD_PROCESSOR);
        return new Rewarders(training, evalReward == null && evalProcessor == null ? training
                : new JointRewarder(evalReward != null ? evalReward : get(REWARD_FUNC),
                        evalProcessor != null ? evalProcessor : rewardProcessor(), agents, generations, algorithm,
                        skipNonfinite));
    }

    /** The agents' LoRA settings, or null for full models (which refuse {@code agents_share_base: true}). */
    public LoraAgents loraAgents() {
        LoraConfig lora = get(LORA);
        List<Path> adapters = get(LORA_ADAPTERS);
        Boolean shareBase = get(AGENTS_SHARE_BASE);
        if (lora == null && adapters == null) {
            if (shareBase != null && shareBase) {
                throw new IllegalArgumentException("agents_share_base: true needs LoRA agents (a lora section, or "
                        + "lora_adapters): full agents each hold their own weights");
            }
            return null;
        }
        return new LoraAgents(lora, shareBase, adapters, get(MERGE_ADAPTERS));
    }

    /** The critics' LoRA settings ({@code critic_lora}), or null for full critics. */
    public LoraAgents criticLoraAgents() {
        LoraConfig criticLora = get(CRITIC_LORA);
        return criticLora == null ? null : new LoraAgents(criticLora, null, null, false);
    }

    /**
     * Fails, before any model loads, when the training or evaluation set has no rows or a row lacks a
     * text field the formatters read ({@link TaskSet#requireRows}; a stream checks later rows as read).
     */
    public void requireTaskData() {
        RequiredFields fields = RequiredFields.none();
        // one formatter per role: a centralized actor has one model but every role's formatter
        Object formatters = get(FORMATTERS);
        int roles = formatters instanceof List<?> list ? list.size() : 1;
        for (Map.Entry<String, String> e : comlrl.utils.Formatters.fromArgument(formatters, roles).requiredFields()
                .entrySet()) {
            fields = fields.and(e.getKey(), RequiredFields.Kind.TEXT, e.getValue());
        }
        requireRows(get(TRAIN_DATASET), "the training set", fields);
        requireRows(get(EVAL_DATASET), "the evaluation set", fields);
    }

    private static void requireRows(TaskSet tasks, String which, RequiredFields fields) {
        try {
            if (tasks != null) {
                tasks.requireRows(fields);
            }
        } catch (comlrl.data.DatasetException e) {
            throw new IllegalArgumentException(which + ": " + e.getMessage(), e);
        }
    }

    /**
     * The trainer's metrics logger: the {@code shared_logger} when given (retained), else one writing
     * {@code metrics.jsonl} in {@code output_dir}, the {@code metric_sinks}, TensorBoard and a W&amp;B run
     * named for {@code algorithm} recording {@code runConfig} (a centralized actor's adds {@code num_roles}
     * and {@code num_actor_models} = 1, reference §3.7), recording the run ({@link #runRecord}). Ranks
     * other than 0 ({@code main} false) get one that writes nowhere but keeps the log gate.
     */
    public MetricsLogger metricsLogger(int loggingSteps, String algorithm, Map<String, ?> runConfig, boolean main) {
        MetricsLogger shared = get(SHARED_LOGGER);
        if (shared != null) {
            return shared.retain();
        }
        if (!main) {
            return new MetricsLogger(null, List.of(), loggingSteps, get(LOG_HISTORY_LIMIT));
        }
        Path outputDir = get(OUTPUT_DIR);
        List<MetricSink> all = new java.util.ArrayList<>(get(SINKS));
        if (get(TENSORBOARD) && outputDir != null) {
            all.add(new comlrl.logging.TensorBoardSink(outputDir, console()));
        }
        if (get(WANDB_CONFIG) != null) {
            Map<String, Object> tracked = new LinkedHashMap<>(runConfig);
            if (get(NUM_ROLES) != null) {
                tracked.put("num_roles", get(NUM_ROLES));
                tracked.put("num_actor_models", 1);
            }
            comlrl.logging.WandbSettings wandb = comlrl.logging.WandbSettings.of(get(WANDB_CONFIG), algorithm, tracked);
            List<String> command = get(WANDB_BRIDGE) != null ? get(WANDB_BRIDGE)
                    : comlrl.logging.WandbSink.pythonCommand(comlrl.generation.BuiltinModels.home().resolve("bridge"));
            all.add(new comlrl.logging.WandbSink(command, wandb.initKwargs(), wandb.initTimeout(),
                    wandb.finishTimeout(), wandb.stallTimeout(), console()));
        }
        MetricsLogger logger = new MetricsLogger(outputDir, all, loggingSteps, get(LOG_HISTORY_LIMIT));
        if (outputDir != null && get(RECORD_RUN)) {
            logger.record(runRecord(algorithm, runConfig));
        }
        return logger;
    }

    /**
     * The {@link RunRecord} of a trainer built from Java, named as the command line's {@code config.json}:
     * {@code algorithm} (config name of {@code algorithmName}), {@code num_agents}, agents, critics, LoRA,
     * {@code args} (the fields of {@link TrainerBuilder#trackedConfig}) and {@code output_dir}.
     */
    RunRecord runRecord(String algorithmName, Map<String, ?> trackedConfig) {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("algorithm", comlrl.trainers.Algorithms.byDisplayName(algorithmName)
                .map(comlrl.trainers.Algorithms.Algorithm::configName).orElse(algorithmName));
        config.put("num_agents", trackedConfig.get("num_agents"));
        List<?> agents = get(AGENTS);
        if (agents != null) {
            config.put("agents", agents.stream().map(TrainerSettings::modelName).toList());
        } else if (get(AGENT_MODEL) != null) {
            config.put("agent_model", modelName(get(AGENT_MODEL)));
        } else if (trackedConfig.get("model_name") != null) {
            config.put("agents", trackedConfig.get("model_name") instanceof List<?> names ? names
                    : List.of(trackedConfig.get("model_name")));
        }
        if (get(CRITICS) != null) {
            config.put("critics", get(CRITICS).stream().map(TrainerSettings::modelName).toList());
        } else if (get(CRITIC_MODEL) != null) {
            config.put("critic_model", modelName(get(CRITIC_MODEL)));
        }
        if (get(LORA) != null) {
            config.put("lora", get(LORA).toMap());
        }
        if (get(LORA_ADAPTERS) != null) {
            config.put("lora_adapters", get(LORA_ADAPTERS).stream().map(p -> p == null ? null : p.toString()).toList());
        }
        if (get(CRITIC_LORA) != null) {
            config.put("critic_lora", get(CRITIC_LORA).toMap());
        }
        Map<String, Object> args = new LinkedHashMap<>(trackedConfig);
        args.remove("model_name");
        config.put("args", args);
        Path outputDir = get(OUTPUT_DIR);
        config.put("output_dir", outputDir == null ? null : outputDir.toString());
        Object evalRows = trackedConfig.get("eval_num_samples");
        return new RunRecord(config, trackedConfig.get("seed"), get(TRAIN_DATASET), get(EVAL_DATASET),
                evalRows instanceof Number n ? n.intValue() : null, get(REPORT), null);
    }

    /** A model as {@code config.json} names it: a loaded model's source, else the id or directory given. */
    private static Object modelName(Object model) {
        return model instanceof CausalLm lm ? lm.source() : model == null ? null : model.toString();
    }

    @Override
    public String toString() {
        return values.toString();
    }
}
