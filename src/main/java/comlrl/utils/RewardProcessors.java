package comlrl.utils;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.DoubleUnaryOperator;

/**
 * The built-in reward processors of Python's {@code RewardProcessors} (reference §2.4), as factories,
 * with the same defaults. Compose them with {@link RewardProcessor#andThen(RewardProcessor)}.
 * NaN rewards stay NaN through every processor (the reference's {@code clamp} turned NaN into
 * {@code max_val}).
 */
public final class RewardProcessors {
    private RewardProcessors() {}

    /** r ↦ r. */
    public static RewardProcessor identity() {
        return named("identity()", r -> r);
    }

    /** {@link #clamp(double, double)} with the defaults min = −10, max = 10. */
    public static RewardProcessor clamp() {
        return clamp(-10.0, 10.0);
    }

    /** r ↦ max(min, min(max, r)); requires min ≤ max. */
    public static RewardProcessor clamp(double min, double max) {
        if (!(min <= max)) {
            throw new IllegalArgumentException("clamp needs min_val <= max_val, got min_val=" + min + ", max_val=" + max);
        }
        return named("clamp(min_val=" + min + ", max_val=" + max + ")", r -> Math.max(min, Math.min(max, r)));
    }

    /** {@link #scale(double)} with the default factor 1.0 (identity). */
    public static RewardProcessor scale() {
        return scale(1.0);
    }

    /** r ↦ r · factor. */
    public static RewardProcessor scale(double factor) {
        return named("scale(factor=" + factor + ")", r -> r * factor);
    }

    /** r ↦ σ(r) = 1 / (1 + e^{−r}) (computed as e^r / (1 + e^r) for r &lt; 0 to avoid overflow). */
    public static RewardProcessor sigmoidScale() {
        return named("sigmoid_scale()", r -> r >= 0 ? 1.0 / (1.0 + Math.exp(-r)) : Math.exp(r) / (1.0 + Math.exp(r)));
    }

    /** {@link #normalizeByLength(int)} with the default max_len = 1000. */
    public static RewardProcessor normalizeByLength() {
        return normalizeByLength(1000);
    }

    /**
     * With a text length L: r ↦ r · min(1, L / maxLen); without one, r ↦ r.
     *
     * <p>Reference bug (§14 item 16): Python's processor takes a {@code text_length} keyword that no
     * trainer passes, so it is the identity in practice. Here trainers call
     * {@link RewardProcessor#applyWithLength(double, int)} with the joint completion's length in code
     * points (summed over agents) wherever they know it, so the processor does what it says.
     */
    public static RewardProcessor normalizeByLength(int maxLen) {
        if (maxLen <= 0) {
            throw new IllegalArgumentException("normalize_by_length needs max_len > 0, got " + maxLen);
        }
        return new RewardProcessor() {
            @Override
            public double apply(double reward) {
                return reward;
            }

            @Override
            public double applyWithLength(double reward, int textLength) {
                if (textLength < 0) {
                    throw new IllegalArgumentException("text length cannot be negative: " + textLength);
                }
                return reward * Math.min(1.0, (double) textLength / maxLen);
            }

            @Override
            public String toString() {
                return "normalize_by_length(max_len=" + maxLen + ")";
            }
        };
    }

    /** {@link #exponentialScale(double)} with the default factor 1.0. */
    public static RewardProcessor exponentialScale() {
        return exponentialScale(1.0);
    }

    /** r ↦ e^{factor·r} − 1 if r &gt; 0, else −e^{−factor·r} + 1 (odd, sign-preserving). */
    public static RewardProcessor exponentialScale(double factor) {
        return named("exponential_scale(factor=" + factor + ")",
                r -> r > 0 ? Math.exp(factor * r) - 1.0 : -Math.exp(-factor * r) + 1.0);
    }

