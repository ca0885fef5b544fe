package comlrl.cli;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import comlrl.data.BuiltinTasks;
import comlrl.data.Dataset;
import comlrl.data.DatasetException;
import comlrl.data.JsonlStream;
import comlrl.data.RequiredFields;
import comlrl.data.TaskItem;
import comlrl.data.TaskSet;
import comlrl.generation.BuiltinModels;
import comlrl.model.ModelPresets;
import comlrl.model.io.HubCache;
import comlrl.model.io.HubException;
import comlrl.model.io.ModelSources;
import comlrl.reward.RewardFunction;
import comlrl.reward.RewardFunctions;
import comlrl.tensor.DType;
import comlrl.trainers.Algorithms;
import comlrl.env.ExternalCommandTransition;
import comlrl.utils.ConfigField;
import comlrl.utils.ConfigMaps;
import comlrl.utils.Formatters;
import comlrl.utils.RewardProcessor;
import comlrl.utils.RewardProcessors;
import comlrl.utils.TrainerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A training run described by a YAML file, fully validated on construction (before any model is
 * loaded). Top-level keys:
 * <pre>
 * algorithm: magrpo            # magrpo | mareinforce | maremax | marloo | centralized_magrpo | iac | maac
 * critic_model: builtin:tiny    # iac/maac: the critic (iac: one copy per agent); or critics: [...]
 *                              # (centralized: one actor plays num_agents roles through the tagged adapter)
 * agent_model: builtin:tiny    # model dir, hub id or built-in; or agents: [..] (one per agent)
 * num_agents: 2                # default: args.num_agents, or len(agents)
 * dtype: float32               # optional weights dtype override
 * dataset: {train: FILE|builtin:NAME, eval: FILE, test_size: 0.2, split_seed: 42, shuffle_seed: N,
 *           streaming: false}         # streaming: read a .jsonl/.parquet train file lazily (no split/shuffle)
 * dataset: {hub: openai/gsm8k, config: main, split: train, revision: main, eval_split: test, streaming: false}
 *                              # a Hugging Face hub dataset through the HF cache (HF_HOME, HF_HUB_OFFLINE, HF_TOKEN)
 * dataset: {from_disk: DIR, split: train, eval_split: test}   # a save_to_disk Dataset / DatasetDict directory
 * formatters: TEMPLATE | [TEMPLATE per agent]   # "{field}" placeholders
 * chat_template: false         # true: wrap each prompt in the agent's chat template as a user message
 * system_prompt: null          # with chat_template: a system message before it
 * reward: {type: length_ratio} | {type: command, run: [python3, reward.py], timeout_s: 60}
 * reward_processor: {type: scale, factor: 10.0}
 * external_transition: {type: command, run: [bash, next.sh], working_dir: ., timeout_s: 60}
 *                              # next-turn prompts from a JSON-lines process; required when num_turns &gt; 1
 * args: {...}                  # the algorithm config's snake_case fields
 * output_dir: runs/NAME
 * checkpoint: {dir: DIR, interval: 1}   # optional
 * eval_repeats: 1              # final before/after evaluations averaged over this many passes
 * save_model: true
 * verbose: true
 * lora: {r: 8, alpha: 16, dropout: 0.0, target_modules: all-linear, use_rslora: false, autocast: false}
 *                              # LoRA agents: an adapter each over frozen base weights (PEFT adapter dirs saved);
 *                              # autocast: on a 16-bit base the adapters' products in its dtype (as torch.autocast)
 * agents_share_base: true      # with lora: one base for all agents, one batched rollout (default when they name one base)
 * lora_adapters: [DIR, DIR]    # PEFT adapter directories the agents start from (one per agent; null: fresh)
 * save_merged: false           # with lora: save full models with the adapters folded in (train --merge)
 * critic_lora: {r: 8, alpha: 16}   # iac/maac: LoRA critics (on the actors' shared base when they name it)
 * wandb: {project: comlrl, entity: ..., name: ..., tags: [..], dir: ..., config_sections: {...}}
 *                              # a Weights &amp; Biases run (the trainers' wandb_config; needs Python with wandb)
 * tensorboard: false           # true: TensorBoard event files in the run directory
 * report: true                 # report.html (curves, config) in the run directory at the end
 * </pre>
 * Relative paths are resolved against the config file's directory.
 *
 * <p><b>Checked here, before any model loads</b>, each with a message naming the key and the fix:
 * unknown keys at the top level and in every section ({@code dataset}, {@code checkpoint},
 * {@code reward} and {@code reward_processor} per type, {@code external_transition}, {@code args}),
 * with the closest valid key; a key repeated within one mapping (YAML forbids it; its line is
 * named); every {@code {field}} of the formatter templates, and the fields the reward reads, against
 * the columns of the train and eval sets, and every row for holding them (a string for a formatter,
 * a number for {@code length_ratio}'s targets; a streamed set: its schema and first rows now, later
 * rows as training reads them); an empty train set, or an empty eval set when one is configured;
 * the reward and transition commands (program on PATH or
 * at its path, a script argument present, the working directory); the model sources (a known
 * built-in, a directory holding a model, a valid hub id, cached when {@code HF_HUB_OFFLINE} is set).
 * Numbers and booleans in a {@code run} list are program arguments, passed as written.
 */
