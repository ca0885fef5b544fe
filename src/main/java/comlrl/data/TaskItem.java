package comlrl.data;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One task item: a row of a task set, an immutable map from field name to value.
 *
 * <p>The default formatter reads {@code prompt}; every other field (targets, tests, labels) is
 * passed untouched to reward functions as {@code batch_items}. Values are what the loader produced:
 * {@link String}, {@link Number}, {@link Boolean}, {@link java.util.List}, {@link Map} or null.
 */
public final class TaskItem {
    private final Map<String, Object> fields;

    private TaskItem(Map<String, Object> fields) {
        this.fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
    }

    /** A task item holding a copy of {@code fields} (insertion order kept). */
    public static TaskItem of(Map<String, ?> fields) {
        Objects.requireNonNull(fields, "fields");
        @SuppressWarnings("unchecked")
        Map<String, Object> copy = (Map<String, Object>) fields;
        return new TaskItem(copy);
    }

    /** The raw value of {@code field}, or null when absent. */
    public Object get(String field) {
        return fields.get(field);
    }

    public boolean has(String field) {
        return fields.containsKey(field);
    }

    /** The field as a string; numbers and booleans are converted; fails when absent. */
    public String getString(String field) {
        Object v = require(field);
        return v == null ? null : v.toString();
    }

    /** The field as a string, or {@code fallback} when absent or null. */
    public String getString(String field, String fallback) {
        Object v = fields.get(field);
        return v == null ? fallback : v.toString();
    }

    /** The field as a double; strings holding numbers are parsed; fails when absent. */
    public double getDouble(String field) {
        Object v = require(field);
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        if (v instanceof String s) {
            try {
                return Double.parseDouble(s.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "Task item field '" + field + "' is not a number: \"" + s + "\"", e);
            }
        }
        throw new IllegalArgumentException("Task item field '" + field + "' is not a number: " + v);
    }

    /** The field as a long; fails when absent or not integral. */
    public long getLong(String field) {
        double d = getDouble(field);
        if (d != Math.rint(d)) {
            throw new IllegalArgumentException("Task item field '" + field + "' is not an integer: " + d);
        }
        return (long) d;
    }

    /** An unmodifiable view of all fields, in order. */
    public Map<String, Object> asMap() {
        return fields;
    }

    /** A copy of this item with {@code field} set to {@code value}. */
    public TaskItem with(String field, Object value) {
        Map<String, Object> copy = new LinkedHashMap<>(fields);
        copy.put(field, value);
        return new TaskItem(copy);
    }

    private Object require(String field) {
        if (!fields.containsKey(field)) {
            throw new IllegalArgumentException(
                    "Task item has no field '" + field + "'; fields present: " + fields.keySet());
        }
        return fields.get(field);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TaskItem t && t.fields.equals(fields);
    }

    @Override
    public int hashCode() {
        return fields.hashCode();
    }

    @Override
    public String toString() {
        return fields.toString();
    }
}
