package comlrl.utils;

import comlrl.generation.GenerationSettings;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.DoublePredicate;
import java.util.function.Function;

/**
 * One config field, declared once: its snake_case key, its default, how a YAML/JSON value is read
 * (with {@link ConfigMaps}' type errors), the range rule checked when a config is built, and how the
 * value is written to {@code config.json}. A field may fall back to another field when unset
 * ({@code train_batch_size} → {@code rollout_buffer_size}).
 *
 * @param <T> the Java type of the value (boxed; null where the field is nullable)
 */
public final class ConfigField<T> {
    /** Reads a raw config value; {@code owner} and {@code key} name it in type errors. */
    @FunctionalInterface
    public interface Reader<T> {
        T read(String owner, String key, Object raw);
    }

    /** Returns null when {@code value} is valid, else the message ("rollout_buffer_size must be >= 1, got 0"). */
    @FunctionalInterface
    public interface Rule<T> {
        String problem(T value);
    }

    /**
     * What a string value names, so that a run config can resolve it against the config file's
     * directory: nothing, a model source (directory, hub id or built-in), a list of model sources,
     * or a directory.
     */
    public enum PathKind {
        NONE, MODEL, MODEL_LIST, DIRECTORY
    }

    public final String key;
    public final T defaultValue;
    private final Reader<T> reader;
    private final Rule<T> rule;
    private final Function<T, Object> writer;
    /** Whose value an unset (null) value of this field takes, or null. */
    public final ConfigField<T> fallback;
    /** The value's type as {@code docs/CONFIG.md} names it ("int", "float or null", "string", ...). */
    public final String type;
    /** The values the rule accepts, in words (">= 1", "in (0, 1]", "\"aligned\", \"cross\""). */
    public final String allowed;
    /** What a string value names, for path resolution in run configs. */
    public final PathKind path;
    /** What the field does, in one sentence ({@code config-keys}, {@code train --help}, {@code docs/CONFIG.md}). */
    public final String meaning;

    public ConfigField(String key, T defaultValue, Reader<T> reader, Rule<T> rule, Function<T, Object> writer,
                        ConfigField<T> fallback) {
        this(key, defaultValue, reader, rule, writer, fallback, "value", "", PathKind.NONE, "");
    }

    private ConfigField(String key, T defaultValue, Reader<T> reader, Rule<T> rule, Function<T, Object> writer,
                        ConfigField<T> fallback, String type, String allowed, PathKind path, String meaning) {
        this.key = key;
        this.defaultValue = defaultValue;
        this.reader = reader;
        this.rule = rule;
        this.writer = writer;
        this.fallback = fallback;
        this.type = type;
        this.allowed = allowed;
        this.path = path;
        this.meaning = meaning;
    }

    /** The same field with another default. */
    public ConfigField<T> withDefault(T otherDefault) {
        return new ConfigField<>(key, otherDefault, reader, rule, writer, fallback, type, allowed, path, meaning);
    }

    /** The same field, taking {@code other}'s value when unset. */
    public ConfigField<T> orElse(ConfigField<T> other) {
        return new ConfigField<>(key, defaultValue, reader, rule, writer, other, type, allowed, path, meaning);
    }

    /** The same field, documented as holding {@code type} values that {@code allowed} describes. */
    public ConfigField<T> described(String type, String allowed) {
        return new ConfigField<>(key, defaultValue, reader, rule, writer, fallback, type, allowed, path, meaning);
    }

    /** The same field, its string values naming {@code kind} (resolved against a run config's directory). */
    public ConfigField<T> naming(PathKind kind) {
        return new ConfigField<>(key, defaultValue, reader, rule, writer, fallback, type, allowed, kind, meaning);
    }

    /** The same field, doing what {@code meaning} says (one sentence, shown by {@code config-keys}). */
    public ConfigField<T> means(String meaning) {
        return new ConfigField<>(key, defaultValue, reader, rule, writer, fallback, type, allowed, path, meaning);
    }


    /** Reads a raw YAML/JSON value (type errors name {@code owner} and the key). */
    public T read(String owner, Object raw) {
        return reader.read(owner, key, raw);
    }

