package comlrl.sandbox;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The verdict of one execution.
 *
 * @param status      what happened
 * @param testsPassed asserts of the tests that passed (those run before a timeout or limit count)
 * @param testsTotal  asserts in the tests ({@code 0} without tests)
 * @param message     the error line ({@code line N: <source>: Type: message}), the first failing assert, or the
 *                    limit reached; empty when everything passed
 * @param wallTime    from process start to its end, sandbox start-up included
 * @param stdout      the program's standard output, at most {@link #CAPTURED_BYTES} bytes of it
 * @param stderr      its standard error (without the harness's verdict lines), at most {@link #CAPTURED_BYTES} bytes
 */
public record ExecutionResult(Status status, int testsPassed, int testsTotal, String message, Duration wallTime,
        String stdout, String stderr) {
    /** How much of each output stream a result keeps (the output limit itself is {@link SandboxConfig#maxOutputBytes()}). */
    public static final int CAPTURED_BYTES = 16 * 1024;

    /** True when the program ran and every test passed (a program without tests passes when it runs). */
    public boolean passed() {
        return status == Status.OK && testsPassed == testsTotal;
    }

    /** The JSON verdict: status, tests_passed, tests_total, message, wall_time_s, stdout, stderr. */
    public Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("status", status.key());
        json.put("tests_passed", testsPassed);
        json.put("tests_total", testsTotal);
        json.put("message", message);
        json.put("wall_time_s", wallTime.toNanos() / 1e9);
        json.put("stdout", stdout);
        json.put("stderr", stderr);
        return json;
    }
}
