package comlrl.utils;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Reads an enum from its config string: each constant has a config name and, optionally, aliases;
 * the message for an unknown string lists them all.
 */
public final class ConfigNames {
    private ConfigNames() {
    }

    /**
     * The constant of {@code values} whose config name is {@code value} (case and surrounding blanks
     * ignored), or {@code unset} when {@code value} is null.
     *
     * @param note follows the message, e.g. what the values mean
     * @throws IllegalArgumentException "{@code field} must be one of: a, b, c (got "x")" + note
     */
    public static <E extends Enum<E>> E parse(String field, String value, E unset, E[] values, Function<E, String> name,
            String note) {
        return parse(field, value, unset, values, name, e -> List.of(), note);
    }

    /**
     * As {@link #parse(String, String, Enum, Enum[], Function, String)}, also accepting each
     * constant's {@code aliases}; the message lists them: "a (or x, y), b".
     */
    public static <E extends Enum<E>> E parse(String field, String value, E unset, E[] values, Function<E, String> name,
            Function<E, List<String>> aliases, String note) {
        if (value == null) {
            return unset;
        }
        String key = value.trim().toLowerCase(Locale.ROOT);
        for (E constant : values) {
            if (name.apply(constant).equals(key) || aliases.apply(constant).contains(key)) {
                return constant;
            }
        }
        throw new IllegalArgumentException(field + " must be one of: " + Arrays.stream(values)
                .map(e -> aliases.apply(e).isEmpty() ? name.apply(e)
                        : name.apply(e) + " (or " + String.join(", ", aliases.apply(e)) + ")")
                .collect(Collectors.joining(", ")) + " (got \"" + value + "\")" + note);
    }
}
