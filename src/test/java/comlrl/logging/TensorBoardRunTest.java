package comlrl.logging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.trainers.TestRewards;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A trainer with {@code tensorboard(true)} writes every metric event of the run as TensorBoard scalars. */
class TensorBoardRunTest {
    @Test
    void everyMetricOfTheRunIsATensorBoardScalarAtItsEnvStep(@TempDir Path tmp) throws Exception {
        Path agent = TinyAgents.create(tmp.resolve("agent"), 5);
        MAGRPOConfig config = MAGRPOConfig.builder().numTurns(1).numTrainEpochs(2).numGenerations(2).maxNewTokens(6)
                .temperature(1.0).topP(1.0).topK(0).loggingSteps(1).evalInterval(1).evalNumSamples(1)
                .agentLearningRate(1e-3).rolloutBufferSize(2).seed(7).build();
        Path run = tmp.resolve("run");
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(List.of(agent.toString(), agent.toString()))
                .rewardFunc(TestRewards.lengthDifference())
                .trainDataset(Dataset.fromRows(List.of(Map.of("prompt", "Say hello."), Map.of("prompt", "Describe the sea."))))
                .evalDataset(Dataset.fromRows(List.of(Map.of("prompt", "Say hello."))))
                .args(config).outputDir(run).verbose(false).tensorboard(true).build()) {
            t.train();
        }
        List<String> expected = new ArrayList<>();
        ObjectMapper json = new ObjectMapper();
        for (String line : Files.readAllLines(run.resolve("metrics.jsonl"))) {
            JsonNode e = json.readTree(line);
            long step = e.get("env_step").asLong();
            e.fields().forEachRemaining(f -> {
                if (!f.getKey().equals("env_step")) {
                    expected.add(step + " " + f.getKey() + " " + (float) f.getValue().asDouble());
                }
            });
        }
        List<String> got = new ArrayList<>();
        for (EventFileReader.Event e : EventFileReader.readDir(run)) { // every record's checksums are checked
            for (EventFileReader.Scalar s : e.scalars()) {
                got.add(e.step() + " " + s.tag() + " " + s.value());
            }
        }
        assertThat(expected).isNotEmpty();
        assertThat(got).isEqualTo(expected);
    }
}
