package comlrl.sandbox;

import java.util.Locale;

/** What happened to one execution; {@link #key()} is the name in the JSON verdict. */
public enum Status {
    /** The program ran to its end; its tests (if any) ran, {@code tests_passed} of {@code tests_total} passed. */
    OK,
    /** The program (or the tests file, message prefixed {@code tests:}) does not parse. */
    SYNTAX_ERROR,
    /** The program raised an exception (the message names the line), or ended the interpreter before its tests ran. */
    RUNTIME_ERROR,
    /** The wall-time or CPU-time limit was reached; the process group was killed. */
    TIMEOUT,
    /** An allocation failed under the memory (address-space) limit. */
    MEMORY_LIMIT,
    /** The program wrote more than the output limit (stdout and stderr together); it was killed. */
    OUTPUT_LIMIT,
    /** The interpreter died from a signal it did not choose to handle (the message names it). */
    KILLED;

    /** The JSON name: {@code ok}, {@code syntax_error}, {@code runtime_error}, ... */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The status of a JSON name ({@link #key()}). */
    public static Status fromKey(String key) {
        for (Status s : values()) {
            if (s.key().equals(key)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown sandbox status '" + key + "'");
    }
}
