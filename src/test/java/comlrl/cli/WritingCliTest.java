package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code examples/writing-offline.yaml}, shortened: the writing environment from the command line. */
class WritingCliTest {

    @Test
    void theOfflineWritingExampleTrainsAndRecordsWhatTheEnvironmentStoodFor(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("run");
        CliTest.Result r = CliTest.run("train", "examples/writing-offline.yaml", "--output-dir=" + out,
                "--set", "num_train_epochs=1", "--set", "eval_repeats=1", "--set", "eval_interval=0",
                "--set", "max_new_tokens=12", "--set", "num_generations=2");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("eval reward before training").contains("eval reward after training");
        JsonNode cfg = new ObjectMapper().readTree(out.resolve("config.json").toFile());
        JsonNode run = cfg.has("run") ? cfg.get("run") : cfg;
        assertThat(run.toString()).contains("\"type\":\"writing\"").contains("\"task\":\"tldr\"")
                .contains("Summarize the post below").contains("builtin:writing-tldr");
        // the environment's evaluation metrics: each writing level's mean over the evaluated items
        String metrics = java.nio.file.Files.readString(out.resolve("metrics.jsonl"));
        assertThat(metrics).contains("\"eval/writing_structure\"").contains("\"eval/writing_reward\"")
                .contains("\"eval/writing_levels_passed\"");
    }
}
