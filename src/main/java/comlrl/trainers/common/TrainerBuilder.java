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
import java.util.List;
import java.util.Map;

/**
 * What every trainer's builder takes, whatever the algorithm: agents, formatters, rewards, datasets,
 * dtype, the run directory and console, metric sinks, trackers, LoRA, processes. Every setter writes
 * one key of a single immutable {@link TrainerSettings} and returns the concrete builder {@code B}; the
 * trainers read the values from {@link #settings()}. A trainer that builds another as a
 * stage hands it {@link #settings()} whole and replaces only what the stage must see differently, so a
 * setting added here reaches every stage without a line of copying.
 */
public abstract class TrainerBuilder<B extends TrainerBuilder<B>> {
    private TrainerSettings settings = TrainerSettings.defaults();

    /** This builder as its concrete type {@code B} (what {@code B extends TrainerBuilder<B>} promises). */
    @SuppressWarnings("unchecked")
    protected B self() {
        return (B) this;
    }

    /**
     * The processes of a {@code parallel_training: ddp} run (one context per process, connected by the
     * caller, who closes it after the trainer). Without one, a ddp trainer connects as the environment
     * says (torchrun's variables, set by {@code bin/comlrl launch}) and closes that context itself.
     */
    public B distributed(comlrl.distributed.DistributedContext context) {
        return set(TrainerSettings.DISTRIBUTED, context);
    }

    /** LoRA agents: each trains an adapter with these settings over frozen base weights; null (default): full models. */
    public B lora(comlrl.model.LoraConfig lora) {
        return set(TrainerSettings.LORA, lora);
    }

    /**
     * {@code agents_share_base}: whether LoRA agents hold one base model for all (one batched rollout
     * for the team); null (default) shares when every agent names the same base on the same device.
     */
    public B agentsShareBase(Boolean share) {
        return set(TrainerSettings.AGENTS_SHARE_BASE, share);
    }

    /** LoRA agents start from these PEFT adapter directories (agent i from entry i, its own settings; null: fresh). */
    public B loraAdapters(List<Path> adapters) {
        return set(TrainerSettings.LORA_ADAPTERS,
                adapters == null ? null : java.util.Collections.unmodifiableList(new ArrayList<>(adapters)));
    }

    /** {@code save_model} writes LoRA agents as full models, adapters folded in ({@code --merge}), not PEFT directories. */
    public B mergeAdaptersOnSave(boolean merge) {
        return set(TrainerSettings.MERGE_ADAPTERS, merge);
    }

    /**
     * LoRA critics (IAC/MAAC separate critics, MARLHF's actor-critic backends): each trains an adapter
     * (and its value head) over a frozen base, the actors' own when it names the same model on the same
     * device; null trains full critics.
     */
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

    /**
     * The reward of evaluation when it is not the training reward (e.g. training on a learned
     * reward model, evaluating on the task reward); default: {@code rewardFunc}.
     */
    public B evalRewardFunc(RewardFunction evalRewardFunc) {
        return set(TrainerSettings.EVAL_REWARD_FUNC, evalRewardFunc);
    }

    public B rewardProcessor(RewardProcessor rewardProcessor) {
        return set(TrainerSettings.REWARD_PROCESSOR, rewardProcessor);
    }

    /**
     * The processor of the evaluation reward when it differs from the training one (MARLHF: its
     * learned reward is used raw, the task reward of evaluation processed); default: {@code rewardProcessor}.
     */
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

    /**
     * Run directory: {@code metrics.jsonl} is appended there, and the run is recorded beside it as the
     * command line records its runs ({@link RunRecord}), so that {@code bin/comlrl report} and
     * {@link comlrl.report.RunReport} read it as they read a command-line run.
     */
    public B outputDir(Path outputDir) {
        return set(TrainerSettings.OUTPUT_DIR, outputDir);
    }

    /** Whether the run is recorded in the output directory (default true; {@link TrainerSettings#RECORD_RUN}). */
    public B recordRun(boolean record) {
        return set(TrainerSettings.RECORD_RUN, record);
    }

