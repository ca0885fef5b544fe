package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code splits.json} lists exactly the rows the trainer trained and evaluated on, in order. */
class SplitsFileTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theRunsSplitsFileListsTheRowsTheTrainerUsed(@TempDir Path tmp) throws Exception {
        StringBuilder rows = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            rows.append("{\"id\": \"row-").append(i).append("\", \"prompt\": \"Say ").append(i).append(".\"}\n");
        }
        Files.writeString(tmp.resolve("tasks.jsonl"), rows);
        Path seen = tmp.resolve("seen.txt");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path cfg = tmp.resolve("run.yaml");
        Files.writeString(cfg, String.join("\n",
                "algorithm: magrpo",
                "agent_model: builtin:tiny",
                "num_agents: 2",
                "dataset: {train: tasks.jsonl, test_size: 0.3, split_seed: 7, shuffle_seed: 3}",
                "formatters: ['Short: {prompt}', 'Long: {prompt}']",
                "reward: {type: command, run: ['" + java + "', -cp, '" + System.getProperty("java.class.path") + "', "
                        + RecordingReward.class.getName() + ", '" + seen + "']}",
                "args: {num_turns: 1, num_train_epochs: 2, num_generations: 2, max_new_tokens: 4, logging_steps: 1,",
                "       eval_interval: 0, eval_num_samples: 2, rollout_buffer_size: 2}",
                "output_dir: out", ""));
        CliTest.Result r = CliTest.run("train", cfg.toString());
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode splits = JSON.readTree(tmp.resolve("out/splits.json").toFile());
        Dataset loaded = Dataset.load(tmp.resolve("tasks.jsonl"));
        assertThat(splits.get("train").get("fingerprint").asText()).isEqualTo(loaded.fingerprint());
        assertThat(splits.get("train").get("source_rows").asInt()).isEqualTo(10);
        assertThat(splits.get("dataset").get("split_seed").asInt()).isEqualTo(7);
        List<String> trainIds = ids(loaded, splits.get("train").get("rows"));
        List<String> evalIds = ids(loaded, splits.get("eval").get("evaluated_rows"));
        assertThat(trainIds).hasSize(7).doesNotContainAnyElementsOf(ids(loaded, splits.get("eval").get("rows")));
        // what the reward saw, in order: the evaluation before training, 2 epochs of training (each item's
        // G = 2 joint completions scored one by one), the evaluation after training
        List<String> expected = new ArrayList<>(evalIds);
        for (int epoch = 0; epoch < 2; epoch++) {
            for (String id : trainIds) {
                expected.add(id);
                expected.add(id);
            }
        }
        expected.addAll(evalIds);
        List<String> seenIds = Files.readAllLines(seen).stream().map(l -> l.split(" ")[1]).toList();
        assertThat(seenIds).isEqualTo(expected);
    }

    static List<String> ids(Dataset loaded, JsonNode rows) {
        List<String> out = new ArrayList<>();
        rows.forEach(i -> out.add(loaded.get(i.asInt()).getString("id")));
        return out;
    }
}
