package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.TaskItem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs real child processes. The children are bash scripts (bash exists on every CI runner, python3
 * may not).
 */
class ExternalCommandRewardTest {
    private static final TaskItem ITEM = TaskItem.of(Map.of("prompt", "Say \"hi\"\nnow", "target_min", 2.0));
    private static final List<List<String>> COMPLETIONS = List.of(List.of("a", "bb"), List.of("ccc", "ü"));

    @TempDir
    Path dir;

    private List<String> script(String name, String body) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/usr/bin/env bash\n" + body + "\n");
        return List.of("bash", file.toString());
    }

    @Test
    void repliesAcrossCallsFromOneLiveProcess() throws Exception {
        // call n answers [0.5, n] (odd n) or {"rewards": [1.5, n]} (even n); the third also checks the env
        List<String> command = script("ok.sh", """
                n=0
                while IFS= read -r line; do
                  n=$((n+1))
                  printf '%s\\n' "$line" >> requests.jsonl
                  echo "debug $n" >&2
                  if [ "$n" -eq 3 ]; then echo ""; echo "[${PYTHONUNBUFFERED:-0}, NaN]"
                  elif [ $((n % 2)) -eq 1 ]; then echo "[0.5, $n]"
                  else echo "{\\"rewards\\": [1.5, $n]}"; fi
                done
                """);
        List<String> stderr = new CopyOnWriteArrayList<>();
        try (ExternalCommandReward reward = ExternalCommandReward.builder(command)
                .workingDirectory(dir).timeout(Duration.ofSeconds(20)).stderrSink(stderr::add).build()) {
            assertThat(reward.isRunning()).isFalse();                          // started lazily
            assertThat(reward.score(COMPLETIONS, List.of(ITEM))).containsExactly(0.5, 1.0);
            assertThat(reward.isRunning()).isTrue();
            assertThat(reward.score(COMPLETIONS, List.of(ITEM))).containsExactly(1.5, 2.0);
            List<Double> third = reward.score(COMPLETIONS, List.of(ITEM));    // blank line skipped
            assertThat(third.get(0)).isEqualTo(1.0);                           // PYTHONUNBUFFERED=1
            assertThat(third.get(1)).isNaN();
        }
        // the requests were written in the working directory, one JSON line each
        List<String> lines = Files.readAllLines(dir.resolve("requests.jsonl"));
        assertThat(lines).hasSize(3);
        JsonNode request = new ObjectMapper().readTree(lines.get(0));
        assertThat(request.get("num_agents").asInt()).isEqualTo(2);
        assertThat(request.get("agent_completions").toString()).isEqualTo("[[\"a\",\"bb\"],[\"ccc\",\"ü\"]]");
        assertThat(request.get("batch_items").get(0).get("prompt").asText()).isEqualTo("Say \"hi\"\nnow");
        assertThat(request.get("batch_items").get(0).get("target_min").asDouble()).isEqualTo(2.0);
        long deadline = System.nanoTime() + 60_000_000_000L; // an await: returns as soon as the lines are in
        while (stderr.size() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(stderr).containsExactly("debug 1", "debug 2", "debug 3");
    }

    @Test
    void timeoutKillsTheProcessAndReportsStderr() throws Exception {
        // the stderr line comes first thing, so the report has it unless the child has not even started
        // within the timeout: 2 s, a deadline a loaded machine meets (0.5 s was not always enough for
        // bash to start and print); the call then returns within timeout + 10 s, not after the sleep
        List<String> command = script("slow.sh", """
                echo "thinking hard" >&2
                read -r line
                sleep 30
                """);
        ExternalCommandReward reward = ExternalCommandReward.builder(command).timeout(Duration.ofSeconds(2)).build();
        long start = System.nanoTime();
        assertThatThrownBy(() -> reward.score(COMPLETIONS, List.of(ITEM)))
                .isInstanceOf(RewardFunctionException.class)
                .hasMessageContaining("Reward command [bash, " + dir.resolve("slow.sh"))
                .hasMessageContaining("timed out after 2.0 s waiting for the reply to call 1")
                .hasMessageContaining("Last stderr lines:\n  thinking hard");
        assertThat(System.nanoTime() - start).isLessThan(12_000_000_000L);   // the sleeping child does not block us
        assertThat(reward.isRunning()).isFalse();
        assertThatThrownBy(() -> reward.score(COMPLETIONS, List.of(ITEM)))
                .isInstanceOf(RewardFunctionException.class)
                .hasMessageContaining("failed earlier and is not restarted");
        reward.close();
    }

    @Test
    void crashReportsExitCodeAndStderr() throws Exception {
        List<String> command = script("crash.sh", """
                read -r line
                echo "Traceback (most recent call last):" >&2
                echo "ValueError: boom" >&2
                exit 3
                """);
        try (ExternalCommandReward reward = ExternalCommandReward.builder(command).workingDirectory(dir).build()) {
            assertThatThrownBy(() -> reward.score(COMPLETIONS, List.of(ITEM)))
                    .isInstanceOf(RewardFunctionException.class)
                    .hasMessageContaining("(working directory " + dir + ")")
                    .hasMessageContaining("closed its stdout before replying to call 1")
                    .hasMessageContaining("exited with code 3")
                    .hasMessageContaining("Traceback (most recent call last):\n  ValueError: boom");
        }
    }

    @Test
    void stderrTailKeepsTheLastTwentyLines() throws Exception {
        List<String> command = script("noisy.sh", """
                read -r line
                for i in $(seq -w 1 30); do echo "err-$i" >&2; done
                exit 1
                """);
        try (ExternalCommandReward reward = ExternalCommandReward.builder(command).build()) {
            assertThatThrownBy(() -> reward.score(COMPLETIONS, List.of(ITEM)))
                    .hasMessageContaining("err-11")
                    .hasMessageContaining("err-30")
                    .hasMessageNotContaining("err-10");
        }
    }

    @Test
    void malformedOutputIsAnError() throws Exception {
        for (String reply : List.of("not json", "[\\\"a\\\"]", "{\\\"scores\\\": [1]}")) {
            // after replying, waits on stdin without forking (a fork racing with the kill could outlive it)
            List<String> command = script("bad.sh", "read -r line\necho \"" + reply + "\"\nwhile read -r line; do :; done");
            ExternalCommandReward reward = ExternalCommandReward.builder(command).build();
            assertThatThrownBy(() -> reward.score(COMPLETIONS, List.of(ITEM)))
                    .isInstanceOf(RewardFunctionException.class)
                    .hasMessageContaining("replied with malformed output")
                    .hasMessageContaining("expected one JSON line: an array of numbers or {\"rewards\": [...]}")
                    .hasMessageContaining("No stderr output.");
            assertThat(reward.isRunning()).isFalse();
            reward.close();
        }
    }

    @Test
    void missingProgramFailsClearly() {
        ExternalCommandReward reward = ExternalCommandReward.of(dir.resolve("no-such-reward").toString());
        assertThatThrownBy(() -> reward.score(COMPLETIONS, List.of(ITEM)))
                .isInstanceOf(RewardFunctionException.class)
                .hasMessageContaining("Could not start the reward command")
                .hasMessageContaining("Check that the program exists");
        assertThatThrownBy(() -> reward.score(COMPLETIONS, List.of(ITEM))).hasMessageContaining("failed earlier");
        reward.close();
    }

    @Test
    void closeEndsTheProcess() throws Exception {
        List<String> command = script("echo.sh", "while IFS= read -r line; do echo '[1]'; done");
        ExternalCommandReward reward = ExternalCommandReward.of(command.toArray(String[]::new));
        assertThat(reward.score(COMPLETIONS, List.of(ITEM))).containsExactly(1.0);
        reward.close();
        assertThat(reward.isRunning()).isFalse();
        reward.close();   // idempotent
        assertThatThrownBy(() -> reward.score(COMPLETIONS, List.of(ITEM)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
        ExternalCommandReward.of("never-started").close();
    }

    @Test
    void stubbornProcessIsDestroyedOnClose() throws Exception {
        // ignores EOF on stdin and keeps running; close() waits 2 s, then destroys it
        List<String> command = script("stubborn.sh", "read -r line; echo '[2]'; trap '' TERM; while true; do sleep 1; done");
        ExternalCommandReward reward = ExternalCommandReward.of(command.toArray(String[]::new));
        assertThat(reward.score(COMPLETIONS, List.of(ITEM))).containsExactly(2.0);
        reward.close();
        assertThat(reward.isRunning()).isFalse();
    }

    @Test
    void builderValidation() {
        assertThatThrownBy(() -> ExternalCommandReward.builder(List.of())).hasMessageContaining("at least the program");
        assertThatThrownBy(() -> ExternalCommandReward.builder(List.of("x")).timeout(Duration.ZERO))
                .hasMessageContaining("must be positive");
    }
}