    /** Also writes {@code report.html} when the trainer closes after a recorded run that did not fail (default false). */
    public B report(boolean report) {
        return set(TrainerSettings.REPORT, report);
    }

    /** Progress output on the console ({@code config_sections.output.verbose}); default true. */
    public B verbose(boolean verbose) {
        return set(TrainerSettings.VERBOSE, verbose);
    }

    /**
     * The reference's {@code wandb_config}: a Weights &amp; Biases run gets every metric
     * ({@link comlrl.logging.WandbSettings}); {@code config_sections.output.verbose} switches the
     * progress output. Null (default): no W&amp;B.
     */
    public B wandbConfig(Map<String, ?> wandbConfig) {
        set(TrainerSettings.WANDB_CONFIG, wandbConfig == null ? null
                : Collections.unmodifiableMap(new java.util.LinkedHashMap<>(wandbConfig)));
        if (wandbConfig != null && wandbConfig.get("config_sections") instanceof Map<?, ?> sections
                && sections.get("output") instanceof Map<?, ?> output && output.get("verbose") != null) {
            set(TrainerSettings.VERBOSE, Boolean.parseBoolean(String.valueOf(output.get("verbose"))));
        }
        return self();
    }

    /**
     * Wraps every formatted prompt in the agent's chat template ({@code tokenizer_config.json}'s
     * {@code chat_template}) as a user message, after {@code systemPrompt} when not null.
     */
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

    /**
     * For a trainer that runs this one as a stage (MARLHF's RL phase): its metrics logger, which this
     * trainer logs into instead of its own; this trainer releases it on close, the caller closes it too.
     */
    public B sharedLogger(MetricsLogger logger) {
        return set(TrainerSettings.SHARED_LOGGER, logger);
    }

    /** For a trainer that runs this one as a stage: what it adds to every checkpoint this one writes. */
    public B checkpointExtension(TrainerCheckpoint.Extension extension) {
        return set(TrainerSettings.CHECKPOINT_EXTENSION, extension);
    }

    /** Every setting given so far: what the trainer keeps, and what a stage or wrapper is passed whole. */
    public TrainerSettings settings() {
        return settings;
    }

    /** Replaces every setting with {@code settings} (a stage's parent's, before the stage's own setters). */
    public B settings(TrainerSettings settings) {
        this.settings = java.util.Objects.requireNonNull(settings, "settings");
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

    /** A tracker run's config: {@code model_name} (the agents' sources: one, or the list), {@code num_agents}, the fields. */
    public static Map<String, Object> trackedConfig(Map<String, Object> args, List<?> agents) {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        List<String> names = agents.stream().map(a -> a instanceof comlrl.generation.CausalLm lm ? lm.source()
                : String.valueOf(a)).distinct().toList();
        out.put("model_name", names.size() == 1 ? names.get(0) : names);
        out.put("num_agents", agents.size());
        out.putAll(args);
        return out;
    }

    /**
     * TensorBoard event files ({@code events.out.tfevents.*}) in the output directory, one tag per
     * metric key, step = env_step ({@code tensorboard --logdir RUN_DIR}).
     */
    public B tensorboard(boolean write) {
        return set(TrainerSettings.TENSORBOARD, write);
    }

    /** The command of the W&amp;B bridge (default: {@code COMLRL_WANDB_PYTHON} or {@code python3}, bundled script). */
    public B wandbBridge(List<String> command) {
        return set(TrainerSettings.WANDB_BRIDGE, command == null ? null : List.copyOf(command));
    }

    /**
     * The number of agents a trainer has: the builder's {@code num_agents}, else the length of its
     * {@code agents} list, else {@code configured} (the config's {@code num_agents}).
     */
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

    /** Checks the training and evaluation rows before any model loads ({@link TrainerSettings#requireTaskData}). */
    public void requireTaskData() {
        settings.requireTaskData();
    }
}
