package comlrl.env;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.TaskItem;
import comlrl.trainers.TransitionContext;
import comlrl.utils.JsonLinesProcess.ExternalProcessException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs real child processes written in bash (bash exists on every CI runner, python3 may not). */
class ExternalCommandTransitionTest {
    private static final TaskItem ITEM = TaskItem.of(Map.of("prompt", "Write \"x\"\nnow", "target_min", 2.0));
    private static final TransitionContext CONTEXT = new TransitionContext("Write \"x\"\nnow", List.of("a0", "ü1"), 2,
            List.of(List.of("p0"), List.of("p1")), List.of(List.of("a0"), List.of("ü1")), ITEM);

    @TempDir
    Path dir;

    private List<String> script(String name, String body) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/usr/bin/env bash\n" + body + "\n");
        return List.of("bash", file.toString());
    }

    @Test
    void answersSeveralCallsFromOneLiveProcess() throws Exception {
        // call n answers ["next n a", "next n b"] (odd n) or {"prompts": [...]} after a blank line (even n)
        List<String> command = script("next.sh", """
                n=0
                while IFS= read -r line; do
                  n=$((n+1))
                  printf '%s\\n' "$line" >> requests.jsonl
                  echo "turn $n" >&2
                  if [ $((n % 2)) -eq 1 ]; then echo "[\\"next $n a\\", \\"next $n b\\"]"
                  else echo ""; echo "{\\"prompts\\": [\\"next $n a\\", \\"next $n b\\"]}"; fi
                done
                """);
        try (ExternalCommandTransition transition = ExternalCommandTransition.builder(command)
                .workingDirectory(dir).timeout(Duration.ofSeconds(20)).build()) {
            assertThat(transition.isRunning()).isFalse();                       // started lazily
            assertThat(transition.next(CONTEXT)).containsExactly("next 1 a", "next 1 b");
            assertThat(transition.isRunning()).isTrue();
            assertThat(transition.next(CONTEXT)).containsExactly("next 2 a", "next 2 b");
            assertThat(transition.next(CONTEXT)).containsExactly("next 3 a", "next 3 b");
        }
        List<String> lines = Files.readAllLines(dir.resolve("requests.jsonl"));
        assertThat(lines).hasSize(3);
        JsonNode request = new ObjectMapper().readTree(lines.get(0));
        assertThat(request.fieldNames()).toIterable().containsExactly("prompt", "agent_completions", "num_agents",
                "prompt_history_per_agent", "response_history_per_agent", "batch_item");
        assertThat(request.get("prompt").asText()).isEqualTo("Write \"x\"\nnow");
        assertThat(request.get("agent_completions").toString()).isEqualTo("[\"a0\",\"ü1\"]");
        assertThat(request.get("num_agents").asInt()).isEqualTo(2);
        assertThat(request.get("prompt_history_per_agent").toString()).isEqualTo("[[\"p0\"],[\"p1\"]]");
        assertThat(request.get("response_history_per_agent").toString()).isEqualTo("[[\"a0\"],[\"ü1\"]]");
        assertThat(request.get("batch_item").get("target_min").asDouble()).isEqualTo(2.0);
    }

    @Test
    void malformedReplyNamesTheCommandAndShowsTheReply() throws Exception {
        for (String reply : List.of("not json", "[1, 2]", "{\\\"rewards\\\": [\\\"a\\\"]}")) {
            // after replying, waits on stdin without forking (a fork racing with the kill could outlive it)
            List<String> command = script("bad.sh", "read -r line\necho \"" + reply + "\"\nwhile read -r line; do :; done");
            ExternalCommandTransition transition = ExternalCommandTransition.builder(command).workingDirectory(dir).build();
            assertThatThrownBy(() -> transition.next(CONTEXT))
                    .isInstanceOf(ExternalProcessException.class)
                    .hasMessageContaining("External transition command [bash, " + dir.resolve("bad.sh") + "]")
                    .hasMessageContaining("(working directory " + dir + ")")
                    .hasMessageContaining("replied with malformed output")
                    .hasMessageContaining(reply.replace("\\", ""))
                    .hasMessageContaining("expected one JSON line: an array of strings (one next prompt per agent) "
                            + "or {\"prompts\": [...]}");
            assertThat(transition.isRunning()).isFalse();
            assertThatThrownBy(() -> transition.next(CONTEXT)).hasMessageContaining("failed earlier and is not restarted");
            transition.close();
        }
    }

    @Test
    void timeoutKillsTheProcessAndReportsStderr() throws Exception {
        // as ExternalCommandRewardTest: the stderr line first thing, a 2 s timeout a loaded machine's
        // bash start-up meets, and the call back within timeout + 10 s
        List<String> command = script("slow.sh", """
                echo "stepping the environment" >&2
                read -r line
                sleep 30
                """);
        ExternalCommandTransition transition = ExternalCommandTransition.builder(command)
                .timeout(Duration.ofSeconds(2)).build();
        long start = System.nanoTime();
        assertThatThrownBy(() -> transition.next(CONTEXT))
                .isInstanceOf(ExternalProcessException.class)
                .hasMessageContaining("External transition command [bash, " + dir.resolve("slow.sh"))
                .hasMessageContaining("timed out after 2.0 s waiting for the reply to call 1 "
                        + "(raise timeout_s if the external transition is slow)")
                .hasMessageContaining("Last stderr lines:\n  stepping the environment");
        assertThat(System.nanoTime() - start).isLessThan(12_000_000_000L);
        assertThat(transition.isRunning()).isFalse();
        transition.close();
    }

    @Test
    void crashReportsTheExitCode() throws Exception {
        List<String> command = script("crash.sh", "read -r line\necho 'KeyError: prompt' >&2\nexit 4");
        try (ExternalCommandTransition transition = ExternalCommandTransition.of(command.toArray(String[]::new))) {
            assertThatThrownBy(() -> transition.next(CONTEXT))
                    .isInstanceOf(ExternalProcessException.class)
                    .hasMessageContaining("closed its stdout before replying to call 1")
                    .hasMessageContaining("exited with code 4")
                    .hasMessageContaining("KeyError: prompt");
        }
    }

    @Test
    void fromConfigResolvesPathsAndValidates() throws Exception {
        script("next.sh", "while read -r line; do echo '[\"x\", \"y\"]'; done");
        try (ExternalCommandTransition transition = ExternalCommandTransition.fromConfig(
                Map.of("type", "command", "run", List.of("bash", "next.sh"), "timeout_s", 5), dir, line -> { })) {
            assertThat(transition.command()).containsExactly("bash", "next.sh");
            assertThat(transition.next(CONTEXT)).containsExactly("x", "y");   // ran in the base directory
        }
        assertThatThrownBy(() -> ExternalCommandTransition.fromConfig(Map.of("run", "x"), dir, line -> { }))
                .hasMessageContaining("external_transition needs a 'type'");
        assertThatThrownBy(() -> ExternalCommandTransition.fromConfig(Map.of("type", "python"), dir, line -> { }))
                .hasMessageContaining("Unknown external_transition type 'python'");
        assertThatThrownBy(() -> ExternalCommandTransition.fromConfig(Map.of("type", "command"), dir, line -> { }))
                .hasMessageContaining("needs 'run'");
        assertThatThrownBy(() -> ExternalCommandTransition.fromConfig(
                Map.of("type", "command", "run", "x", "cwd", "."), dir, line -> { }))
                .hasMessageContaining("working_dir");
        assertThatThrownBy(() -> ExternalCommandTransition.fromConfig(
                Map.of("type", "command", "run", "x", "timeout_s", 0), dir, line -> { }))
                .hasMessageContaining("timeout_s must be a positive number");
        // the script is checked while the config is read, not at the first turn (after the models load)
        assertThatThrownBy(() -> ExternalCommandTransition.fromConfig(
                Map.of("type", "command", "run", List.of("bash", "nxt.sh")), dir, line -> { }))
                .hasMessageContaining("external_transition command script 'nxt.sh' (run[1]) does not exist: looked for "
                        + dir.resolve("nxt.sh"));
    }
}