    /** What is wrong with {@code value} ("rollout_buffer_size must be >= 1, got 0"), or null when it is valid. */
    public String problem(Object value) {
        return rule.problem(cast(value));
    }

    /** The value as written to {@code config.json} (enums as their config strings). */
    public Object write(Object value) {
        return value == null ? null : writer.apply(cast(value));
    }

    @SuppressWarnings("unchecked")
    public T cast(Object value) {
        return (T) value;
    }

    @Override
    public String toString() {
        return key;
    }

    // ------------------------------------------------------------------ kinds of field

    /** An int ≥ {@code min}; {@code note} follows the "got" part of the message. */
    public static ConfigField<Integer> atLeast(String key, int defaultValue, int min, String note) {
        return new ConfigField<>(key, defaultValue, ConfigMaps::toInt,
                v -> v >= min ? null : key + " must be >= " + min + ", got " + v + note, v -> v, null)
                .described("int", ">= " + min + note);
    }

    /** An int ≥ {@code min}, or null; {@code note} says what null means. */
    public static ConfigField<Integer> nullableAtLeast(String key, Integer defaultValue, int min, String note) {
        return new ConfigField<>(key, defaultValue, ConfigMaps::toNullableInt,
                v -> v == null || v >= min ? null : key + " must be >= " + min + ", got " + v + note, v -> v, null)
                .described("int or null", ">= " + min + note);
    }

    /** A double satisfying {@code ok} (which decides on NaN and infinities), described by {@code range}. */
    public static ConfigField<Double> number(String key, double defaultValue, DoublePredicate ok, String range) {
        return new ConfigField<>(key, defaultValue, ConfigMaps::toDouble,
                v -> ok.test(v) ? null : key + " must be " + range + ", got " + v, v -> v, null)
                .described("float", range);
    }

    /** A double satisfying {@code ok}, or null; {@code range} says what null means. */
    public static ConfigField<Double> nullableNumber(String key, Double defaultValue, DoublePredicate ok, String range) {
        return new ConfigField<>(key, defaultValue, ConfigMaps::toNullableDouble,
                v -> v == null || ok.test(v) ? null : key + " must be " + range + ", got " + v, v -> v, null)
                .described("float or null", range);
    }

    public static ConfigField<Boolean> flag(String key, boolean defaultValue) {
        return new ConfigField<>(key, defaultValue, ConfigMaps::toBoolean, v -> null, v -> v, null)
                .described("bool", "true or false");
    }

    public static ConfigField<Long> integer64(String key, long defaultValue) {
        return new ConfigField<>(key, defaultValue, ConfigMaps::toLong, v -> null, v -> v, null)
                .described("int", "any 64-bit integer");
    }

    /**
     * An enum read from its config string by {@code parse} (which also decides what a null-like
     * value means) and written back as {@code name}.
     */
    public static <E extends Enum<E>> ConfigField<E> choice(String key, E defaultValue, Function<String, E> parse,
                                                     Function<E, String> name) {
        Reader<E> reader = (owner, k, raw) -> parse.apply(ConfigMaps.isNullLike(raw) ? null
                : ConfigMaps.toStr(owner, k, raw));
        List<String> names = new java.util.ArrayList<>();
        for (E constant : defaultValue.getDeclaringClass().getEnumConstants()) {
            names.add("\"" + name.apply(constant) + "\"");
        }
        return new ConfigField<>(key, Objects.requireNonNull(defaultValue), reader,
                v -> v == null ? key + " must be set" : null, name::apply, null)
                .described("string", String.join(", ", names));
    }

