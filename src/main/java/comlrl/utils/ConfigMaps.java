package comlrl.utils;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reading snake_case config maps (parsed YAML/JSON, or {@code --set key=value} strings) into typed
 * values, with messages that name the config, the key and the offending value. Used by every
 * {@code fromMap}. Numbers may arrive as any {@link Number} or as a numeric string (YAML 1.1 reads
 * {@code 5e-6} as a string); booleans as {@link Boolean} or "true"/"false"; a null value, or the
 * strings "null", "none" and "~" (any case), mean "unset" for nullable fields.
 */
public final class ConfigMaps {
    private ConfigMaps() {}

    /** Whether {@code value} means "unset": null, or the string "null", "none" or "~" (any case). */
    public static boolean isNullLike(Object value) {
        if (value == null) {
            return true;
        }
        if (value instanceof String s) {
            String t = s.trim().toLowerCase(Locale.ROOT);
            return t.equals("null") || t.equals("none") || t.equals("~");
        }
        return false;
    }

    /** A copy of {@code map} with string keys, in order; fails on a non-string key. */
    public static Map<String, Object> stringKeys(String owner, Map<?, ?> map) {
        Map<String, Object> copy = new LinkedHashMap<>();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key)) {
                throw new IllegalArgumentException(owner + " keys must be strings, got " + entry.getKey());
            }
            copy.put(key, entry.getValue());
        }
        return copy;
    }

    /**
     * Fails on the first key of {@code map} that is not in {@code validKeys}, naming it and
     * suggesting the closest valid key (or the hint given for that key in {@code hints}, e.g. a
     * renamed field), and listing the valid keys.
     */
    public static void requireKnownKeys(String owner, Map<String, ?> map, Collection<String> validKeys,
                                        Map<String, String> hints) {
        for (String key : map.keySet()) {
            if (validKeys.contains(key)) {
                continue;
            }
            List<String> sorted = new ArrayList<>(validKeys);
            Collections.sort(sorted);
            String hint = hints.get(key);
            String advice = hint != null ? ": " + hint : "; did you mean '" + closest(key, validKeys) + "'?";
            throw new IllegalArgumentException("Unknown " + owner + " key '" + key + "'" + advice
                    + " Valid keys: " + String.join(", ", sorted));
        }
    }

    /**
     * The candidate closest to {@code key}: smallest Levenshtein distance (case-insensitive, with '-'
     * read as '_'), ties broken by containing {@code key} (or being contained in it), then
     * alphabetically.
     */
    public static String closest(String key, Collection<String> candidates) {
        String normalized = key.toLowerCase(Locale.ROOT).replace('-', '_');
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        boolean bestContains = false;
        for (String candidate : candidates) {
            int distance = levenshtein(normalized, candidate.toLowerCase(Locale.ROOT));
            boolean contains = candidate.contains(normalized) || normalized.contains(candidate);
            boolean better = distance < bestDistance
                    || (distance == bestDistance && contains && !bestContains)
                    || (distance == bestDistance && contains == bestContains && best != null && candidate.compareTo(best) < 0);
            if (best == null || better) {
                best = candidate;
                bestDistance = distance;
                bestContains = contains;
            }
        }
        return best;
    }

    /** The Levenshtein edit distance (insertions, deletions, substitutions) between {@code a} and {@code b}. */
    public static int levenshtein(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /** An integer value; accepts integral numbers and integer strings. */
    public static int toInt(String owner, String key, Object value) {
        long v = toLong(owner, key, value);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw typeError(owner, key, "an integer in the int range", value);
        }
        return (int) v;
    }

    /** An integer, or null when {@link #isNullLike(Object) null-like}. */
    public static Integer toNullableInt(String owner, String key, Object value) {
        return isNullLike(value) ? null : toInt(owner, key, value);
    }

    /** A long value; accepts integral numbers and integer strings. */
    public static long toLong(String owner, String key, Object value) {
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof BigInteger big) {
            try {
                return big.longValueExact();
            } catch (ArithmeticException e) {
                throw typeError(owner, key, "an integer", value);
            }
        }
        if (value instanceof Number number) {
            double d = number.doubleValue();
            if (d == Math.rint(d) && Math.abs(d) < 9.0e15) {
                return (long) d;
            }
            throw typeError(owner, key, "an integer", value);
        }
        if (value instanceof String s) {
            try {
                return new BigDecimal(s.trim()).longValueExact();
            } catch (NumberFormatException | ArithmeticException e) {
                throw typeError(owner, key, "an integer", value);
            }
        }
        throw typeError(owner, key, "an integer", value);
    }

    /** A double value; accepts numbers and numeric strings ("5e-6", "NaN" and "Infinity" included). */
    public static double toDouble(String owner, String key, Object value) {
        if (value instanceof Number number) {
            return number.doubleValue();
        }
        if (value instanceof String s) {
            String t = s.trim();
            String lower = t.toLowerCase(Locale.ROOT);
            if (lower.equals(".inf") || lower.equals("+.inf") || lower.equals("inf")) {
                return Double.POSITIVE_INFINITY;
            }
            if (lower.equals("-.inf") || lower.equals("-inf")) {
                return Double.NEGATIVE_INFINITY;
            }
            if (lower.equals(".nan") || lower.equals("nan")) {
                return Double.NaN;
            }
            try {
                return Double.parseDouble(t);
            } catch (NumberFormatException e) {
                throw typeError(owner, key, "a number", value);
            }
        }
        throw typeError(owner, key, "a number", value);
    }

    /** A double, or null when {@link #isNullLike(Object) null-like}. */
    public static Double toNullableDouble(String owner, String key, Object value) {
        return isNullLike(value) ? null : toDouble(owner, key, value);
    }

    /** A boolean; accepts {@link Boolean} and the strings "true"/"false" (any case). */
    public static boolean toBoolean(String owner, String key, Object value) {
        if (value instanceof Boolean b) {
            return b;
        }
        if (value instanceof String s) {
            String t = s.trim().toLowerCase(Locale.ROOT);
            if (t.equals("true")) {
                return true;
            }
            if (t.equals("false")) {
                return false;
            }
        }
        throw typeError(owner, key, "true or false", value);
    }

    /** A string; numbers and booleans are not converted (a likely mistake in a string field). */
    public static String toStr(String owner, String key, Object value) {
        if (value instanceof String s) {
            return s;
        }
        throw typeError(owner, key, "a string", value);
    }

    /**
     * A list of strings from a single string (a one-element list) or a list of strings; null when
     * {@link #isNullLike(Object) null-like}.
     */
    public static List<String> toNullableStringList(String owner, String key, Object value) {
        return stringList(owner, key, value, false);
    }

    /**
     * A command line (program and arguments) from a single string (a one-element list) or a list of
     * scalars; null when {@link #isNullLike(Object) null-like}. Numbers and booleans are arguments
     * too and become their text: {@code [python3, reward.py, 3]} gives {@code "3"} (a number is
     * written as {@link String#valueOf}: {@code 1.50} read by YAML as a double gives "1.5"; pass the
     * original text, as the run-config reader does, to keep it). A null, list or map element fails,
     * naming its index.
     */
    public static List<String> toNullableArgumentList(String owner, String key, Object value) {
        return stringList(owner, key, value, true);
    }

    private static List<String> stringList(String owner, String key, Object value, boolean scalarsAsText) {
        if (isNullLike(value)) {
            return null;
        }
        if (value instanceof String s) {
            return List.of(s);
        }
        if (!(value instanceof Collection<?> collection)) {
            throw typeError(owner, key, scalarsAsText ? "a string or a list of program arguments"
                    : "a string or a list of strings", value);
        }
        List<String> result = new ArrayList<>(collection.size());
        for (Object element : collection) {
            if (element instanceof String s) {
                result.add(s);
            } else if (scalarsAsText && (element instanceof Number || element instanceof Boolean)) {
                result.add(String.valueOf(element));
            } else {
                throw elementError(owner, key, scalarsAsText
                        ? "a program and its arguments (strings; numbers and booleans are taken as text)"
                        : "a string or a list of strings", result.size(), element);
            }
        }
        return List.copyOf(result);
    }

    private static IllegalArgumentException elementError(String owner, String key, String expected, int index,
                                                         Object element) {
        return new IllegalArgumentException(owner + " key '" + key + "' must be " + expected + "; element " + index
                + " is " + describe(element));
    }

    private static String describe(Object value) {
        String shown = value instanceof String ? "\"" + value + "\"" : String.valueOf(value);
        String type = value == null ? "null" : value.getClass().getSimpleName();
        return shown + " (" + type + ")";
    }

    private static IllegalArgumentException typeError(String owner, String key, String expected, Object value) {
        return new IllegalArgumentException(owner + " key '" + key + "' must be " + expected + ", got " + describe(value));
    }
}
