package comlrl.data;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The fields every row of a task set must hold for the code that reads it (the formatters' and the
 * reward's fields), each with the kind of value it must be and who reads it, so that bad data is
 * refused when it is loaded, naming the file, the row and the field, instead of being trained on.
 * Immutable; build it with {@link #none()} and {@link #and}.
 *
 * <pre>{@code
 * RequiredFields fields = RequiredFields.none()
 *         .and("prompt", RequiredFields.Kind.TEXT, "the default formatter")
 *         .and("target_min", RequiredFields.Kind.NUMBER, "reward length_ratio (target_min_field)");
 * tasks.requireRows(fields);   // a Dataset: every row; a stream: what it can read up front, then each row as read
 * }</pre>
 */
public final class RequiredFields {
    /** The kind of value a field must hold. A null or missing value never passes. */
    public enum Kind {
        /** A string (a prompt, a template's placeholder). */
        TEXT("a string") {
            @Override
            boolean accepts(Object value) {
                return value instanceof String;
            }
        },
        /** A number, or a string holding one (a CSV cell), as {@link TaskItem#getDouble} reads it. */
        NUMBER("a number") {
            @Override
            boolean accepts(Object value) {
                if (value instanceof Number) {
                    return true;
                }
                if (value instanceof String s) {
                    try {
                        Double.parseDouble(s.trim());
                        return true;
                    } catch (NumberFormatException e) {
                        return false;
                    }
                }
                return false;
            }
        };

        private final String description;

        Kind(String description) {
            this.description = description;
        }

        /** Whether {@code value} (not null) is of this kind. */
        abstract boolean accepts(Object value);

        /** "a string", "a number". */
        public String description() {
            return description;
        }
    }

    /**
     * One required field.
     *
     * @param name the field (column) name
     * @param kind the kind of value it must hold
     * @param reader who reads it, for messages: {@code formatters template "Q: {prompt}"}
     */
    public record Field(String name, Kind kind, String reader) {
        /** Checks that no part is null. */
        public Field {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(reader, "reader");
        }
    }

    private static final RequiredFields NONE = new RequiredFields(List.of());

    private final List<Field> fields;

    private RequiredFields(List<Field> fields) {
        this.fields = fields;
    }

    /** No field required: every row passes (a set still needs rows, see {@link TaskSet#requireRows}). */
    public static RequiredFields none() {
        return NONE;
    }

    /** These requirements and field {@code name} holding {@code kind}, read by {@code reader}. */
    public RequiredFields and(String name, Kind kind, String reader) {
        Field field = new Field(name, kind, reader);
        if (fields.contains(field)) {
            return this;
        }
        List<Field> more = new ArrayList<>(fields);
        more.add(field);
        return new RequiredFields(List.copyOf(more));
    }

    /** The required fields, in the order they were added (a field read by two readers appears twice). */
    public List<Field> fields() {
        return fields;
    }

    /** Whether nothing is required of the rows. */
    public boolean isEmpty() {
        return fields.isEmpty();
    }

    /**
     * The first requirement {@code row} breaks, as a message naming the field, its reader, what it
     * holds and the fix; null when the row holds every field.
     */
    String problem(Map<String, ?> row) {
        for (Field field : fields) {
            Object value = row.get(field.name());
            String found;
            if (!row.containsKey(field.name())) {
                found = "is missing (the row has " + row.keySet() + ")";
            } else if (value == null) {
                found = "is null or missing"; // a loaded set fills a field a row lacks with null
            } else if (!field.kind().accepts(value)) {
                found = "is " + describe(value) + ", not " + field.kind().description();
            } else {
                continue;
            }
            return "field '" + field.name() + "' (read by " + field.reader() + ") " + found + "; every row must hold "
                    + field.kind().description() + " in '" + field.name() + "': fix or remove the row";
        }
        return null;
    }

    /** The first required field that is not among {@code columns}, or null when all are. */
    Field firstMissing(Collection<String> columns) {
        for (Field field : fields) {
            if (!columns.contains(field.name())) {
                return field;
            }
        }
        return null;
    }

    /** A value for a message: its kind and a short rendering ({@code a number (42)}). */
    private static String describe(Object value) {
        String kind = value instanceof Number ? "a number" : value instanceof Boolean ? "a boolean"
                : value instanceof List<?> ? "a list" : value instanceof Map<?, ?> ? "an object"
                : value instanceof byte[] ? "binary" : value instanceof String ? "a string" : value.getClass().getSimpleName();
        String text = value instanceof byte[] bytes ? bytes.length + " bytes" : String.valueOf(value);
        if (text.length() > 40) {
            text = text.substring(0, 37) + "...";
        }
        return kind + " (" + (value instanceof String ? "\"" + text + "\"" : text) + ")";
    }

    @Override
    public String toString() {
        return "RequiredFields" + fields;
    }
}
