package comlrl.sandbox;

import java.util.Objects;

/**
 * One execution request: a program and the assert statements run after it (empty for none).
 *
 * @param code  the program source
 * @param tests top-level statements run after the program in its namespace; each {@code assert} is one test
 */
public record Job(String code, String tests) {
    public Job {
        Objects.requireNonNull(code, "code");
        tests = tests == null ? "" : tests;
    }
}
