package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The offline environment examples ({@code examples/writing-offline.yaml}, {@code examples/code-offline.yaml}),
 * shortened, from the command line: what each environment stood for is recorded and its evaluation metrics logged.
 */
class EnvironmentCliTest {

    /** Trains {@code example} for one short epoch into {@code out}; returns the resolved config's {@code run} section. */
    private static String trainShortened(String example, Path out, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("train", "examples/" + example + ".yaml", "--output-dir=" + out,
                "--set", "num_train_epochs=1", "--set", "eval_repeats=1", "--set", "eval_interval=0",
                "--set", "max_new_tokens=8", "--set", "num_generations=2"));
        args.addAll(List.of(extra));
        CliTest.Result r = CliTest.run(args.toArray(String[]::new));
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("eval reward before training").contains("eval reward after training");
        JsonNode cfg = new ObjectMapper().readTree(out.resolve("config.json").toFile());
        return (cfg.has("run") ? cfg.get("run") : cfg).toString();
    }

    @Test
    void theOfflineWritingExampleTrainsAndRecordsWhatTheEnvironmentStoodFor(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        assertThat(trainShortened("writing-offline", out)).contains("\"type\":\"writing\"").contains("\"task\":\"tldr\"")
                .contains("Summarize the post below").contains("builtin:writing-tldr");
        // the environment's evaluation metrics: each writing level's mean over the evaluated items
        assertThat(Files.readString(out.resolve("metrics.jsonl"))).contains("\"eval/writing_structure\"")
                .contains("\"eval/writing_reward\"").contains("\"eval/writing_levels_passed\"");
    }

    @Test
    void theOfflineCodeExampleTrainsRunningEverySampleInTheSandbox(@TempDir Path tmp) throws Exception {
        assertThat(trainShortened("code-offline", tmp.resolve("run"))).contains("\"type\":\"code\"")
                .contains("\"run_all\":true").contains("Write the Python function {entry_point}")
                .contains("builtin:code-tasks");
    }

    @Test
    void theCoderTesterPairTrainsAndEvaluatesPassAtKOverSeveralSamples(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        assertThat(trainShortened("code-offline", out, "--set", "environment.roles=coder_tester", "--set",
                "eval_num_generations=2", "--set", "environment.pass_at=[1, 2]", "--set", "save_model=false"))
                .contains("\"type\":\"coder_tester\"").contains("Write tests for the Python function {entry_point}")
                .contains("\"eval_num_generations\":2");
        assertThat(Files.readString(out.resolve("metrics.jsonl"))).contains("\"eval/code_pass_at_1\"")
                .contains("\"eval/code_pass_at_2\"").contains("\"eval/tester_tests_valid\"");
    }

    @Test
    void levelFeedbackFeedsTheChecksIntoTheSecondTurn(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        trainShortened("code-offline", out, "--set", "num_turns=2", "--set",
                "external_transition={type: level_feedback}", "--set", "save_model=false");
        // the second turn was trained and evaluated: its metrics are logged, pass@1 per turn among them
        assertThat(Files.readString(out.resolve("metrics.jsonl"))).contains("turn_2/reward_mean")
                .contains("\"eval/code_pass_at_1\"").contains("\"eval/code_pass_at_1_turn_2\"")
                .contains("\"eval/code_levels_passed\"");

        CliTest.Result wrong = CliTest.run("train", "examples/length-ratio.yaml", "--output-dir=" + tmp.resolve("x"),
                "--set", "num_turns=2", "--set", "external_transition={type: level_feedback}");
        assertThat(wrong.code()).isNotZero();
        assertThat(wrong.err()).contains("level_feedback").contains("needs reward: {type: code}");
        assertThat(tmp.resolve("x")).doesNotExist();
        CliTest.Result team = CliTest.run("train", "examples/code-offline.yaml", "--output-dir=" + tmp.resolve("y"),
                "--set", "environment.roles=coder_tester", "--set", "num_turns=2",
                "--set", "external_transition={type: level_feedback}");
        assertThat(team.code()).isNotZero();
        assertThat(team.err()).contains("the coder + test-writer team has no level feedback");
        assertThat(tmp.resolve("y")).doesNotExist();
    }
}