final class RunConfig {
    /** The top-level keys with what each holds (the reference {@code docs/CONFIG.md} lists them so). */
    static final Map<String, String> TOP_LEVEL = topLevel(
            "algorithm", "the algorithm (default magrpo); the `args` keys below say which take what",
            "agent_model", "one model for every agent: a model directory, a hub id (Qwen/Qwen2.5-0.5B) or builtin:tiny",
            "agents", "one model source per agent, instead of agent_model",
            "num_agents", "the agent count (default: args.num_agents, or the length of agents)",
            "environment", "{type: writing, task: tldr|arxiv} or {type: code, dataset: humaneval|coophumaneval|mbpp, "
                    + "roles: aux_main|coder_tester, weights, sandbox, pass_at}: a built-in environment's dataset, formatters, reward and agent count, for "
                    + "those of these keys the config leaves out",
            "dtype", "weights dtype override (float32, bfloat16, ...)",
            "dataset", "{train: FILE|builtin:NAME, eval: FILE, test_size, split_seed, shuffle_seed, streaming}, or "
                    + "{hub: ID, config, split, revision, eval_split}, or {from_disk: DIR, split, eval_split}",
            "formatters", "a prompt template with {field} placeholders, or one per agent",
            "chat_template", "true: wrap each prompt in the agent's chat template as a user message (default false)",
            "system_prompt", "with chat_template: a system message before it",
            "reward", "{type: length_ratio, ...} or {type: command, run: [...], timeout_s: 60}, or {type: reward_model, model: DIR, "
                    + "template, label, per_agent: false}, ...",
            "reward_processor", "e.g. {type: scale, factor: 10.0}",
            "external_transition", "{type: command, run: [...], working_dir, timeout_s}: next-turn prompts; "
                    + "{type: level_feedback} with the code reward: the levels it found and the first failing assert; "
                    + "required when num_turns > 1",
            "args", "the algorithm config's snake_case fields (the table below)",
            "output_dir", "the run directory (default runs/<config file name>)",
            "checkpoint", "{dir: DIR, interval: 1}: training checkpoints every interval epochs",
            "eval_repeats", "final before/after evaluations averaged over this many passes (default 1)",
            "save_model", "save the trained agents in the run directory (default true; agent_i/, and a one-agent IAC run's model in agent_0/ so that it leaves the run's config.json alone)",
            "verbose", "progress on the console (default true)",
            "critic_model", "iac/maac (and marlhf with an actor-critic rl_algorithm): the critic model",
            "critics", "one critic model per agent, instead of critic_model",
            "lora", "{r: 8, alpha: 16, dropout: 0.0, target_modules: all-linear, use_rslora: false, autocast: false}: LoRA agents "
                    + "(autocast: on a bf16/f16 base the adapters' products in its dtype, as under torch.autocast)",
            "agents_share_base", "with lora: one base for all agents, one batched rollout",
            "lora_adapters", "PEFT adapter directories the agents start from (one per agent; null: fresh)",
            "save_merged", "with lora: save full models with the adapters folded in (train --merge)",
            "critic_lora", "iac/maac: LoRA critics, e.g. {r: 8, alpha: 16}",
            "wandb", "{project, entity, name, tags, dir, config_sections}: a Weights & Biases run",
            "tensorboard", "true: TensorBoard event files in the run directory (default false)",
            "report", "report.html in the run directory at the end (default true)",
            "distributed", "{backend, timeout_s, rendezvous_timeout_s, zero_stage}: how the processes of a "
                    + "parallel_training: ddp run connect (defaults auto, 600, 600, 0)");
    static final Set<String> KEYS = TOP_LEVEL.keySet();
    /** The keys of the {@code dataset} section. */
    static final List<String> DATASET_KEYS = List.of("train", "eval", "test_size", "split_seed", "shuffle_seed",
            "streaming", "hub", "config", "split", "revision", "eval_split", "from_disk");

    final Map<String, Object> raw;
    /** The {@code algorithm} (default magrpo). */
    final Algorithms.Algorithm algorithm;
    /** Its config, from the {@code args} section (and, where the algorithm counts agents there, num_agents). */
    final TrainerConfig args;
    /** {@code critic_model} (the algorithms that take critics), or null. */
    final String criticModel;
    /** {@code critics} (the algorithms that take critics), or null. */
    final List<String> critics;
    final String agentModel;
    final List<String> agents;
    final int numAgents;
    final DType dtype;
    final TaskSet train;
    final Dataset eval;
    final Formatters formatters;
    final Map<String, Object> rewardSpec;
    final RewardProcessor rewardProcessor;
    /** The {@code external_transition} map, or null when absent. */
    final Map<String, Object> transitionSpec;
    final Path outputDir;
    final Path checkpointDir;
    final int checkpointInterval;
    final int evalRepeats;
    final boolean saveModel;
    final boolean verbose;
    final boolean chatTemplate;
    final String systemPrompt;
    /** The {@code lora} section, or null for full agents. */
    final comlrl.model.LoraConfig lora;
    /** {@code agents_share_base}, or null for the default. */
    final Boolean agentsShareBase;
    /** {@code lora_adapters}, resolved (null entries: fresh adapters), or null. */
    final List<Path> loraAdapters;
    /** {@code tensorboard}: TensorBoard event files in the run directory. */
    final boolean tensorboard;
    /** {@code report}: {@code report.html} at the end of the run. */
    final boolean report;
    /**
     * {@code distributed: {backend, timeout_s, rendezvous_timeout_s, zero_stage}}: how the processes of
     * a {@code parallel_training: ddp} run connect and share optimizer state (defaults: auto, 600,
     * 600, 0).
     */
    final comlrl.distributed.DistributedContext.Options distributed;
    /** {@code wandb}: the trainers' {@code wandb_config}, or null. */
    final Map<String, Object> wandb;
    /** {@code critic_lora}: LoRA critics' settings, or null. */
    final comlrl.model.LoraConfig criticLora;
    /** {@code save_merged}: LoRA agents saved as full models. */
    final boolean saveMerged;
    private final Path baseDir;
    /** The source text of the numbers and booleans in each parsed list (by identity); see {@link ConfigYaml}. */
    private final Map<Object, List<String>> scalarTexts = new IdentityHashMap<>();

