package comlrl.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.trainers.TestRewards;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.utils.Checkpointing;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Against the real W&amp;B SDK in offline mode: a run's transaction log ({@code run-<id>.wandb}, read
 * with the SDK's own protobuf classes by {@code src/test/python/wandb_records.py}) holds every metric
 * of {@code metrics.jsonl} at its env_step, the config and the tags; the seed's resume snippet with
 * the checkpoint's identity continues the same run. Needs the SDK: {@code ../shared/tools/wandb-venv.sh}
 * builds it (or set COMLRL_WANDB_PYTHON). Run with
 * {@code mvn test -Dtest=WandbPythonTest -Dtest.excludedGroups=none}.
 */
@Tag("python")
class WandbPythonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static String wandbPython() throws Exception {
        String given = System.getenv("COMLRL_WANDB_PYTHON");
        if (given != null && !given.isBlank()) {
            return given;
        }
        Path tool = Path.of("../shared/tools/wandb-venv.sh");
        if (!Files.isRegularFile(tool)) {
            return null;
        }
        Process p = new ProcessBuilder("bash", tool.toString(), "target/wandb-venv").redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.getErrorStream().readAllBytes();
        if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0) {
            return null; // exit 3: the SDK cannot be installed here
        }
        String[] lines = out.split("\n");
        return lines[lines.length - 1].trim();
    }

    static MAGRPOConfig fastConfig(int epochs) {
        return MAGRPOConfig.builder().numTurns(1).numTrainEpochs(epochs).numGenerations(2).maxNewTokens(6).temperature(1.0)
                .topP(1.0).topK(0).loggingSteps(1).evalInterval(1).evalNumSamples(1).agentLearningRate(1e-3)
                .rolloutBufferSize(2).seed(7).build();
    }

    static MAGRPOTrainer trainer(Path agent, Map<String, Object> wandb, Path out, String python, int epochs) {
        return MAGRPOTrainer.builder().agents(List.of(agent.toString(), agent.toString()))
                .rewardFunc(TestRewards.lengthDifference())
                .trainDataset(Dataset.fromRows(List.of(Map.of("prompt", "Say hello."), Map.of("prompt", "Describe the sea."))))
                .evalDataset(Dataset.fromRows(List.of(Map.of("prompt", "Say hello."))))
                .args(fastConfig(epochs)).outputDir(out).verbose(false).wandbConfig(wandb)
                .wandbBridge(WandbSink.pythonCommand(out.resolve("bridge"), python)).build();
    }

    static List<JsonNode> runs(String python, Path dir) throws Exception {
        Process p = new ProcessBuilder(python, "src/test/python/wandb_records.py", dir.toString()).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(err).isZero();
        List<JsonNode> runs = new ArrayList<>();
        JSON.readTree(out).forEach(runs::add);
        return runs;
    }

    /**
     * Per env_step, the row W&B should hold (one row per step): each key of metrics.jsonl at that step, the
     * mean of its values where it was logged several times, and then {@code <key>_std} (n − 1 denominator).
     */
    static Map<Long, Map<String, Double>> rowPerStep(Path metrics) throws Exception {
        Map<Long, Map<String, List<Double>>> values = new LinkedHashMap<>();
        for (String line : Files.readAllLines(metrics)) {
            JsonNode e = JSON.readTree(line);
            Map<String, List<Double>> row = values.computeIfAbsent(e.get("env_step").asLong(), k -> new LinkedHashMap<>());
            e.fields().forEachRemaining(f -> row.computeIfAbsent(f.getKey(), k -> new ArrayList<>()).add(f.getValue().asDouble()));
        }
        Map<Long, Map<String, Double>> out = new LinkedHashMap<>();
        values.forEach((step, row) -> {
            Map<String, Double> combined = new HashMap<>();
            row.forEach((key, vs) -> {
                double mean = vs.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
                combined.put(key, mean);
                if (vs.size() > 1 && !key.equals("env_step")) {
                    double ss = vs.stream().mapToDouble(v -> (v - mean) * (v - mean)).sum();
                    combined.put(key + "_std", Math.sqrt(ss / (vs.size() - 1)));
                }
            });
            out.put(step, combined);
        });
        return out;
    }

    @Test
    void anOfflineRunHoldsEveryMetricAtItsEnvStepTheConfigAndTagsAndResumesTheSameRun(@TempDir Path tmp)
            throws Exception {
        String python = wandbPython();
        assumeTrue(python != null, "no Python with the W&B SDK (../shared/tools/wandb-venv.sh exits 3 here)");
        Path agent = TinyAgents.create(tmp.resolve("agent"), 5);
        Map<String, Object> wandb = new LinkedHashMap<>(Map.of("project", "comlrl-tests", "name", "offline-check",
                "tags", List.of("length-ratio", "magrpo"), "dir", tmp.resolve("wandb").toString(), "mode", "offline",
                "config_sections", Map.of("dataset", Map.of("name", "length-ratio", "type", "builtin"))));
        Path first = tmp.resolve("first");
        try (MAGRPOTrainer t = trainer(agent, wandb, first, python, 1)) {
            t.train(tmp.resolve("checkpoints"), 1);
            for (int r = 0; r < 3; r++) { // eval_repeats: 3, at the last env_step (one W&B row: mean and _std)
                t.evaluate();
            }
            t.saveModel(first.resolve("saved"));
        }
        List<JsonNode> runs = runs(python, tmp.resolve("wandb"));
        assertThat(runs).hasSize(1);
        JsonNode run = runs.get(0);
        assertThat(run.get("name").asText()).isEqualTo("offline-check");
        assertThat(run.get("project").asText()).isEqualTo("comlrl-tests");
        assertThat(run.get("tags")).extracting(JsonNode::asText).containsExactly("length-ratio", "magrpo");
        assertThat(run.get("config").get("algorithm").asText()).isEqualTo("MAGRPO");
        assertThat(run.get("config").get("num_generations").asInt()).isEqualTo(2);
        assertThat(run.get("config").get("dataset_name").asText()).isEqualTo("length-ratio");
        assertThat(run.get("summary").get("final_model_saved").asBoolean()).isTrue();
        assertThat(run.get("exit_code").asInt()).isZero();
        Map<Long, Map<String, Double>> expected = rowPerStep(first.resolve("metrics.jsonl"));
        assertThat(expected.values()).anyMatch(row -> row.containsKey("eval/turn_1/reward_mean_std"));
        Map<Long, JsonNode> rows = new HashMap<>();
        run.get("history").forEach(h -> rows.put(h.get("step").asLong(), h.get("values")));
        assertThat(rows.keySet()).containsExactlyInAnyOrderElementsOf(expected.keySet());
        expected.forEach((step, values) -> values.forEach((key, v) -> assertThat(rows.get(step).get(key).asDouble())
                .as("%s at env_step %d", key, step).isCloseTo(v, org.assertj.core.data.Offset.offset(1e-12 * Math.max(1, Math.abs(v)))))); // means of ≤ 4 values summed in another order: a few ulps

        // the seed's resume snippet, in Java: merge the checkpoint's identity unless id/resume are given
        Path checkpoint = tmp.resolve("checkpoints/checkpoint-1");
        @SuppressWarnings("unchecked")
        Map<String, Object> identity = (Map<String, Object>) Checkpointing.readCheckpointMetadata(checkpoint).get("wandb");
        assertThat(identity).containsEntry("id", run.get("id").asText()).containsEntry("name", "offline-check");
        Map<String, Object> resumed = new LinkedHashMap<>(wandb);
        if (identity != null && !resumed.containsKey("id") && !resumed.containsKey("resume")) {
            identity.forEach((k, v) -> {
                if (v != null) {
                    resumed.put(k, v);
                }
            });
            resumed.put("resume", "allow");
        }
        try (MAGRPOTrainer t = trainer(agent, resumed, tmp.resolve("second"), python, 2)) {
            t.train(tmp.resolve("checkpoints"), 1, checkpoint);
        }
        List<JsonNode> both = runs(python, tmp.resolve("wandb"));
        assertThat(both).hasSize(2);
        assertThat(both).extracting(r -> r.get("id").asText()).containsOnly(run.get("id").asText());
        long lastFirst = expected.keySet().stream().mapToLong(Long::longValue).max().orElseThrow();
        JsonNode later = both.stream().filter(r -> r.get("history").size() > 0
                && r.get("history").get(r.get("history").size() - 1).get("step").asLong() > lastFirst).findFirst()
                .orElseThrow();
        assertThat(later.get("history").size()).isGreaterThan(0);
    }
}
