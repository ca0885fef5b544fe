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
    private static final Set<String> TYPES = Set.of("length_ratio", "command");

    private RewardFunctions() {}

    /**
     * A built-in reward from a config-file map:
     * <ul>
     *   <li>{@code {type: length_ratio, target_min_field: target_min, target_max_field: target_max}}
     *       → {@link LengthRatioReward} (both fields optional);</li>
     *   <li>{@code {type: command, run: [python3, reward.py], working_dir: ., timeout_s: 60}} →
     *       {@link ExternalCommandReward}; see {@link JsonLinesProcess.CommandConfig#fromMap} (the
     *       program and a script argument must exist: checked here, before any process starts).</li>
     * </ul>
     * The result may be {@link AutoCloseable} (the command reward): close it when training ends.
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
            default:
                throw new IllegalArgumentException("Unknown reward type '" + typeName + "'; did you mean '"
                        + ConfigMaps.closest(type, TYPES) + "'? Valid types: " + new TreeSet<>(TYPES));
        }
    }

    /**
     * The task-item fields the reward of {@code spec} (a map {@link #fromConfig} accepts) reads, so a
     * config can be checked against its dataset before training: for {@code length_ratio} its
     * {@code target_min_field} and {@code target_max_field}; none for a {@code command} reward
     * (what the program reads is unknown).
     */
    public static List<String> requiredFields(Map<String, ?> spec) {
        Object type = spec.get("type");
        if (type instanceof String t && t.trim().toLowerCase(Locale.ROOT).equals("length_ratio")) {
            Object min = spec.get("target_min_field");
            Object max = spec.get("target_max_field");
            return List.of(min == null ? "target_min" : String.valueOf(min), max == null ? "target_max" : String.valueOf(max));
        }
        return List.of();
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