    @SuppressWarnings("unchecked")
    RunConfig(Path file, List<String> overrides, Path outputOverride) {
        this.baseDir = file.toAbsolutePath().getParent();
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("Config file not found: " + file, e);
        } catch (IOException e) {
            throw new IllegalArgumentException("Cannot read config file " + file + ": " + e.getMessage(), e);
        }
        Object parsed = ConfigYaml.read(text, "of " + file, scalarTexts);
        if (!(parsed instanceof Map<?, ?>)) {
            throw new IllegalArgumentException(file + ": the config must be a YAML mapping of keys to values");
        }
        Map<String, Object> map = new LinkedHashMap<>((Map<String, Object>) parsed);
        for (String o : overrides) {
            applyOverride(map, o, scalarTexts);
        }
        this.raw = map;
        ConfigMaps.requireKnownKeys(file.toString(), map, KEYS, Map.of());
        comlrl.env.Environments.expand(map); // the dataset, formatters and reward it stands for, where not given
        this.algorithm = Algorithms.parse(String.valueOf(map.getOrDefault("algorithm", "magrpo")));
        Map<String, Object> argsMap = map.get("args") == null ? Map.of() : asMap(map.get("args"), "args");
        this.agentModel = map.get("agent_model") == null ? null : String.valueOf(map.get("agent_model"));
        this.agents = map.get("agents") == null ? null : agentList(map.get("agents"));
        Map<String, Object> fields = new LinkedHashMap<>(argsMap);
        Object count = map.get("num_agents") != null ? map.get("num_agents") : agents != null ? agents.size() : null;
        if (algorithm.family().argsCountAgents && count != null && !fields.containsKey("num_agents")) {
            fields.put("num_agents", count); // these trainers count their agents from args.num_agents
        }
        resolvePaths(fields, algorithm.fields());
        this.args = algorithm.fromMap(fields);
        if (algorithm.takesCritics().test(args)) {
            this.criticModel = criticModelOf(map);
            this.critics = map.get("critics") == null ? null : modelList(map.get("critics"), "critics");
        } else {
            rejectCriticKeys(file, map);
            this.criticModel = null;
            this.critics = null;
        }
        if (agentModel == null && agents == null) {
            throw new IllegalArgumentException(file + ": give agent_model (one model for every agent, e.g. "
                    + "builtin:tiny or Qwen/Qwen2.5-0.5B) or agents (a list, one per agent)");
        }
        if (agentModel != null) {
            ModelSourceCheck.check("agent_model", agentModel, resolveModelPath(agentModel));
        }
        this.numAgents = map.get("num_agents") != null ? ConfigMaps.toInt("config", "num_agents", map.get("num_agents"))
                : agents != null ? agents.size() : args.numAgents();
        int counted = args.numAgents();
        if (algorithm.family().argsCountAgents && numAgents != counted) {
            throw new IllegalArgumentException(file + ": num_agents " + numAgents + " (or the length of agents) differs "
                    + "from args.num_agents " + counted + "; " + displayName() + " trains args.num_agents agents: give "
                    + "one count");
        }
        this.dtype = map.get("dtype") == null ? null : DType.fromTorchName(String.valueOf(map.get("dtype")));
        Map<String, Object> ds = asMap(map.get("dataset"), "dataset");
        ConfigMaps.requireKnownKeys("dataset", ds, DATASET_KEYS, Map.of("test", "use 'eval' (a file) or 'test_size'.",
                "validation", "use 'eval' (a file) or 'test_size'.", "seed", "use 'split_seed' or 'shuffle_seed'."));
        boolean streaming = ds.get("streaming") != null && ConfigMaps.toBoolean("config", "dataset.streaming", ds.get("streaming"));
        String hub = ds.get("hub") == null ? null : String.valueOf(ds.get("hub"));
        Path fromDisk = ds.get("from_disk") == null ? null : resolve(String.valueOf(ds.get("from_disk")));
        if ((hub != null ? 1 : 0) + (fromDisk != null ? 1 : 0) + (ds.get("train") != null ? 1 : 0) > 1) {
            throw new IllegalArgumentException("dataset: give one source: train (a file or builtin:NAME), hub (a Hugging "
                    + "Face dataset id, with config/split/revision) or from_disk (a save_to_disk directory), not both");
        }
        for (String key : List.of("config", "revision")) {
            if (ds.get(key) != null && hub == null) {
                throw new IllegalArgumentException("dataset." + key + " selects from a hub dataset: add dataset.hub "
                        + "(e.g. hub: openai/gsm8k), or remove " + key);
            }
        }
        for (String key : List.of("split", "eval_split")) {
            if (ds.get(key) != null && hub == null && fromDisk == null) {
                throw new IllegalArgumentException("dataset." + key + " picks a split of a hub dataset or a save_to_disk "
                        + "DatasetDict: add dataset.hub or dataset.from_disk, or remove " + key);
            }
        }
        if (streaming && fromDisk != null) {
            throw new IllegalArgumentException("dataset.streaming reads .jsonl/.parquet files or hub datasets; a "
                    + "save_to_disk directory loads into memory: remove streaming");
        }
        if (ds.get("eval_split") != null && (ds.get("eval") != null || ds.get("test_size") != null)) {
            throw new IllegalArgumentException("dataset: give one evaluation set: eval (a file), eval_split (a split of "
                    + "the hub dataset) or test_size (split off the training set)");
        }
        String config = ds.get("config") == null ? null : String.valueOf(ds.get("config"));
        String split = ds.get("split") == null ? null : String.valueOf(ds.get("split"));
        String revision = ds.get("revision") == null ? null : String.valueOf(ds.get("revision"));
        if (streaming) {
            if (ds.get("test_size") != null || ds.get("shuffle_seed") != null) {
                throw new IllegalArgumentException("dataset.streaming reads the training set lazily, in order: it cannot "
                        + "be split or shuffled; give dataset.eval (a file) or eval_split instead of test_size/shuffle_seed");
            }
            if (hub != null) {
                this.train = Dataset.streamHub(hub, config, split, revision);
            } else {
                String trainFile = String.valueOf(ds.get("train"));
                if (trainFile.endsWith(".jsonl")) {
                    this.train = comlrl.data.JsonlStream.open(resolve(trainFile));
                } else if (trainFile.endsWith(".parquet")) {
                    this.train = comlrl.data.ParquetStream.open(resolve(trainFile));
                } else {
                    throw new IllegalArgumentException("dataset.streaming needs a .jsonl or .parquet file for dataset.train "
                            + "(or dataset.hub), got " + trainFile);
                }
            }
            this.eval = evalSet(ds, hub, null, config, revision);
        } else {
            Dataset all = hub != null ? Dataset.fromHub(hub, config, split, revision)
                    : fromDisk != null ? Dataset.loadFromDisk(fromDisk, split)
                    : loadDataset(ds.get("train"), "dataset.train");
            if (ds.get("shuffle_seed") != null) {
                all = all.shuffle(seed(ds, "shuffle_seed"));
            }
            if (ds.get("eval") != null || ds.get("eval_split") != null) {
                this.train = all;
                this.eval = evalSet(ds, hub, fromDisk, config, revision);
            } else if (ds.get("test_size") != null) {
                double testSize = ConfigMaps.toDouble("config", "dataset.test_size", ds.get("test_size"));
                long seed = ds.get("split_seed") == null ? 42 : seed(ds, "split_seed");
                Dataset.Split parts = testSize >= 1 && testSize == Math.rint(testSize)
                        ? all.trainTestSplit((int) testSize, seed) : all.trainTestSplit(testSize, seed);
                this.train = parts.train();
                this.eval = parts.test();
            } else {
                this.train = all;
                this.eval = null;
            }
        }
        this.formatters = Formatters.fromConfig(map.get("formatters"), numAgents);
        this.rewardSpec = withOriginalRun(asMap(map.get("reward"), "reward"));
        map.put("reward", rewardSpec); // the resolved config records the arguments as they are passed
        RewardFunctions.fromConfig(rewardSpec, baseDir); // validates the spec (processes start lazily)
        // every row the formatters and the reward read is checked now, before any model loads
        RequiredFields required = requiredFields();
        String trainSource = ds.get("hub") != null ? "dataset.hub (" + ds.get("hub") + (split == null ? "" : ", split "
                + split) + ")" : ds.get("from_disk") != null ? "dataset.from_disk (" + ds.get("from_disk")
                + (split == null ? "" : ", split " + split) + ")" : "dataset.train (" + ds.get("train") + ")";
        checkRows(train, trainSource, required, "there is nothing to train on. Add task rows to it, or point the "
                + "dataset section at the file or split that holds them");
        if (eval != null) {
            String evalSource = ds.get("eval") != null ? "dataset.eval (" + ds.get("eval") + ")"
                    : ds.get("eval_split") != null ? "dataset.eval_split (" + ds.get("eval_split") + ")"
                    : "the eval split of " + trainSource;
            checkRows(eval, evalSource, required, "evaluation would average no rewards. Add rows to it, or remove it "
                    + "to train without evaluation");
        }
        this.rewardProcessor = map.get("reward_processor") == null ? RewardProcessors.identity()
                : RewardProcessors.fromConfig(map.get("reward_processor"));
        this.transitionSpec = ConfigMaps.isNullLike(map.get("external_transition")) ? null
                : withOriginalRun(asMap(map.get("external_transition"), "external_transition"));
        if (transitionSpec != null) {
            map.put("external_transition", transitionSpec);
            if (levelFeedback()) {
                ConfigMaps.requireKnownKeys("external_transition level_feedback", transitionSpec, List.of("type"), Map.of());
                if (!"code".equals(String.valueOf(rewardSpec.get("type")).trim().toLowerCase(java.util.Locale.ROOT))) {
                    throw new IllegalArgumentException("external_transition level_feedback reports what the code reward "
                            + "found; it needs reward: {type: code} (or environment: {type: code, ...} with the aux + main "
                            + "roles; the coder + test-writer team has no level feedback), got reward " + rewardSpec.get("type"));
                }
            } else {
                externalTransition(line -> { }); // validates the spec (the process starts lazily)
            }
            if (numTurns() == 1) { // it would never be called: say so rather than drop it
                throw new IllegalArgumentException("external_transition is called between turns, and this "
                        + displayName() + " run has num_turns: 1"
                        + (algorithm.family().preference ? " (preference learning trains one turn)" : "")
                        + ", so it would never run. Remove external_transition"
                        + (algorithm.family().preference ? "." : ", or set args.num_turns to 2 or more."));
            }
        } else if (numTurns() > 1) {
            throw new IllegalArgumentException("Multi-turn " + displayName() + " requires an external_transition. "
                    + "Add external_transition: {type: command, run: [bash, next.sh]} (one JSON line in, a JSON array "
                    + "of next prompts out), or set num_turns: 1.");
        }
        Path out = outputOverride != null ? outputOverride
                : map.get("output_dir") != null ? resolve(String.valueOf(map.get("output_dir")))
                : Path.of("runs", file.getFileName().toString().replaceAll("\\.ya?ml$", ""));
        this.outputDir = out;
        Map<String, Object> ck = map.get("checkpoint") == null ? null : asMap(map.get("checkpoint"), "checkpoint");
        if (ck != null) {
            ConfigMaps.requireKnownKeys("checkpoint", ck, List.of("dir", "interval"),
                    Map.of("path", "use 'dir'.", "output_dir", "use 'dir'.", "every", "use 'interval' (epochs).",
                            "save_steps", "use 'interval' (epochs)."));
        }
        this.checkpointDir = ck == null ? null
                : ck.get("dir") == null ? out.resolve("checkpoints") : resolve(String.valueOf(ck.get("dir")));
        this.checkpointInterval = ck == null || ck.get("interval") == null ? 1 : ConfigMaps.toInt("config", "checkpoint.interval", ck.get("interval"));
        if (checkpointInterval < 1) {
            throw new IllegalArgumentException("checkpoint.interval must be >= 1, got " + checkpointInterval);
        }
        this.evalRepeats = map.get("eval_repeats") == null ? 1 : ConfigMaps.toInt("config", "eval_repeats", map.get("eval_repeats"));
        if (evalRepeats < 1) {
            throw new IllegalArgumentException("eval_repeats must be >= 1, got " + evalRepeats);
        }
        this.saveModel = map.get("save_model") == null || ConfigMaps.toBoolean("config", "save_model", map.get("save_model"));
        this.chatTemplate = map.get("chat_template") != null
                && ConfigMaps.toBoolean("config", "chat_template", map.get("chat_template"));
        this.systemPrompt = map.get("system_prompt") == null ? null : String.valueOf(map.get("system_prompt"));
        if (systemPrompt != null && !chatTemplate) {
            throw new IllegalArgumentException("system_prompt needs chat_template: true (the system message goes "
                    + "into the agent's chat template)");
        }
        this.verbose = map.get("verbose") == null || ConfigMaps.toBoolean("config", "verbose", map.get("verbose"));
        this.lora = map.get("lora") == null ? null : comlrl.model.LoraConfig.fromMap(asMap(map.get("lora"), "lora"));
        this.tensorboard = map.get("tensorboard") != null
                && ConfigMaps.toBoolean("config", "tensorboard", map.get("tensorboard"));
        this.report = map.get("report") == null || ConfigMaps.toBoolean("config", "report", map.get("report"));
        this.distributed = distributedOptions(map.get("distributed"));
        this.wandb = map.get("wandb") == null ? null : asMap(map.get("wandb"), "wandb");
        if (wandb != null && wandb.get("dir") instanceof String d) {
            wandb.put("dir", resolve(d).toString());
        }
        this.criticLora = map.get("critic_lora") == null ? null
                : comlrl.model.LoraConfig.fromMap(asMap(map.get("critic_lora"), "critic_lora"));
        this.agentsShareBase = map.get("agents_share_base") == null ? null
                : ConfigMaps.toBoolean("config", "agents_share_base", map.get("agents_share_base"));
        this.loraAdapters = map.get("lora_adapters") == null ? null : loraAdapterList(map.get("lora_adapters"));
        this.saveMerged = map.get("save_merged") != null
                && ConfigMaps.toBoolean("config", "save_merged", map.get("save_merged"));
        boolean loraAgents = lora != null || loraAdapters != null;
        if (!loraAgents && (agentsShareBase != null || saveMerged)) {
            throw new IllegalArgumentException(file + ": " + (saveMerged ? "save_merged (train --merge)" : "agents_share_base")
                    + " applies to LoRA agents; add a lora section (e.g. lora: {r: 8, alpha: 16, target_modules: "
                    + "all-linear}) or lora_adapters, or remove it");
        }
        if (loraAdapters != null && loraAdapters.contains(null) && lora == null) {
            throw new IllegalArgumentException(file + ": lora_adapters has null entries (fresh adapters) but there is "
                    + "no lora section giving their settings; add lora: {r: ..., alpha: ...}");
        }
        if (loraAdapters != null && loraAdapters.size() != numAgents) {
            throw new IllegalArgumentException(file + ": lora_adapters has " + loraAdapters.size() + " entries for "
                    + numAgents + " agents; give one PEFT adapter directory (or null) per agent");
        }
    }

    private static Map<String, String> topLevel(String... keysAndMeanings) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndMeanings.length; i += 2) {
            map.put(keysAndMeanings[i], keysAndMeanings[i + 1]);
        }
        return java.util.Collections.unmodifiableMap(map);
    }

    /** {@code lora_adapters}: PEFT adapter directories (each checked now), null entries for fresh adapters. */
    private List<Path> loraAdapterList(Object value) {
        if (!(value instanceof List<?> list)) {
            throw new IllegalArgumentException("lora_adapters must be a list of PEFT adapter directories (one per "
                    + "agent, null for a fresh adapter), got " + value);
        }
        List<Path> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i) == null) {
                out.add(null);
                continue;
            }
            Path dir = resolve(String.valueOf(list.get(i)));
            try {
                comlrl.model.LoraAdapter.checkPeft(dir);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("lora_adapters[" + i + "]: " + e.getMessage(), e);
            }
            out.add(dir);
        }
        return out;
    }

    /** A dataset seed: a non-negative integer, as NumPy's {@code default_rng} (which datasets uses) requires. */
    private static long seed(Map<String, Object> ds, String key) {
        long seed = ConfigMaps.toLong("config", "dataset." + key, ds.get(key));
        if (seed < 0) {
            throw new IllegalArgumentException("dataset." + key + " must be a non-negative integer (NumPy's default_rng, "
                    + "which Hugging Face datasets shuffles with, refuses negative seeds), got " + seed + "; e.g. 42");
        }
        return seed;
    }

    RewardFunction rewardFunction() {
        return RewardFunctions.fromConfig(rewardSpec, baseDir);
    }

    /**
     * A new transition from {@code external_transition} (close it when training ends), or null when
     * the config has none.
     */
    ExternalCommandTransition externalTransition(Consumer<String> stderrSink) {
        return transitionSpec == null ? null : ExternalCommandTransition.fromConfig(transitionSpec, baseDir, stderrSink);
    }

    /** Whether {@code external_transition} is {@code {type: level_feedback}} (the code environment's feedback). */
    boolean levelFeedback() {
        return transitionSpec != null && "level_feedback".equals(String.valueOf(transitionSpec.get("type")).trim()
                .toLowerCase(java.util.Locale.ROOT));
    }

    /**
     * The run's transition (null without {@code external_transition}): {@code level_feedback} on the run's
     * code reward (which answers from its sandbox cache), else the command of {@link #externalTransition}.
     * A ddp rank other than 0, whose reward is a placeholder, never calls it.
     */
    comlrl.trainers.ExternalTransition transition(Consumer<String> stderrSink, RewardFunction reward) {
        if (!levelFeedback()) {
            return externalTransition(stderrSink);
        }
        if (reward instanceof comlrl.reward.CodeReward code) {
            return new comlrl.env.CodeLevelFeedback(code);
        }
        return context -> {
            throw new IllegalStateException("level_feedback runs where the code reward does (rank 0)");
        };
    }

    /** The reference's algorithm name ("MAGRPO", "IAC", ...). */
    String displayName() {
        return algorithm.displayName();
    }

    /** The config name ("magrpo", "iac", ...). */
    String configName() {
        return algorithm.configName();
    }

    /** The algorithm config's {@code parallel_training}. */
    comlrl.utils.ParallelTraining parallelTraining() {
        return args.parallelTraining();
    }

    int numTurns() {
        return args.numTurns();
    }

    long seed() {
        return args.seed();
    }

    /** The algorithm config's fields, snake_case, resolved. */
    Map<String, Object> argsMap() {
        return args.toMap();
    }

    /**
     * The {@code args} values that name models or directories (the fields declared so), resolved
     * against the config file's directory: models as {@link #resolveModelPath}, directories plainly.
     */
    private void resolvePaths(Map<String, Object> fields, List<ConfigField<?>> declared) {
        for (ConfigField<?> field : declared) {
            Object value = fields.get(field.key);
            if (field.path == ConfigField.PathKind.MODEL && value instanceof String path) {
                fields.put(field.key, resolveModelPath(path));
            } else if (field.path == ConfigField.PathKind.DIRECTORY && value instanceof String path) {
                fields.put(field.key, baseDir.resolve(path).normalize().toString());
            } else if (field.path == ConfigField.PathKind.MODEL_LIST && value instanceof List<?> list) {
                fields.put(field.key, list.stream().map(a -> resolveModelPath(String.valueOf(a))).toList());
            }
        }
    }

    private String criticModelOf(Map<String, Object> map) {
        String critic = map.get("critic_model") == null ? null : resolveModelPath(String.valueOf(map.get("critic_model")));
        if (critic != null) {
            ModelSourceCheck.check("critic_model", String.valueOf(map.get("critic_model")), critic);
        }
        return critic;
    }

    private static void rejectCriticKeys(Path file, Map<String, Object> map) {
        for (String key : List.of("critic_model", "critics", "critic_lora")) {
            if (map.get(key) != null) {
                throw new IllegalArgumentException(file + ": " + key + " is for the actor-critic algorithms; set "
                        + "algorithm: iac or maac (or marlhf with args.rl_algorithm iac or maac), or remove " + key);
            }
        }
    }

    String agentSource() {
        return agentModel == null ? null : resolveModelPath(agentModel);
    }

    /**
     * A model source as the loaders take it: {@code builtin:NAME} and hub ids as given; a path
     * with {@code ~} expanded and a relative one resolved against the config file's directory
     * (when it starts with {@code ./} or {@code ../} or exists there).
     */
    private String resolveModelPath(String source) {
        if (BuiltinModels.isBuiltin(source)) {
            return source;
        }
        String s = source.equals("~") || source.startsWith("~/") ? System.getProperty("user.home") + source.substring(1)
                : source;
        Path p;
        try {
            p = Path.of(s);
        } catch (InvalidPathException e) {
            return source;
        }
        if (p.isAbsolute()) {
            return p.normalize().toString();
        }
        Path local = baseDir.resolve(p).normalize();
        return Files.exists(local) || ModelSourceCheck.isExplicitPath(source) ? local.toString() : source;
    }

    /** {@code agents}: one model source per agent, each checked and resolved. */
    private List<String> agentList(Object value) {
        return modelList(value, "agents");
    }

    /** A list of model sources under {@code key} ("agents", "critics"), each resolved and checked. */
    private List<String> modelList(Object value, String key) {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            throw new IllegalArgumentException(key + " must be a non-empty list of model sources, one per agent "
                    + "(e.g. [builtin:tiny, Qwen/Qwen2.5-0.5B]), got " + value);
        }
        List<String> resolved = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            if (!(list.get(i) instanceof String source)) {
                throw new IllegalArgumentException(key + "[" + i + "] must be a model source (a string), got "
                        + list.get(i));
            }
            String path = resolveModelPath(source);
            ModelSourceCheck.check(key + "[" + i + "]", source, path);
            resolved.add(path);
        }
        return List.copyOf(resolved);
    }

    /**
     * The fields every task row must hold: those the formatters read (strings) and those the reward
     * reads (numbers for {@code length_ratio}'s targets, strings for a reward model's template).
     */
    private RequiredFields requiredFields() {
        RequiredFields fields = RequiredFields.none();
        for (Map.Entry<String, String> e : formatters.requiredFields().entrySet()) {
            fields = fields.and(e.getKey(), RequiredFields.Kind.TEXT, e.getValue());
        }
        for (Map.Entry<String, String> e : RewardFunctions.requiredFields(rewardSpec).entrySet()) {
            fields = fields.and(e.getKey(), e.getValue().equals("template") ? RequiredFields.Kind.TEXT
                    : RequiredFields.Kind.NUMBER, "reward " + rewardSpec.get("type") + " (" + e.getValue() + ")");
        }
        return fields;
    }

    /**
     * Fails unless {@code tasks} has rows, has a column for every field the formatters and the reward
     * read (naming the closest column), and every row holds them ({@link TaskSet#requireRows}: a
     * stream checks its columns, its first rows, then each row as training reads it).
     *
     * @param source the config key and file, for messages: {@code dataset.train (tasks.jsonl)}
     * @param emptyFix what an empty set means and how to fix it
     */
    private void checkRows(TaskSet tasks, String source, RequiredFields required, String emptyFix) {
        if (tasks instanceof Dataset dataset && dataset.isEmpty()) {
            throw new IllegalArgumentException(source + " holds no rows (" + dataset.root().source() + (dataset.root()
                    .isEmpty() ? "" : ", " + dataset.root().size() + " rows before the split") + "): " + emptyFix + ".");
        }
        checkColumns(tasks, source);
        try {
            tasks.requireRows(required);
        } catch (DatasetException e) {
            throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
        }
    }

    /**
     * Fails when a formatter or the reward reads a field that {@code tasks} has no column for (a
     * JSON Lines stream: its first row), naming the closest column.
     */
    private void checkColumns(TaskSet tasks, String source) {
        List<String> columns;
        if (tasks instanceof Dataset dataset) {
            columns = dataset.columnNames();
        } else if (tasks instanceof JsonlStream stream) {
            try (JsonlStream peek = JsonlStream.open(stream.file())) {
                Iterator<TaskItem> rows = peek.iterator();
                if (!rows.hasNext()) {
                    return;
                }
                columns = List.copyOf(rows.next().asMap().keySet());
                source = "the first row of " + source;
            }
        } else {
            return; // a Parquet stream's columns are checked against its schema by requireRows
        }
        formatters.requireFields(columns, source);
        for (Map.Entry<String, String> e : RewardFunctions.requiredFields(rewardSpec).entrySet()) {
            String field = e.getKey();
            String key = e.getValue();
            if (!columns.contains(field)) {
                String fix = key.equals("template") ? "Write the template's {" + field + "} as a column the data has"
                        : "Set reward." + key + " to the column that holds it";
                throw new IllegalArgumentException("reward " + rewardSpec.get("type") + " reads the task field '" + field
                        + "' (" + key + "), but " + source + " has no column '" + field + "'; did you mean '"
                        + ConfigMaps.closest(field, columns) + "'? " + fix + ". Columns: " + columns);
            }
        }
    }

    /**
     * {@code spec} with {@code run}'s numbers and booleans as written in the YAML ({@code 1.50}
     * stays "1.50", not the double's "1.5").
     */
    private Map<String, Object> withOriginalRun(Map<String, Object> spec) {
        if (spec.get("run") instanceof List<?> run && scalarTexts.containsKey(run)) {
            List<String> texts = scalarTexts.get(run);
            List<Object> copy = new ArrayList<>(run);
            for (int i = 0; i < copy.size(); i++) {
                if (texts.get(i) != null) {
                    copy.set(i, texts.get(i));
                }
            }
            spec.put("run", copy);
        }
        return spec;
    }

    /**
     * The evaluation set: {@code dataset.eval} (a file), the {@code eval_split} of the hub dataset or
     * of the {@code from_disk} DatasetDict, or null.
     */
    private Dataset evalSet(Map<String, Object> ds, String hub, Path fromDisk, String config, String revision) {
        if (ds.get("eval") != null) {
            return loadDataset(ds.get("eval"), "dataset.eval");
        }
        if (ds.get("eval_split") == null) {
            return null;
        }
        String split = String.valueOf(ds.get("eval_split"));
        return hub != null ? Dataset.fromHub(hub, config, split, revision) : Dataset.loadFromDisk(fromDisk, split);
    }

    private Dataset loadDataset(Object spec, String key) {
        if (spec == null) {
            throw new IllegalArgumentException(key + " is required: a JSONL/JSON/CSV/Parquet file or builtin:length-ratio");
        }
        String s = String.valueOf(spec);
        return BuiltinTasks.isBuiltin(s) ? BuiltinTasks.load(s) : Dataset.load(resolve(s));
    }

    private Path resolve(String p) {
        Path path = Path.of(p);
        return path.isAbsolute() ? path : baseDir.resolve(path).normalize();
    }

    @SuppressWarnings("unchecked")
    /** The {@code distributed} section as connection options (defaults when absent). */
    private static comlrl.distributed.DistributedContext.Options distributedOptions(Object section) {
        comlrl.distributed.DistributedContext.Options o = comlrl.distributed.DistributedContext.Options.defaults();
        if (section == null) {
            return o;
        }
        Map<String, Object> d = asMap(section, "distributed");
        ConfigMaps.requireKnownKeys("distributed", d, List.of("backend", "timeout_s", "rendezvous_timeout_s", "zero_stage"),
                Map.of());
        if (d.get("backend") != null) {
            o = o.withBackend(comlrl.distributed.Backend.parse(ConfigMaps.toStr("distributed", "backend", d.get("backend"))));
        }
        for (String key : List.of("timeout_s", "rendezvous_timeout_s")) {
            if (d.get(key) == null) {
                continue;
            }
            double seconds = ConfigMaps.toDouble("distributed", key, d.get(key));
            if (!(seconds > 0) || Double.isInfinite(seconds)) {
                throw new IllegalArgumentException("distributed." + key + " must be a number of seconds > 0, got "
                        + d.get(key) + " (how long a process waits for the others before it fails naming them)");
            }
            java.time.Duration t = java.time.Duration.ofMillis((long) Math.ceil(seconds * 1000));
            o = key.equals("timeout_s") ? o.withTimeout(t) : o.withRendezvousTimeout(t);
        }
        if (d.get("zero_stage") != null) {
            Object z = d.get("zero_stage");
            if (!(z instanceof Integer stage) || stage != 0 && stage != 1) {
                throw new IllegalArgumentException("distributed.zero_stage must be 0 (every process keeps the whole "
                        + "optimizer state) or 1 (each keeps the AdamW state of its share of the parameters), got " + z);
            }
            o = o.withZeroStage(stage);
        }
        return o;
    }

    private static Map<String, Object> asMap(Object o, String key) {
        if (!(o instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException(key + " must be a mapping" + (o == null ? " (it is missing)" : ", got " + o));
        }
        return new LinkedHashMap<>((Map<String, Object>) m);
    }

    /**
     * {@code --set key=value}: {@code a.b=v} sets nested keys; a bare config field name
     * ({@code num_generations=8}) goes under {@code args}. Values are parsed as YAML.
     */
    static void applyOverride(Map<String, Object> map, String override) {
        applyOverride(map, override, new IdentityHashMap<>());
    }

    @SuppressWarnings("unchecked")
    private static void applyOverride(Map<String, Object> map, String override, Map<Object, List<String>> texts) {
        int eq = override.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("--set expects key=value, got '" + override + "'");
        }
        String key = override.substring(0, eq).trim();
        Object value = ConfigYaml.read(override.substring(eq + 1), "of the value of --set " + key, texts);
        List<String> path = new ArrayList<>(List.of(key.split("\\.")));
        if (path.size() == 1 && !KEYS.contains(key)) {
            path.add(0, "args");
        }
        Map<String, Object> cur = map;
        for (int i = 0; i < path.size() - 1; i++) {
            Object next = cur.get(path.get(i));
            Map<String, Object> child = next instanceof Map<?, ?> m ? new LinkedHashMap<>((Map<String, Object>) m)
                    : new LinkedHashMap<>();
            cur.put(path.get(i), child);
            cur = child;
        }
        cur.put(path.get(path.size() - 1), value);
    }

    /**
     * Reads config YAML into maps ({@link LinkedHashMap}), lists and scalars (String, Integer /
     * Long / BigInteger, Double, Boolean, null), as Jackson's untyped reading does, but rejecting a
     * key repeated within one mapping (YAML forbids it; Jackson would keep the last silently) and
     * recording, for each list holding numbers or booleans, their original text (so a program
     * argument {@code 1.50} can be passed on as written).
     */
    static final class ConfigYaml {
        private static final YAMLFactory FACTORY = YAMLFactory.builder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

        private ConfigYaml() {}

        /**
         * The value of {@code text}; {@code texts} receives, per list (by identity) holding a
         * number or boolean, each element's source text (null for other elements).
         *
         * @param where for messages, after "at line N": {@code "of run.yaml"}
         * @throws IllegalArgumentException "duplicate key 'x' in dataset at line N of FILE", or
         *     malformed YAML with the parser's position
         */
        static Object read(String text, String where, Map<Object, List<String>> texts) {
            try (JsonParser parser = FACTORY.createParser(text)) {
                try {
                    return parser.nextToken() == null ? null : value(parser, texts);
                } catch (JsonParseException e) {
                    if (e.getOriginalMessage() != null && e.getOriginalMessage().startsWith("Duplicate field")) {
                        throw new IllegalArgumentException("duplicate key '" + parser.currentName() + "'"
                                + section(parser.getParsingContext()) + " at line " + e.getLocation().getLineNr()
                                + " " + where + ": a key may appear only once in a mapping; remove or merge the "
                                + "repeated one", e);
                    }
                    throw e;
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("malformed YAML " + where + ": " + e.getMessage(), e);
            }
        }

        /** " in dataset", " in reward", "" at the top level: the mappings enclosing the current key. */
        private static String section(JsonStreamContext context) {
            List<String> names = new ArrayList<>();
            for (JsonStreamContext c = context.getParent(); c != null; c = c.getParent()) {
                if (c.inObject() && c.getCurrentName() != null) {
                    names.add(0, c.getCurrentName());
                } else if (c.inArray()) {
                    names.add(0, "[" + c.getCurrentIndex() + "]");
                }
            }
            return names.isEmpty() ? "" : " in " + String.join(".", names).replace(".[", "[");
        }

        private static Object value(JsonParser parser, Map<Object, List<String>> texts) throws IOException {
            JsonToken token = parser.currentToken();
            switch (token) {
                case START_OBJECT: {
                    Map<String, Object> map = new LinkedHashMap<>();
                    while (parser.nextToken() == JsonToken.FIELD_NAME) {
                        String key = parser.currentName();
                        next(parser);
                        map.put(key, value(parser, texts));
                    }
                    return map;
                }
                case START_ARRAY: {
                    List<Object> list = new ArrayList<>();
                    List<String> originals = new ArrayList<>();
                    boolean scalars = false;
                    while (next(parser) != JsonToken.END_ARRAY) {
                        JsonToken element = parser.currentToken();
                        String original = element.isNumeric() || element.isBoolean() ? parser.getText() : null;
                        scalars |= original != null;
                        originals.add(original);
                        list.add(value(parser, texts));
                    }
                    if (scalars) {
                        texts.put(list, originals);
                    }
                    return list;
                }
                case VALUE_STRING:
                    return parser.getText();
                case VALUE_NUMBER_INT:
                case VALUE_NUMBER_FLOAT:
                    return parser.getNumberValue();
                case VALUE_TRUE:
                    return Boolean.TRUE;
                case VALUE_FALSE:
                    return Boolean.FALSE;
                case VALUE_NULL:
                    return null;
                case VALUE_EMBEDDED_OBJECT:
                    return parser.getEmbeddedObject();
                default:
                    throw new JsonParseException(parser, "unexpected " + token);
            }
        }

        private static JsonToken next(JsonParser parser) throws IOException {
            JsonToken token = parser.nextToken();
            if (token == null) {
                throw new JsonParseException(parser, "unexpected end of input");
            }
            return token;
        }
    }

    /**
     * Checks a model source before anything loads: a built-in name must exist, a local directory
     * must hold a model, a hub id must be valid (and, with {@code HF_HUB_OFFLINE}, cached).
     */
    static final class ModelSourceCheck {
        private ModelSourceCheck() {}

        /** Whether {@code source} is written as a path: {@code /x}, {@code ./x}, {@code ../x}, {@code ~/x}, {@code .}. */
        static boolean isExplicitPath(String source) {
            return source.startsWith("/") || source.startsWith("./") || source.startsWith("../") || source.startsWith("~")
                    || source.equals(".") || source.equals("..");
        }

        /**
         * @param key the config key, for messages: {@code agent_model}, {@code agents[1]}
         * @param given the source as written
         * @param resolved the source as {@link RunConfig#resolveModelPath} resolved it
         */
        static void check(String key, String given, String resolved) {
            if (given.isBlank()) {
                throw new IllegalArgumentException(key + " is empty: give a model directory, a hub id such as "
                        + "Qwen/Qwen2.5-0.5B, or a built-in model such as builtin:tiny");
            }
            if (BuiltinModels.isBuiltin(given)) {
                checkBuiltin(key, given);
                return;
            }
            Path cwdRelative = null;
            try {
                cwdRelative = Path.of(given);
            } catch (InvalidPathException e) {
                // not a usable path: a hub id or nothing
            }
            if (isExplicitPath(given) || !resolved.equals(given) || (cwdRelative != null && Files.exists(cwdRelative))) {
                checkDirectory(key, given, Path.of(resolved).toAbsolutePath().normalize());
                return;
            }
            try {
                HubCache hub = HubCache.fromEnvironment();
                hub.repo(given); // validates the id (and a revision after '@')
                if (hub.offline()) {
                    ModelSources.resolve(given); // everything it needs must be in the cache; offline, nothing downloads
                }
            } catch (HubException | IllegalArgumentException e) {
                throw new IllegalArgumentException(key + " '" + given + "': " + e.getMessage(), e);
            }
        }

        private static void checkBuiltin(String key, String source) {
            String name = source.substring(BuiltinModels.PREFIX.length()).toLowerCase(Locale.ROOT);
            String[] parts = name.split("-", 2);
            List<String> presets = ModelPresets.NAMES.stream().filter(n -> !n.contains("-")).toList();
            if (presets.contains(parts[0]) && (parts.length == 1 || ModelPresets.ARCHS.contains(parts[1]))) {
                return;
            }
            List<String> names = new ArrayList<>();
            for (String preset : presets) {
                names.add(BuiltinModels.PREFIX + preset);
                for (String arch : ModelPresets.ARCHS) {
                    names.add(BuiltinModels.PREFIX + preset + "-" + arch);
                }
            }
            throw new IllegalArgumentException("Unknown built-in model '" + source + "' in " + key + "; did you mean '"
                    + ConfigMaps.closest(source, names) + "'? Built-in models: " + String.join(", ", names));
        }

        private static void checkDirectory(String key, String given, Path dir) {
            String where = given.equals(dir.toString()) ? dir.toString() : dir + " (from '" + given + "')";
            if (!Files.isDirectory(dir)) {
                throw new IllegalArgumentException(key + ": model directory " + where + " does not exist"
                        + (Files.exists(dir) ? " (it is a file)" : "") + "; relative paths are resolved against the "
                        + "config file's directory. Give a Hugging Face model directory, a hub id such as "
                        + "Qwen/Qwen2.5-0.5B, or builtin:tiny");
            }
            List<String> missing = new ArrayList<>();
            for (String required : List.of("config.json", "tokenizer.json")) {
                if (!Files.isRegularFile(dir.resolve(required))) {
                    missing.add(required);
                }
            }
            if (!Files.isRegularFile(dir.resolve("model.safetensors"))
                    && !Files.isRegularFile(dir.resolve("model.safetensors.index.json"))) {
                missing.add("model.safetensors (or model.safetensors.index.json)");
            }
            if (!missing.isEmpty()) {
                throw new IllegalArgumentException(key + ": " + where + " is not a model directory: it has no "
                        + String.join(", no ", missing) + ". A Hugging Face model directory holds config.json, "
                        + "tokenizer.json and safetensors weights (`bin/comlrl init-model --out DIR` writes one)");
            }
        }
    }
}
