package comlrl.reward;

import comlrl.data.TaskItem;
import comlrl.utils.ConfigMaps;
import comlrl.utils.JsonLinesProcess;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** Reward functions from config files, and helpers shared by the built-in rewards. */
public final class RewardFunctions {
    private static final Set<String> TYPES = Set.of("length_ratio", "command", "reward_model", "writing", "code",
            "coder_tester");
    /** The keys of a {@code type: reward_model} section. */
    static final List<String> REWARD_MODEL_KEYS = List.of("type", "model", "template", "label", "device", "dtype",
            "batch_size", "max_length", "per_agent");

    private RewardFunctions() {}

    /**
     * A built-in reward from a config-file map:
     * <ul>
     *   <li>{@code {type: length_ratio, target_min_field: target_min, target_max_field: target_max}}
     *       → {@link LengthRatioReward} (both fields optional);</li>
     *   <li>{@code {type: command, run: [python3, reward.py], working_dir: ., timeout_s: 60}} →
     *       {@link ExternalCommandReward}; see {@link JsonLinesProcess.CommandConfig#fromMap} (the
     *       program and a script argument must exist: checked here, before any process starts).</li>
     *   <li>{@code {type: reward_model, model: DIR|HUB_ID, template: "...", label: 0, device: cpu,
     *       dtype: null, batch_size: 8, max_length: 1024, per_agent: false}} → {@link RewardModelReward} (only
     *       {@code model} required; with {@code per_agent: true}, {@link RewardModelReward#agentRewards()}:
     *       each agent's completion scored on its own, {@code template} one string or a list with one per
     *       agent; a relative directory is resolved against {@code baseDirectory};
     *       the values and, for a directory, the checkpoint's config, labels and {@code score.weight}
     *       are checked here; the weights load at the first call).</li>
     *   <li>{@code {type: writing, task: tldr|arxiv}} → {@link WritingReward}, the level rewards of
     *       two-agent collaborative writing.</li>
     *   <li>{@code {type: code, weights: {aux_defined: 0.4, ...}, sandbox: {isolation: namespaces,
     *       timeout_s: 10, memory_mb: 1024, parallelism: CORES}}} → {@link CodeReward}, the level reward
     *       of aux + main code generation, its programs run in a sandbox (both sections optional; see
     *       {@link CodeReward#fromConfig}).</li>
     *   <li>{@code {type: coder_tester, weights: {code_defined: 0.6, ...}, sandbox: {...}}} →
     *       {@link CoderTesterReward}, a coder's function and a test writer's asserts, both run in a sandbox.</li>
     * </ul>
     * The result may be {@link AutoCloseable} (the command, reward-model and code rewards): close it when
     * training ends.
     *
     * @param baseDirectory directory relative paths are resolved against; null = the current directory
     */
    public static RewardFunction fromConfig(Map<String, ?> spec, Path baseDirectory) {
        Map<String, Object> map = ConfigMaps.stringKeys("reward", spec);
        Object typeValue = map.get("type");
        if (!(typeValue instanceof String typeName)) {
            throw new IllegalArgumentException("reward needs a 'type': one of " + new TreeSet<>(TYPES) + ", got " + spec);
        }
        String type = typeName.trim().toLowerCase(Locale.ROOT);
        switch (type) {
            case "length_ratio": {
                ConfigMaps.requireKnownKeys("reward length_ratio", map,
                        List.of("type", "target_min_field", "target_max_field"), Map.of());
                return new LengthRatioReward(
                        ConfigMaps.toStr("reward", "target_min_field", map.getOrDefault("target_min_field", "target_min")),
                        ConfigMaps.toStr("reward", "target_max_field", map.getOrDefault("target_max_field", "target_max")));
            }
            case "command": {
                JsonLinesProcess.CommandConfig command = JsonLinesProcess.CommandConfig.fromMap("reward command", map,
                        baseDirectory, "[python3, reward.py]");
                return ExternalCommandReward.builder(command.run())
                        .workingDirectory(command.workingDirectory())
                        .timeout(command.timeout())
                        .build();
            }
            case "reward_model":
                return rewardModel(map, baseDirectory);
            case "writing": {
                ConfigMaps.requireKnownKeys("reward writing", map, List.of("type", "task"), Map.of());
                if (ConfigMaps.isNullLike(map.get("task"))) {
                    throw new IllegalArgumentException("reward writing needs 'task': tldr (summary + elaboration) or "
                            + "arxiv (two halves of an introduction)");
                }
                return WritingReward.forTask(ConfigMaps.toStr("reward writing", "task", map.get("task")));
            }
            case "code":
                return CodeReward.fromConfig(map);
            case "coder_tester":
                return CoderTesterReward.fromConfig(map);
            default:
                throw new IllegalArgumentException("Unknown reward type '" + typeName + "'; did you mean '"
                        + ConfigMaps.closest(type, TYPES) + "'? Valid types: " + new TreeSet<>(TYPES));
        }
    }

