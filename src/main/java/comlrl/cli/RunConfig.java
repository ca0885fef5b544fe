package comlrl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import comlrl.data.BuiltinTasks;
import comlrl.data.Dataset;
import comlrl.reward.RewardFunction;
import comlrl.reward.RewardFunctions;
import comlrl.tensor.DType;
import comlrl.trainers.ExternalCommandTransition;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.ReinforceAlgorithm;
import comlrl.utils.ConfigMaps;
import comlrl.utils.Formatters;
import comlrl.utils.RewardProcessor;
import comlrl.utils.RewardProcessors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A training run described by a YAML file, fully validated on construction (before any model is
 * loaded). Top-level keys:
 * <pre>
 * algorithm: magrpo            # magrpo | mareinforce | maremax | marloo | centralized_magrpo
 *                              # (centralized: one actor plays num_agents roles through the tagged adapter)
 * agent_model: builtin:tiny    # model dir, hub id or built-in; or agents: [..] (one per agent)
 * num_agents: 2                # default: args.num_agents, or len(agents)
 * dtype: float32               # optional weights dtype override
 * dataset: {train: FILE|builtin:NAME, eval: FILE, test_size: 0.2, split_seed: 42, shuffle_seed: N,
 *           streaming: false}         # streaming: read a .jsonl train file lazily (no split/shuffle)
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
 * </pre>
 * Relative paths are resolved against the config file's directory.
 */
final class RunConfig {
    static final Set<String> KEYS = Set.of("algorithm", "agent_model", "agents", "num_agents", "dtype", "dataset",
            "formatters", "chat_template", "system_prompt", "reward", "reward_processor", "external_transition", "args",
            "output_dir", "checkpoint", "eval_repeats", "save_model", "verbose");

    final Map<String, Object> raw;
    final ReinforceAlgorithm algorithm;
    final MAGRPOConfig args;
    final String agentModel;
    final List<String> agents;
    final int numAgents;
    final DType dtype;
    final comlrl.data.TaskSet train;
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
    private final Path baseDir;

