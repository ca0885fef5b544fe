package comlrl.utils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.utils.JsonLinesProcess.ExternalProcessException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transport on its own (the reward and transition tests cover it through their protocols).
 * Children are bash scripts.
 */
class JsonLinesProcessTest {
    @TempDir
    Path dir;

    private List<String> script(String name, String body) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/usr/bin/env bash\n" + body + "\n");
        return List.of("bash", file.toString());
    }

    @Test
    void echoesLinesWithEnvironmentAndForwardsStderr() throws Exception {
        List<String> command = script("echo.sh",
                "while IFS= read -r line; do echo \"got $line\" >&2; echo \"$GREETING $line\"; done");
        List<String> stderr = new CopyOnWriteArrayList<>();
        try (JsonLinesProcess process = JsonLinesProcess.builder("echo", command).environment("GREETING", "hello")
                .timeout(Duration.ofSeconds(20)).stderrSink(stderr::add).build()) {
            assertThat(process.call("{\"a\": 1}")).isEqualTo("hello {\"a\": 1}");
            assertThat(process.call("[2]")).isEqualTo("hello [2]");
            assertThatThrownBy(() -> process.call("two\nlines")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must be one line");
            assertThat(process.isRunning()).isTrue();
        }
        long deadline = System.nanoTime() + 60_000_000_000L; // an await: returns as soon as the lines are in
        while (stderr.size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(stderr).containsExactly("got {\"a\": 1}", "got [2]");
    }

    @Test
    void failRejectsTheProcessForGood() throws Exception {
        List<String> command = script("loop.sh", "while IFS= read -r line; do echo 'oops' >&2; echo '?'; done");
        try (JsonLinesProcess process = JsonLinesProcess.builder("grader", command).workingDirectory(dir).build()) {
            assertThat(process.call("{}")).isEqualTo("?");
            ExternalProcessException e = process.fail("replied with '?'");
            assertThat(e).hasMessageStartingWith("Grader command [bash, " + dir.resolve("loop.sh") + "] (working directory "
                    + dir + ") replied with '?'. Last stderr lines:\n  oops");
            assertThat(process.isRunning()).isFalse();
            assertThatThrownBy(() -> process.call("{}")).isInstanceOf(ExternalProcessException.class)
                    .hasMessage("Grader command [bash, " + dir.resolve("loop.sh") + "] failed earlier and is not restarted: "
                            + "replied with '?'");
        }
    }

    @Test
    void closedAndMissingProgramAndBuilderMessagesUseTheName() {
        JsonLinesProcess missing = JsonLinesProcess.builder("grader", List.of(dir.resolve("nope").toString())).build();
        assertThatThrownBy(() -> missing.call("{}")).isInstanceOf(ExternalProcessException.class)
                .hasMessageContaining("Could not start the grader command");
        missing.close();
        assertThatThrownBy(() -> missing.call("{}")).isInstanceOf(IllegalStateException.class)
                .hasMessage("Grader command [" + dir.resolve("nope") + "] is closed.");
        assertThatThrownBy(() -> JsonLinesProcess.builder("grader", List.of()))
                .hasMessageContaining("the grader command needs at least the program to run");
        assertThatThrownBy(() -> JsonLinesProcess.builder("grader", List.of("x")).timeout(Duration.ofSeconds(-1)))
                .hasMessageContaining("the grader command timeout must be positive");
    }

    @Test
    void checkCommandFindsProgramsAndScriptsBeforeAnythingStarts() throws Exception {
        script("run.sh", "echo hi");
        JsonLinesProcess.checkCommand("reward command", List.of("bash", "run.sh"), dir);
        JsonLinesProcess.checkCommand("reward command", List.of("bash", "-c", "echo a/b.py"), dir); // an option: not a path
        JsonLinesProcess.checkCommand("reward command", List.of("sh", "http://host/x.py"), dir);  // a URL: not checked
        assertThatThrownBy(() -> JsonLinesProcess.checkCommand("reward command", List.of("bash", "sub/run.sh"), dir))
                .hasMessage("reward command script 'sub/run.sh' (run[1]) does not exist: looked for " + dir.resolve("sub/run.sh")
                        + " (relative to the working directory " + dir + "); fix the path, or set working_dir to the "
                        + "script's directory");
        // a bare name is looked up on PATH only, as the process start does
        assertThatThrownBy(() -> JsonLinesProcess.checkCommand("reward command", List.of("run.sh"), dir))
                .hasMessageContaining("reward command program 'run.sh' (run[0]) was not found on PATH")
                .hasMessageContaining("write ./run.sh");
        assertThatThrownBy(() -> JsonLinesProcess.checkCommand("reward command", List.of("./run.sh"), dir))
                .hasMessageContaining("is not an executable file: " + dir.resolve("run.sh"))
                .hasMessageContaining("chmod +x");
        assertThatThrownBy(() -> JsonLinesProcess.checkCommand("reward command", List.of("./gone"), dir))
                .hasMessageContaining("program './gone' (run[0]) does not exist: looked for " + dir.resolve("gone"));
        assertThatThrownBy(() -> JsonLinesProcess.checkCommand("t", List.of("bash"), dir.resolve("nope")))
                .hasMessageStartingWith("t working_dir " + dir.resolve("nope") + " does not exist");
    }

    @Test
    void commandConfigReadsRunWorkingDirAndTimeout() throws Exception {
        script("run.sh", "echo hi");
        Files.createDirectories(dir.resolve("sub"));
        JsonLinesProcess.CommandConfig config = JsonLinesProcess.CommandConfig.fromMap("reward command",
                new java.util.LinkedHashMap<>(java.util.Map.of("type", "command", "run", List.of("bash", "../run.sh", 2),
                        "working_dir", "sub", "timeout_s", 1.5)), dir, "[python3, reward.py]");
        assertThat(config.run()).containsExactly("bash", "../run.sh", "2");
        assertThat(config.workingDirectory()).isEqualTo(dir.resolve("sub"));
        assertThat(config.timeout()).isEqualTo(Duration.ofMillis(1500));
        assertThatThrownBy(() -> JsonLinesProcess.CommandConfig.fromMap("reward command",
                java.util.Map.of("type", "command", "run", List.of("bash"), "timout_s", 1), dir, "[python3, reward.py]"))
                .hasMessageContaining("Unknown reward command key 'timout_s'; did you mean 'timeout_s'?");
    }
}