    private static RewardFunction rewardModel(Map<String, Object> map, Path baseDirectory) {
        String owner = "reward reward_model";
        ConfigMaps.requireKnownKeys(owner, map, REWARD_MODEL_KEYS, Map.of(
                "model_name", "use 'model'.", "reward_model", "use 'model'.", "path", "use 'model'.",
                "reward_model_name", "use 'model'.", "format", "use 'template'.", "label_index", "use 'label'.",
                "max_len", "use 'max_length'.", "torch_dtype", "use 'dtype'."));
        if (ConfigMaps.isNullLike(map.get("model"))) {
            throw new IllegalArgumentException(owner + " needs 'model': a sequence-classification model directory "
                    + "(relative to the config file) or a hub id, e.g. model: ./reward-model");
        }
        String model = ConfigMaps.toStr(owner, "model", map.get("model")).trim();
        if (comlrl.generation.BuiltinModels.isBuiltin(model)) {
            throw new IllegalArgumentException(owner + " model '" + model + "': built-in models are causal LMs, not "
                    + "reward models; write a random one with bin/comlrl init-model --head score --out DIR and give DIR");
        }
        RewardModelReward.Builder b = RewardModelReward.builder(resolveModelPath(model, baseDirectory));
        if (map.containsKey("per_agent")) {
            b.perAgent(ConfigMaps.toBoolean(owner, "per_agent", map.get("per_agent")));
        }
        if (map.get("template") instanceof List<?> templates) { // one per agent
            b.templatesPerAgent(templates.stream().map(t -> ConfigMaps.toStr(owner, "template", t)).toList());
        } else if (!ConfigMaps.isNullLike(map.get("template"))) {
            b.template(ConfigMaps.toStr(owner, "template", map.get("template")));
        }
        if (map.containsKey("label")) {
            Object label = map.get("label");
            if (!(label instanceof Number || label instanceof String)) {
                throw new IllegalArgumentException(owner + " label must be a label index (0, 1, ...) or a label name "
                        + "from the model's id2label, got " + label);
            }
            if (label instanceof Number) {
                label = ConfigMaps.toInt(owner, "label", label);
                if ((int) label < 0) {
                    throw new IllegalArgumentException(owner + " label must be a non-negative index, got " + label);
                }
            }
            b.label(label);
        }
        if (!ConfigMaps.isNullLike(map.get("device"))) {
            b.device(parsed(owner, "device", map, comlrl.tensor.Device::parse));
        }
        if (!ConfigMaps.isNullLike(map.get("dtype"))) {
            b.dtype(parsed(owner, "dtype", map, comlrl.tensor.DType::fromTorchName));
        }
        if (map.containsKey("batch_size")) {
            b.batchSize(ConfigMaps.toInt(owner, "batch_size", map.get("batch_size")));
        }
        if (map.containsKey("max_length")) {
            b.maxLength(ConfigMaps.toInt(owner, "max_length", map.get("max_length")));
        }
        try {
            RewardModelReward reward = b.build();
            return reward.isPerAgent() ? reward.agentRewards() : reward;
        } catch (IllegalArgumentException e) {
            throw e.getMessage() != null && e.getMessage().startsWith("reward_model") ? e
                    : new IllegalArgumentException("reward_model " + model + ": " + e.getMessage(), e);
        }
    }