    @SuppressWarnings("unchecked")
    RunConfig(Path file, List<String> overrides, Path outputOverride) {
        this.baseDir = file.toAbsolutePath().getParent();
        Map<String, Object> map;
        try {
            Object parsed = new ObjectMapper(new YAMLFactory()).readValue(Files.readString(file), Object.class);
            if (!(parsed instanceof Map<?, ?>)) {
                throw new IllegalArgumentException(file + ": the config must be a YAML mapping of keys to values");
            }
            map = new LinkedHashMap<>((Map<String, Object>) parsed);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("Config file not found: " + file, e);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": malformed YAML: " + e.getMessage(), e);
        }
        for (String o : overrides) {
            applyOverride(map, o);
        }
        this.raw = map;
        ConfigMaps.requireKnownKeys(file.toString(), map, KEYS, Map.of());
        this.algorithm = ReinforceAlgorithm.parse(String.valueOf(map.getOrDefault("algorithm", "magrpo")));
        Map<String, Object> argsMap = map.get("args") == null ? Map.of() : asMap(map.get("args"), "args");
        this.args = algorithm.fromMap(argsMap);
        this.agentModel = map.get("agent_model") == null ? null : String.valueOf(map.get("agent_model"));
        this.agents = map.get("agents") == null ? null : ((List<Object>) map.get("agents")).stream()
                .map(o -> resolveModelPath(String.valueOf(o))).toList();
        if (agentModel == null && agents == null) {
            throw new IllegalArgumentException(file + ": give agent_model (one model for every agent, e.g. "
                    + "builtin:tiny or Qwen/Qwen2.5-0.5B) or agents (a list, one per agent)");
        }
        this.numAgents = map.get("num_agents") != null ? ConfigMaps.toInt("config", "num_agents", map.get("num_agents"))
                : agents != null ? agents.size() : args.numAgents();
        this.dtype = map.get("dtype") == null ? null : DType.fromTorchName(String.valueOf(map.get("dtype")));
        Map<String, Object> ds = asMap(map.get("dataset"), "dataset");
        boolean streaming = ds.get("streaming") != null && ConfigMaps.toBoolean("config", "dataset.streaming", ds.get("streaming"));
        if (streaming) {
            if (ds.get("test_size") != null || ds.get("shuffle_seed") != null) {
                throw new IllegalArgumentException("dataset.streaming reads the JSONL file lazily, in order: it cannot be "
                        + "split or shuffled; give dataset.eval as a separate file instead of test_size/shuffle_seed");
            }
            String trainFile = String.valueOf(ds.get("train"));
            if (!trainFile.endsWith(".jsonl")) {
                throw new IllegalArgumentException("dataset.streaming needs a .jsonl file for dataset.train, got " + trainFile);
            }
            this.train = comlrl.data.JsonlStream.open(resolve(trainFile));
            this.eval = ds.get("eval") == null ? null : loadDataset(ds.get("eval"), "dataset.eval");
        } else {
            Dataset all = loadDataset(ds.get("train"), "dataset.train");
            if (ds.get("shuffle_seed") != null) {
                all = all.shuffle(ConfigMaps.toLong("config", "dataset.shuffle_seed", ds.get("shuffle_seed")));
            }
            if (ds.get("eval") != null) {
                this.train = all;
                this.eval = loadDataset(ds.get("eval"), "dataset.eval");
            } else if (ds.get("test_size") != null) {
                double testSize = ConfigMaps.toDouble("config", "dataset.test_size", ds.get("test_size"));
                long seed = ds.get("split_seed") == null ? 42 : ConfigMaps.toLong("config", "dataset.split_seed", ds.get("split_seed"));
                Dataset.Split split = testSize >= 1 && testSize == Math.rint(testSize)
                        ? all.trainTestSplit((int) testSize, seed) : all.trainTestSplit(testSize, seed);
                this.train = split.train();
                this.eval = split.test();
            } else {
                this.train = all;
                this.eval = null;
            }
        }
        this.formatters = Formatters.fromConfig(map.get("formatters"), numAgents);
        this.rewardSpec = asMap(map.get("reward"), "reward");
        RewardFunctions.fromConfig(rewardSpec, baseDir); // validates the spec (processes start lazily)
        this.rewardProcessor = map.get("reward_processor") == null ? RewardProcessors.identity()
                : RewardProcessors.fromConfig(map.get("reward_processor"));
        this.transitionSpec = ConfigMaps.isNullLike(map.get("external_transition")) ? null
                : asMap(map.get("external_transition"), "external_transition");
        if (transitionSpec != null) {
            externalTransition(line -> { }); // validates the spec (the process starts lazily)
        } else if (args.numTurns() > 1) {
            throw new IllegalArgumentException("Multi-turn " + algorithm.displayName() + " requires an external_transition. "
                    + "Add external_transition: {type: command, run: [bash, next.sh]} (one JSON line in, a JSON array "
                    + "of next prompts out), or set num_turns: 1.");
        }
        Path out = outputOverride != null ? outputOverride
                : map.get("output_dir") != null ? resolve(String.valueOf(map.get("output_dir")))
                : Path.of("runs", file.getFileName().toString().replaceAll("\\.ya?ml$", ""));
        this.outputDir = out;
        Map<String, Object> ck = map.get("checkpoint") == null ? null : asMap(map.get("checkpoint"), "checkpoint");
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

    String agentSource() {
        return agentModel == null ? null : resolveModelPath(agentModel);
    }

    private String resolveModelPath(String source) {
        if (source.startsWith("builtin:") || source.startsWith("/")) {
            return source;
        }
        Path p = baseDir.resolve(source);
        return Files.isDirectory(p) ? p.toString() : source;
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
    private static Map<String, Object> asMap(Object o, String key) {
        if (!(o instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException(key + " must be a mapping" + (o == null ? " (it is missing)" : ", got " + o));
        }
        return new LinkedHashMap<>((Map<String, Object>) m);
    }

    /**
     * {@code --set key=value}: {@code a.b=v} sets nested keys; a bare config field name
     * ({@code num_generations=8}) goes under {@code args}. Values are parsed as YAML scalars.
     */
    @SuppressWarnings("unchecked")
    static void applyOverride(Map<String, Object> map, String override) {
        int eq = override.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("--set expects key=value, got '" + override + "'");
        }
        String key = override.substring(0, eq).trim();
        Object value;
        try {
            value = new ObjectMapper(new YAMLFactory()).readValue(override.substring(eq + 1), Object.class);
        } catch (IOException e) {
            throw new IllegalArgumentException("--set " + key + ": cannot parse value: " + e.getMessage(), e);
        }
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
}
