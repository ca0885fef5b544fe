package comlrl.utils;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The value of a per-agent config field ({@code temperature}, {@code top_p}, {@code top_k},
 * {@code max_new_tokens}): one value for every agent (the scalar form, {@code temperature: 0.6}) or
 * one value per agent (the list form, {@code temperature: [0.3, 0.9]}; entry i is agent i's). The
 * two forms stay apart so that a config writes back what it was given; a config checks the list's
 * length against {@code num_agents}. Immutable; entries may be null where the field allows null
 * ({@code top_k}).
 *
 * @param <T> the value's type
 */
public final class PerAgent<T> {
    private final T value;
    private final List<T> values;

    private PerAgent(T value, List<T> values) {
        this.value = value;
        this.values = values;
    }

    /** The scalar form: {@code value} for every agent. */
    public static <T> PerAgent<T> all(T value) {
        return new PerAgent<>(value, null);
    }

    /** The list form: {@code values.get(i)} for agent i (a copy; may hold nulls). */
    public static <T> PerAgent<T> each(List<? extends T> values) {
        Objects.requireNonNull(values, "per-agent values (give a list, one value per agent)");
        return new PerAgent<>(null, Collections.unmodifiableList(new ArrayList<>(values)));
    }

    /** Whether this is the list form. */
    public boolean isList() {
        return values != null;
    }

    /** The list form's entries, one per agent; empty for the scalar form. */
    public List<T> values() {
        return values == null ? List.of() : values;
    }

    /**
     * Agent {@code agent}'s value: the scalar, or entry {@code agent} of the list.
     *
     * @throws IndexOutOfBoundsException when the list has no such entry
     */
    public T get(int agent) {
        if (values == null) {
            return value;
        }
        if (agent < 0 || agent >= values.size()) {
            throw new IndexOutOfBoundsException("agent " + agent + " has no value in the per-agent list " + values
                    + " (" + values.size() + " entries, one per agent)");
        }
        return values.get(agent);
    }

    /** Whether every agent gets the same value (the scalar form, or a list of equal entries). */
    public boolean uniform() {
        return values == null || values.stream().allMatch(v -> Objects.equals(v, values.get(0)));
    }

    /**
     * The value every agent has.
     *
     * @param key the field's key, for the message
     * @throws IllegalStateException when the agents' values differ
     */
    public T common(String key) {
        if (!uniform()) {
            throw new IllegalStateException(key + " differs between agents (" + values + "): read agent i's value with "
                    + "the per-agent getter (e.g. temperature(i))");
        }
        return values == null || values.isEmpty() ? value : values.get(0);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PerAgent<?> p && Objects.equals(value, p.value) && Objects.equals(values, p.values);
    }

    @Override
    public int hashCode() {
        return Objects.hash(value, values);
    }

    /** The scalar, or the list, as a config file writes it. */
    @Override
    public String toString() {
        return String.valueOf(values == null ? value : values);
    }
}
