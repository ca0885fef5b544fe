package comlrl.env;

import comlrl.utils.ConfigMaps;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code environment:} section of a run config. {@code environment: {type: writing, task: tldr}}
 * stands for the dataset, formatters, reward and agent count of that environment
 * ({@link WritingEnvironment}; {@code {type: code, dataset: humaneval}}, {@link CodeEnvironment}); each of {@code dataset}, {@code formatters}, {@code reward},
 * {@code num_agents} and {@code args} field that the config gives itself is kept (a {@code dataset} without a
 * source of its own, or a {@code reward} without a type, is completed field by field), so an offline run
 * names its own task set:
 * <pre>{@code
 * environment: {type: writing, task: tldr}
 * dataset: {train: builtin:writing-tldr, test_size: 0.25}   # instead of the hub's trl-lib/tldr
 * }</pre>
 */
public final class Environments {
    /** The environment types. */
    public static final List<String> TYPES = List.of("writing", "code");

    private Environments() {}

    /**
     * The evaluation metrics of {@code config}'s environment, or null when it has none or no
     * environment: for writing the levels of {@link comlrl.reward.WritingReward}; for code those of the
     * run's {@code reward} when it is a {@link comlrl.reward.CodeReward} or {@link comlrl.reward.CoderTesterReward}
     * (pass@k among them, k from the environment's {@code pass_at}). Read after {@link #expand}.
     */
    public static comlrl.trainers.EvalLogger evalLogger(Map<String, Object> config, comlrl.reward.RewardFunction reward) {
        if (!(config.get("environment") instanceof Map<?, ?> env) || !(env.get("type") instanceof String type)) {
            return null;
        }
        return switch (type.trim().toLowerCase(Locale.ROOT)) {
            case "writing" -> env.get("task") == null ? null : WritingEnvironment.evalLogger(String.valueOf(env.get("task")));
            case "code" -> reward instanceof comlrl.reward.CodeReward code
                    ? CodeEnvironment.evalLogger(code, CodeEnvironment.passAt(env))
                    : reward instanceof comlrl.reward.CoderTesterReward pair
                    ? CodeEnvironment.evalLogger(pair, CodeEnvironment.passAt(env)) : null;
            default -> null;
        };
    }

    /**
     * Fills {@code config}'s missing {@code dataset}, {@code formatters}, {@code reward},
     * {@code num_agents} and {@code args} fields (such as {@code num_turns}) from its {@code environment} section (in place); a config without one is
     * unchanged.
     *
     * @throws IllegalArgumentException naming the key when the section is malformed
     */
    @SuppressWarnings("unchecked")
    public static void expand(Map<String, Object> config) {
        Object section = config.get("environment");
        if (section == null) {
            return;
        }
        if (!(section instanceof String || section instanceof Map<?, ?>)) {
            throw new IllegalArgumentException("environment must be a mapping such as {type: writing, task: tldr}, got "
                    + section);
        }
        Map<String, Object> env = section instanceof String s ? Map.of("type", s)
                : new LinkedHashMap<>(ConfigMaps.stringKeys("environment", (Map<?, ?>) section));
        Object type = env.get("type");
        if (!(type instanceof String name) || name.isBlank()) {
            throw new IllegalArgumentException("environment needs a 'type': one of " + TYPES + ", e.g. environment: "
                    + "{type: writing, task: tldr}");
        }
        Map<String, Object> defaults = switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "writing" -> WritingEnvironment.defaults(env);
            case "code" -> CodeEnvironment.defaults(env);
            default -> throw new IllegalArgumentException("environment: unknown type '" + name + "'; did you mean '"
                    + ConfigMaps.closest(name, new java.util.TreeSet<>(TYPES)) + "'? Types: " + TYPES);
        };
        defaults.forEach((key, value) -> {
            if (value instanceof Map<?, ?> envSection && config.get(key) instanceof Map<?, ?> given && completes(key, given)) {
                Map<String, Object> merged = new LinkedHashMap<>(ConfigMaps.stringKeys(key, given));
                ((Map<String, Object>) envSection).forEach(merged::putIfAbsent); // the config's own fields win
                config.put(key, merged);
            } else {
                config.putIfAbsent(key, value);
            }
        });
    }

    /**
     * Whether the config's own {@code given} section of {@code key} is completed field by field from the
     * environment's: {@code args} always; {@code dataset} when it names no source of its own (no
     * {@code train}, {@code hub} or {@code from_disk}, e.g. only {@code test_size}); {@code reward} when it
     * names no other type. Otherwise the config's section replaces the environment's whole.
     */
    private static boolean completes(String key, Map<?, ?> given) {
        return switch (key) {
            case "args" -> true;
            case "dataset" -> !given.containsKey("train") && !given.containsKey("hub") && !given.containsKey("from_disk");
            case "reward" -> given.get("type") == null;
            default -> false;
        };
    }
}