    /**
     * A per-agent field built on {@code scalar}: a value of {@code scalar}'s kind for every agent, or
     * a list of them, one per agent ({@link PerAgent}); each entry follows {@code scalar}'s reading
     * and rule, and is written as {@code scalar} writes it (the list form as a list). The config
     * checks the list's length against {@code num_agents} ({@link FieldTableConfig}).
     */
    public static <T> ConfigField<PerAgent<T>> perAgent(ConfigField<T> scalar) {
        String key = scalar.key;
        Reader<PerAgent<T>> reader = (owner, k, raw) -> {
            if (raw instanceof List<?> list) {
                List<T> read = new java.util.ArrayList<>();
                for (int i = 0; i < list.size(); i++) {
                    read.add(scalar.reader.read(owner, k + "[" + i + "]", list.get(i)));
                }
                return PerAgent.each(read);
            }
            return PerAgent.all(scalar.reader.read(owner, k, raw));
        };
        Rule<PerAgent<T>> rule = v -> {
            if (v == null) {
                return key + " must be set";
            }
            if (!v.isList()) {
                return scalar.rule.problem(v.get(0));
            }
            if (v.values().isEmpty()) {
                return key + " must not be an empty list; give one value for every agent, or a list with one per agent";
            }
            for (int i = 0; i < v.values().size(); i++) {
                String problem = scalar.rule.problem(v.values().get(i));
                if (problem != null) {
                    return problem + " (agent " + i + "'s entry of " + v + ")";
                }
            }
            return null;
        };
        Function<PerAgent<T>, Object> writer = v -> {
            if (!v.isList()) {
                return scalar.write(v.get(0));
            }
            List<Object> out = new java.util.ArrayList<>();
            v.values().forEach(e -> out.add(scalar.write(e)));
            return Collections.unmodifiableList(out);
        };
        return new ConfigField<>(key, PerAgent.all(scalar.defaultValue), reader, rule, writer, null,
                scalar.type + ", or a list of them (one per agent)", scalar.allowed, PathKind.NONE, scalar.meaning);
    }

    /**
     * A device spec: null (automatic), one device (stored as a one-element list) or a list of
     * devices; entries must be non-blank.
     */
    public static ConfigField<List<String>> devices(String key) {
        return new ConfigField<>(key, null, ConfigMaps::toNullableStringList, v -> deviceProblem(key, v), v -> v, null)
                .described("string, list of strings or null", "device names such as \"cuda:0\" or \"cpu\" (one for "
                        + "all, or one per model); null = automatic");
    }

    private static String deviceProblem(String key, List<String> devices) {
        if (devices == null) {
            return null;
        }
        if (devices.isEmpty()) {
            return key + " must not be an empty list; leave it unset (null) for automatic placement";
        }
        for (String device : devices) {
            if (device == null || device.isBlank()) {
                return key + " entries must be device names such as \"cuda:0\" or \"cpu\", got " + devices;
            }
        }
        return null;
    }

    /** A mapping with string keys (empty when unset); {@code rule} checks the whole mapping. */
    public static ConfigField<Map<String, Object>> mapping(String key, String example, Rule<Map<String, Object>> rule) {
        Reader<Map<String, Object>> reader = (owner, k, raw) -> {
            if (ConfigMaps.isNullLike(raw)) {
                return Map.of();
            }
            if (raw instanceof Map<?, ?> m) {
                return Collections.unmodifiableMap(ConfigMaps.stringKeys(owner + " " + k, m));
            }
            throw new IllegalArgumentException(owner + " key '" + k + "' must be a mapping " + example + ", got " + raw);
        };
        return new ConfigField<>(key, Map.of(), reader, rule, v -> Collections.unmodifiableMap(new LinkedHashMap<>(v)),
                null).described("mapping", "a mapping " + example);
    }

    /**
     * {@code generation_kwargs}: further settings of the generate call (empty when unset), keys that
     * {@link GenerationSettings} knows, but not {@code temperature}, {@code top_p} or {@code top_k},
     * which are config fields of their own.
     */
    public static ConfigField<Map<String, Object>> generationKwargs() {
        return mapping("generation_kwargs", "of generate settings (e.g. {repetition_penalty: 1.05})",
                ConfigField::generationKwargsProblem);
    }

    private static String generationKwargsProblem(Map<String, Object> kwargs) {
        try {
            GenerationSettings.requireKnown("generation_kwargs", kwargs.keySet());
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        for (String key : List.of("temperature", "top_p", "top_k", "stop_strings")) {
            if (kwargs.containsKey(key)) {
                return "generation_kwargs must not set " + key + ": it is a config field of its own (" + key + ": ...)";
            }
        }
        return null;
    }
}