    /** {@code first}, then {@code second}; both see the text length when one is given. */
    public static RewardProcessor chain(RewardProcessor first, RewardProcessor second) {
        Objects.requireNonNull(first, "first");
        Objects.requireNonNull(second, "second");
        return new RewardProcessor() {
            @Override
            public double apply(double reward) {
                return second.apply(first.apply(reward));
            }

            @Override
            public double applyWithLength(double reward, int textLength) {
                return second.applyWithLength(first.applyWithLength(reward, textLength), textLength);
            }

            @Override
            public String toString() {
                return first + ".andThen(" + second + ")";
            }
        };
    }

    private static final Map<String, Set<String>> PARAMETERS = Map.of(
            "identity", Set.of(),
            "clamp", Set.of("min_val", "max_val"),
            "scale", Set.of("factor"),
            "sigmoid_scale", Set.of(),
            "normalize_by_length", Set.of("max_len"),
            "exponential_scale", Set.of("factor"));

    /**
     * A processor from a config-file value: null → identity; a name ({@code "sigmoid_scale"}); a map
     * {@code {type: scale, factor: 10.0}} with the Python parameter names ({@code min_val},
     * {@code max_val}, {@code factor}, {@code max_len}); or a list of those, applied in order.
     */
    public static RewardProcessor fromConfig(Object spec) {
        if (ConfigMaps.isNullLike(spec)) {
            return identity();
        }
        if (spec instanceof List<?> list) {
            RewardProcessor result = null;
            for (Object element : list) {
                RewardProcessor next = fromConfig(element);
                result = result == null ? next : result.andThen(next);
            }
            return result == null ? identity() : result;
        }
        Map<String, Object> params;
        String type;
        if (spec instanceof String name) {
            type = name;
            params = Map.of();
        } else if (spec instanceof Map<?, ?> map) {
            params = ConfigMaps.stringKeys("reward_processor", map);
            Object typeValue = params.get("type");
            if (!(typeValue instanceof String s)) {
                throw new IllegalArgumentException("reward_processor needs a 'type' (one of " + new java.util.TreeSet<>(PARAMETERS.keySet())
                        + "), got " + map);
            }
            type = s;
        } else {
            throw new IllegalArgumentException("reward_processor must be a name, a map with 'type', or a list of those; got "
                    + spec + " (" + spec.getClass().getSimpleName() + ")");
        }
        String key = type.trim().toLowerCase(Locale.ROOT);
        Set<String> allowed = PARAMETERS.get(key);
        if (allowed == null) {
            throw new IllegalArgumentException("Unknown reward_processor type '" + type + "'; did you mean '"
                    + ConfigMaps.closest(key, PARAMETERS.keySet()) + "'? Valid types: "
                    + new java.util.TreeSet<>(PARAMETERS.keySet()));
        }
        List<String> valid = new ArrayList<>(allowed);
        valid.add("type");
        String owner = "reward_processor " + key;
        ConfigMaps.requireKnownKeys(owner, params, valid, Map.of());
        switch (key) {
            case "identity":
                return identity();
            case "clamp":
                return clamp(ConfigMaps.toDouble(owner, "min_val", params.getOrDefault("min_val", -10.0)),
                        ConfigMaps.toDouble(owner, "max_val", params.getOrDefault("max_val", 10.0)));
            case "scale":
                return scale(ConfigMaps.toDouble(owner, "factor", params.getOrDefault("factor", 1.0)));
            case "sigmoid_scale":
                return sigmoidScale();
            case "normalize_by_length":
                return normalizeByLength(ConfigMaps.toInt(owner, "max_len", params.getOrDefault("max_len", 1000)));
            case "exponential_scale":
                return exponentialScale(ConfigMaps.toDouble(owner, "factor", params.getOrDefault("factor", 1.0)));
            default:
                throw new AssertionError(key);
        }
    }

    private static RewardProcessor named(String description, DoubleUnaryOperator op) {
        return new RewardProcessor() {
            @Override
            public double apply(double reward) {
                return op.applyAsDouble(reward);
            }

            @Override
            public String toString() {
                return description;
            }
        };
    }
}
