package comlrl.trainers.common;

import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.data.Dataset;
import comlrl.data.TaskSet;
import comlrl.logging.MetricSink;
import comlrl.logging.MetricsLogger;
import comlrl.reward.RewardFunction;
import comlrl.tensor.DType;
import comlrl.utils.Formatter;
import comlrl.utils.RewardProcessor;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What every trainer's builder takes, whatever the algorithm: the trainer's config ({@code args}, of type
 * {@code C}), agents, formatters, rewards, datasets, dtype, outputs, trackers, LoRA, processes. Every other
 * setter writes one key of an immutable {@link TrainerSettings} and returns the concrete builder {@code B}; a
 * trainer that builds another as a stage hands it {@link #settings()} whole, so a setting added here reaches
 * every stage without copying.
 */
public abstract class TrainerBuilder<C, B extends TrainerBuilder<C, B>> {
    private TrainerSettings settings = TrainerSettings.defaults();
    private C args;

    @SuppressWarnings("unchecked")
    protected B self() {
        return (B) this;
    }

    /** {@code args}: the trainer's config (required). */
    public B args(C args) {
        this.args = args;
        return self();
    }

    public C args() {
        return args;
    }

    /** {@code external_transition}: the next turn's prompts (multi-turn runs need it; single-turn ones refuse it). */
    public B externalTransition(comlrl.trainers.ExternalTransition externalTransition) {
        return set(TrainerSettings.EXTERNAL_TRANSITION, externalTransition);
    }

    /**
     * The processes of a {@code parallel_training: ddp} run (connected and closed by the caller); without
     * one, a ddp trainer connects as torchrun's variables say ({@code bin/comlrl launch}) and closes it itself.
     */
    public B distributed(comlrl.distributed.DistributedContext context) {
        return set(TrainerSettings.DISTRIBUTED, context);
    }

    /** LoRA agents: each trains an adapter with these settings over frozen base weights; null (default): full. */
    public B lora(comlrl.model.LoraConfig lora) {
        return set(TrainerSettings.LORA, lora);
    }

    /** Whether LoRA agents hold one base for all (one team rollout); null (default): when all name one base. */
    public B agentsShareBase(Boolean share) {
        return set(TrainerSettings.AGENTS_SHARE_BASE, share);
    }

    /** LoRA agents start from these PEFT adapter directories (agent i from entry i, its own settings; null: fresh). */
    public B loraAdapters(List<Path> adapters) {
        return set(TrainerSettings.LORA_ADAPTERS,
                adapters == null ? null : Collections.unmodifiableList(new ArrayList<>(adapters)));
    }

    /** {@code save_model} writes LoRA agents as full models, adapters folded in ({@code --merge}), not PEFT. */
    public B mergeAdaptersOnSave(boolean merge) {
        return set(TrainerSettings.MERGE_ADAPTERS, merge);
    }

    /** LoRA critics: an adapter and value head each over a frozen base (the actors' if the same); null: full. */
    public B criticLora(comlrl.model.LoraConfig lora) {
        return set(TrainerSettings.CRITIC_LORA, lora);
    }

    /** Heterogeneous agents: model ids/directories or loaded {@code CausalLm}s, in actor order. */
    public B agents(List<?> agents) {
        return set(TrainerSettings.AGENTS, agents);
    }

    /** Homogeneous agents ({@code agent_model}): one model id or directory, loaded once per agent. */
    public B agentModel(String agentModel) {
        return set(TrainerSettings.AGENT_MODEL, agentModel);
    }

    /** {@code num_agents}: the number of agents (centralized trainers: of roles); default the config's. */
    public B numAgents(int numAgents) {
        return set(TrainerSettings.NUM_AGENTS, numAgents);
    }

    /** Custom evaluation metrics: {@code eval_logger}, given with {@link #evalAggregator}. */
    public B evalLogger(comlrl.trainers.EvalLogger evalLogger) {
        return set(TrainerSettings.EVAL_LOGGER, evalLogger);
    }

    /** {@code eval_aggregator}: the evaluation rows of {@link #evalLogger} turned into scalars. */
    public B evalAggregator(comlrl.trainers.EvalAggregator evalAggregator) {
        return set(TrainerSettings.EVAL_AGGREGATOR, evalAggregator);
    }

    /** One formatter for all agents. */
    public B formatters(Formatter formatter) {
        return set(TrainerSettings.FORMATTERS, formatter);
    }

    /** One formatter per agent, in actor order. */
    public B formatters(List<? extends Formatter> formatters) {
        return set(TrainerSettings.FORMATTERS, formatters);
    }

    public B rewardFunc(RewardFunction rewardFunc) {
        return set(TrainerSettings.REWARD_FUNC, rewardFunc);
    }

    /** Evaluation's reward when it is not training's (e.g. a learned one); default {@code rewardFunc}. */
    public B evalRewardFunc(RewardFunction evalRewardFunc) {
        return set(TrainerSettings.EVAL_REWARD_FUNC, evalRewardFunc);
    }

    public B rewardProcessor(RewardProcessor rewardProcessor) {
        return set(TrainerSettings.REWARD_PROCESSOR, rewardProcessor);
    }

    /** Evaluation's reward processor when it differs (MARLHF: learned reward raw); default {@code rewardProcessor}. */
    public B evalRewardProcessor(RewardProcessor evalRewardProcessor) {
        return set(TrainerSettings.EVAL_REWARD_PROCESSOR, evalRewardProcessor);
    }

    /** The training task items: a {@link Dataset}, or a streaming set such as {@code JsonlStream}. */
    public B trainDataset(TaskSet trainDataset) {
        return set(TrainerSettings.TRAIN_DATASET, trainDataset);
    }

    public B evalDataset(Dataset evalDataset) {
        return set(TrainerSettings.EVAL_DATASET, evalDataset);
    }

    /** Weights' dtype for models loaded by the trainer (null = each config's {@code torch_dtype}). */
    public B dtype(DType dtype) {
        return set(TrainerSettings.DTYPE, dtype);
    }

    /** Run directory: {@code metrics.jsonl} appended, the run recorded as the command line records its runs. */
    public B outputDir(Path outputDir) {
        return set(TrainerSettings.OUTPUT_DIR, outputDir);
    }

    /** Whether the run is recorded in the output directory (default true; {@link TrainerSettings#RECORD_RUN}). */
    public B recordRun(boolean record) {
        return set(TrainerSettings.RECORD_RUN, record);
    }

    /** Also writes {@code report.html} when the trainer closes after a recorded run that did not fail (default no). */
    public B report(boolean report) {
        return set(TrainerSettings.REPORT, report);
    }

    /** Progress output on the console ({@code config_sections.output.verbose}); default true. */
    public B verbose(boolean verbose) {
        return set(TrainerSettings.VERBOSE, verbose);
    }

    /** {@code wandb_config}: a W&amp;B run gets every metric; {@code config_sections.output.verbose} sets verbose. */
    public B wandbConfig(Map<String, ?> wandbConfig) {
        set(TrainerSettings.WANDB_CONFIG, wandbConfig == null ? null
                : Collections.unmodifiableMap(new LinkedHashMap<>(wandbConfig)));
        if (wandbConfig != null && wandbConfig.get("config_sections") instanceof Map<?, ?> sections
                && sections.get("output") instanceof Map<?, ?> output && output.get("verbose") != null) {
            set(TrainerSettings.VERBOSE, Boolean.parseBoolean(String.valueOf(output.get("verbose"))));
        }
        return self();
    }

    /** Wraps every prompt in the agent's chat template as a user message, after {@code systemPrompt} when not null. */
    public B chatTemplate(boolean apply, String systemPrompt) {
        set(TrainerSettings.CHAT_TEMPLATE, apply);
        return set(TrainerSettings.SYSTEM_PROMPT, systemPrompt);
    }

    public B console(PrintStream console) {
        return set(TrainerSettings.CONSOLE, console);
    }

    /** How many of the latest logged events the trainer's log history keeps (default 1000; 0 keeps none). */
    public B logHistoryLimit(int limit) {
        return set(TrainerSettings.LOG_HISTORY_LIMIT, limit);
    }

    /** An extra metric sink (TensorBoard, W&amp;B, ...). */
    public B metricSink(MetricSink sink) {
        List<MetricSink> all = new ArrayList<>(settings.get(TrainerSettings.SINKS));
        all.add(sink);
        return set(TrainerSettings.SINKS, List.copyOf(all));
    }

    /** For a stage (MARLHF's RL phase): the parent's logger, logged into, released on close (the parent closes it). */
    public B sharedLogger(MetricsLogger logger) {
        return set(TrainerSettings.SHARED_LOGGER, logger);
    }

    /** For a trainer that runs this one as a stage: what it adds to every checkpoint this one writes. */
    public B checkpointExtension(TrainerCheckpoint.Extension extension) {
        return set(TrainerSettings.CHECKPOINT_EXTENSION, extension);
    }

    /** Every setting given so far: what the trainer keeps, and a stage or wrapper is passed whole. */
    public TrainerSettings settings() {
        return settings;
    }

    /** Replaces every setting with {@code settings} (a stage's parent's, before the stage's own setters). */
    public B settings(TrainerSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
        return self();
    }

    /** Sets one setting; the family builders' setters use it for their keys. */
    protected final <T> B set(TrainerSettings.Key<T> key, T value) {
        settings = settings.with(key, value);
        return self();
    }

    /** The value of one setting (its default when not set). */
    public final <T> T get(TrainerSettings.Key<T> key) {
        return settings.get(key);
    }

    /** A tracker run's config: {@code model_name} (the agents' sources: one, or the list), {@code num_agents}, args. */
    public static Map<String, Object> trackedConfig(Map<String, Object> args, List<?> agents) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<String> names = agents.stream().map(a -> a instanceof comlrl.generation.CausalLm lm ? lm.source()
                : String.valueOf(a)).distinct().toList();
        out.put("model_name", names.size() == 1 ? names.get(0) : names);
        out.put("num_agents", agents.size());
        out.putAll(args);
        return out;
    }

    /** TensorBoard event files in the output directory, one tag per metric key, step = env_step. */
    public B tensorboard(boolean write) {
        return set(TrainerSettings.TENSORBOARD, write);
    }

    /** The command of the W&amp;B bridge (default: {@code COMLRL_WANDB_PYTHON} or {@code python3}, bundled script). */
    public B wandbBridge(List<String> command) {
        return set(TrainerSettings.WANDB_BRIDGE, command == null ? null : List.copyOf(command));
    }

    /** The agent count: the builder's {@code num_agents}, else its {@code agents}' length, else {@code configured}. */
    public int resolvedNumAgents(int configured) {
        Integer given = get(TrainerSettings.NUM_AGENTS);
        List<?> agents = get(TrainerSettings.AGENTS);
        return given != null ? given : agents != null ? agents.size() : configured;
    }

    /** Fails unless {@code reward_func} and {@code train_dataset} are given (every trainer needs both). */
    public void requireRewardAndTrainData() {
        if (get(TrainerSettings.REWARD_FUNC) == null) {
            throw new IllegalArgumentException("reward_func must be provided (a RewardFunction)");
        }
        if (get(TrainerSettings.TRAIN_DATASET) == null) {
            throw new IllegalArgumentException("train_dataset must be provided");
        }
    }

    /** Checks, before any model loads, the reward, training set, transition (multi-turn), log history limit. */
    public void requireCommon(String algorithmName, int numTurns) {
        requireRewardAndTrainData();
        if (numTurns > 1 && get(TrainerSettings.EXTERNAL_TRANSITION) == null) {
            throw new IllegalArgumentException("Multi-turn " + algorithmName + " requires an external_transition.");
        }
        if (get(TrainerSettings.LOG_HISTORY_LIMIT) < 0) {
            throw new IllegalArgumentException("log_history_limit must be >= 0, got "
                    + get(TrainerSettings.LOG_HISTORY_LIMIT));
        }
    }
}
