package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code examples/code-offline.yaml}, shortened: the code environment and its sandbox from the command line. */
class CodeCliTest {

    @Test
    void theOfflineCodeExampleTrainsRunningEverySampleInTheSandbox(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        CliTest.Result r = CliTest.run("train", "examples/code-offline.yaml", "--output-dir=" + out,
                "--set", "num_train_epochs=1", "--set", "eval_repeats=1", "--set", "eval_interval=0",
                "--set", "max_new_tokens=12", "--set", "num_generations=2");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("eval reward before training").contains("eval reward after training");
        JsonNode cfg = new ObjectMapper().readTree(out.resolve("config.json").toFile());
        JsonNode run = cfg.has("run") ? cfg.get("run") : cfg;
        assertThat(run.toString()).contains("\"type\":\"code\"").contains("\"run_all\":true")
                .contains("Write the Python function {entry_point}").contains("builtin:code-tasks");
    }

    @Test
    void levelFeedbackFeedsTheChecksIntoTheSecondTurn(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        CliTest.Result r = CliTest.run("train", "examples/code-offline.yaml", "--output-dir=" + out,
                "--set", "num_train_epochs=1", "--set", "eval_repeats=1", "--set", "eval_interval=0",
                "--set", "max_new_tokens=8", "--set", "num_generations=2", "--set", "num_turns=2",
                "--set", "external_transition={type: level_feedback}", "--set", "save_model=false");
        assertThat(r.code()).as(r.err()).isZero();
        // the second turn was trained and evaluated: its metrics are logged, pass@1 per turn among them
        assertThat(java.nio.file.Files.readString(out.resolve("metrics.jsonl"))).contains("turn_2/reward_mean")
                .contains("\"eval/code_pass_at_1\"").contains("\"eval/code_pass_at_1_turn_2\"")
                .contains("\"eval/code_levels_passed\"");

        CliTest.Result wrong = CliTest.run("train", "examples/length-ratio.yaml", "--output-dir=" + tmp.resolve("x"),
                "--set", "num_turns=2", "--set", "external_transition={type: level_feedback}");
        assertThat(wrong.code()).isNotZero();
        assertThat(wrong.err()).contains("level_feedback").contains("needs reward: {type: code}");
        assertThat(tmp.resolve("x")).doesNotExist();
    }
}
