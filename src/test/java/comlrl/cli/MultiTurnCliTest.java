package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.cli.CliTest.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code train} with {@code external_transition}: a two-turn run whose transition is a bash script. */
class MultiTurnCliTest {
    private static final String CONFIG = String.join("\n",
            "algorithm: magrpo",
            "agent_model: builtin:tiny",
            "num_agents: 2",
            "dataset: {train: 'builtin:length-ratio'}",
            "formatters: ['Short: {prompt}', 'Long: {prompt}']",
            "reward: {type: length_ratio}",
            "args: {num_turns: 2, early_termination_threshold: null, num_train_epochs: 1, num_generations: 2,",
            "       max_new_tokens: 4, logging_steps: 1}",
            "save_model: false",
            "output_dir: out", "");

    @Test
    void twoTurnRunCallsTheTransitionCommand(@TempDir Path tmp) throws Exception {
        // ignores the request and answers fixed next prompts; counts its calls in calls.log (in working_dir)
        Files.writeString(tmp.resolve("next.sh"), String.join("\n",
                "while IFS= read -r line; do",
                "  echo call >> calls.log",
                "  echo 'transition called' >&2",
                "  echo '[\"Improve: a\", \"Improve: b\"]'",
                "done", ""));
        Path cfg = tmp.resolve("run.yaml");
        Files.writeString(cfg, CONFIG + "external_transition: {type: command, run: [bash, next.sh], timeout_s: 60}\n");
        Result r = CliTest.run("train", cfg.toString());
        assertThat(r.code()).as(r.err()).isZero();
        List<String> lines = Files.readAllLines(tmp.resolve("out/metrics.jsonl"));
        assertThat(lines).anyMatch(l -> l.contains("\"turn_1/reward_mean\""))
                .anyMatch(l -> l.contains("\"turn_2/reward_mean\""));
        assertThat(Files.readAllLines(tmp.resolve("calls.log"))).isNotEmpty();
        assertThat(r.err()).contains("transition called");   // the script's stderr is forwarded
    }

    @Test
    void multiTurnWithoutTransitionFailsBeforeLoadingModels(@TempDir Path tmp) throws Exception {
        Path cfg = tmp.resolve("run.yaml");
        Files.writeString(cfg, CONFIG);
        Result r = CliTest.run("train", cfg.toString());
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("Multi-turn MAGRPO requires an external_transition.");
        assertThat(Files.exists(tmp.resolve("out/config.json"))).as("failed while reading the config").isFalse();

        Files.writeString(cfg, CONFIG + "external_transition: {type: command}\n");
        Result missingRun = CliTest.run("train", cfg.toString());
        assertThat(missingRun.code()).isEqualTo(1);
        assertThat(missingRun.err()).contains("external_transition command needs 'run'");
    }
}