    /** The string at {@code key} parsed by {@code parser}, whose error is prefixed with the key. */
    private static <T> T parsed(String owner, String key, Map<String, Object> map,
            java.util.function.Function<String, T> parser) {
        String text = ConfigMaps.toStr(owner, key, map.get(key));
        try {
            return parser.apply(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(owner + " " + key + ": " + e.getMessage(), e);
        }
    }

    /**
     * A model source as written in a config file: an absolute path as it is; a relative one
     * resolved against {@code baseDirectory} when it exists there or is written as a path
     * ({@code ./x}, {@code ../x}, {@code ~/x}); anything else (a hub id) unchanged.
     */
    static String resolveModelPath(String source, Path baseDirectory) {
        String s = source.equals("~") || source.startsWith("~/") ? System.getProperty("user.home") + source.substring(1)
                : source;
        Path p;
        try {
            p = Path.of(s);
        } catch (java.nio.file.InvalidPathException e) {
            return source;
        }
        if (p.isAbsolute()) {
            return p.normalize().toString();
        }
        Path base = baseDirectory == null ? Path.of("").toAbsolutePath() : baseDirectory.toAbsolutePath();
        Path local = base.resolve(p).normalize();
        boolean pathLike = s.startsWith("./") || s.startsWith("../") || s.equals(".") || s.equals("..");
        return java.nio.file.Files.exists(local) || pathLike ? local.toString() : source;
    }

    /**
     * The task-item fields the reward of {@code spec} (a map {@link #fromConfig} accepts) reads, each
     * with the reward key that names it, so a config can be checked against its dataset before
     * training: for {@code length_ratio} its {@code target_min_field} and {@code target_max_field};
     * for {@code reward_model} the placeholders of its {@code template} other than
     * {@code {completion_i}} (the default text reads {@code prompt} when the item has it); none for
     * a {@code command} reward (what the program reads is unknown).
     */
    public static Map<String, String> requiredFields(Map<String, ?> spec) {
        Object type = spec.get("type");
        String kind = type instanceof String t ? t.trim().toLowerCase(Locale.ROOT) : "";
        Map<String, String> fields = new java.util.LinkedHashMap<>();
        if (kind.equals("length_ratio")) {
            Object min = spec.get("target_min_field");
            Object max = spec.get("target_max_field");
            fields.put(min == null ? "target_min" : String.valueOf(min), "target_min_field");
            fields.putIfAbsent(max == null ? "target_max" : String.valueOf(max), "target_max_field");
        } else if (kind.equals("reward_model") && spec.get("template") instanceof String template) {
            for (String field : comlrl.utils.Formatter.template(template).placeholders()) {
                if (!field.matches("completion_\\d+")) {
                    fields.put(field, "template");
                }
            }
        }
        return fields;
    }

    /** K, the common length of the agents' completion lists; fails when they differ or there are none. */
    static int jointResponseCount(List<List<String>> agentCompletions) {
        if (agentCompletions.isEmpty()) {
            throw new IllegalArgumentException("reward function received no agent completions");
        }
        int k = agentCompletions.get(0).size();
        for (int i = 1; i < agentCompletions.size(); i++) {
            if (agentCompletions.get(i).size() != k) {
                throw new IllegalArgumentException("every agent must give the same number of completions; agent 0 gave "
                        + k + ", agent " + i + " gave " + agentCompletions.get(i).size());
            }
        }
        return k;
    }

    /** The item of joint response {@code j} of {@code k}: the only item, or the j-th of k items. */
    static TaskItem itemFor(List<TaskItem> batchItems, int j, int k) {
        if (batchItems == null || batchItems.isEmpty()) {
            throw new IllegalArgumentException("reward function needs the task item (batch_items is empty)");
        }
        if (batchItems.size() == 1) {
            return batchItems.get(0);
        }
        if (batchItems.size() == k) {
            return batchItems.get(j);
        }
        throw new IllegalArgumentException("expected 1 task item or one per joint response (" + k + "), got "
                + batchItems.size());
    }
}
