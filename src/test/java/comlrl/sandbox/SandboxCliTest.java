package comlrl.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code comlrl sandbox run --json}: the verdict is one JSON object on the last stdout line. */
class SandboxCliTest {

    private static JsonNode runJson(Path code, Path tests, String... more) throws Exception {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            String[] base = {"sandbox", "run", "--code", code.toString(), "--tests", tests.toString(), "--json", "--timeout", "2"};
            String[] args = java.util.stream.Stream.concat(java.util.Arrays.stream(base), java.util.Arrays.stream(more))
                    .toArray(String[]::new);
            exit = Main.run(args);
        } finally {
            System.setOut(saved);
        }
        assertThat(exit).isZero();
        String[] lines = out.toString(StandardCharsets.UTF_8).strip().split("\n");
        return new ObjectMapper().readTree(lines[lines.length - 1]);
    }

    @Test
    void theLastStdoutLineIsTheVerdict(@TempDir Path dir) throws Exception {
        Path code = Files.writeString(dir.resolve("code.py"), "def add(a, b):\n    return a + b\nprint('hello')\n");
        Path tests = Files.writeString(dir.resolve("tests.py"), "assert add(1, 2) == 3\nassert add(2, 2) == 5\nassert add(0, 0) == 0\n");
        JsonNode verdict = runJson(code, tests);
        assertThat(verdict.get("status").asText()).isEqualTo("ok");
        assertThat(verdict.get("tests_passed").asInt()).isEqualTo(2);
        assertThat(verdict.get("tests_total").asInt()).isEqualTo(3);
        assertThat(verdict.get("message").asText()).isEqualTo("failed: assert add(2, 2) == 5");
        assertThat(verdict.get("stdout").asText()).isEqualTo("hello\n");
        assertThat(verdict.get("wall_time_s").asDouble()).isPositive();

        Files.writeString(code, "while True:\n    pass\n");
        assertThat(runJson(code, tests).get("status").asText()).isEqualTo("timeout");
        Files.writeString(code, "x = [1][2]\n");
        JsonNode error = runJson(code, tests, "--isolation", "process");
        assertThat(error.get("status").asText()).isEqualTo("runtime_error");
        assertThat(error.get("message").asText()).isEqualTo("line 1: x = [1][2]: IndexError: list index out of range");
    }
}
