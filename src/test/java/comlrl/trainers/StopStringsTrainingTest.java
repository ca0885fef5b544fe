package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-agent {@code stop_strings} in a training run: agent 0's completions end at its stop string, agent
 * 1 (none) samples what it samples without, and every completion of agent 0 that does not reach the
 * string is the one sampled without stop strings (the string changes where a completion ends, never
 * which tokens are drawn).
 */
class StopStringsTrainingTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path models;
    static List<String> agents;

    @BeforeAll
    static void writeAgents() {
        agents = List.of(TinyAgents.create(models.resolve("a"), 21).toString(),
                TinyAgents.create(models.resolve("b"), 22).toString());
    }

    private static PerAgentGenerationTrainingTest.FirstCall run(Path out, List<List<String>> stops) throws Exception {
        MAGRPOConfig.Builder<MAGRPOConfig> b = MAGRPOConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1)
                .numGenerations(4).maxNewTokens(12).temperature(1.0).topP(1.0).topK(0).evalInterval(0).evalNumSamples(1)
                .agentLearningRate(1e-3).seed(7);
        if (stops != null) {
            b.stopStringsPerAgent(stops);
        }
        PerAgentGenerationTrainingTest.FirstCall reward = new PerAgentGenerationTrainingTest.FirstCall();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(agents).rewardFunc(reward)
                .trainDataset(Dataset.fromRows(List.of(Map.of("prompt", "Say hello.")))).args(b.build())
                .outputDir(out).verbose(false).build()) {
            t.train();
        }
        return reward;
    }

    @Test
    void anAgentsCompletionsEndAtItsOwnStopStringsInTraining(@TempDir Path out) throws Exception {
        List<List<String>> plain = run(out.resolve("plain"), null).first;
        String text = plain.get(0).get(0);
        assertThat(text.length()).isGreaterThan(6);
        String stop = text.substring(text.length() / 2, text.length() / 2 + 2);
        List<List<String>> stopped = run(out.resolve("stopped"), Arrays.asList(List.of(stop), null)).first;
        assertThat(stopped.get(1)).isEqualTo(plain.get(1));
        int cut = 0;
        for (int k = 0; k < plain.get(0).size(); k++) {
            String before = plain.get(0).get(k);
            String after = stopped.get(0).get(k);
            if (!before.contains(stop)) {
                assertThat(after).as("completion %d never reaches the stop string", k).isEqualTo(before);
                continue;
            }
            cut++;
            // kept up to the token that completes the string: it holds the string, once, near its end
            assertThat(after).as("completion %d", k).contains(stop).hasSizeLessThanOrEqualTo(before.length());
            assertThat(after.indexOf(stop)).isEqualTo(before.indexOf(stop));
        }
        assertThat(cut).isPositive();
        assertThat(stopped.get(0).get(0).length()).isLessThan(text.length());
        com.fasterxml.jackson.databind.JsonNode written = JSON.readTree(out.resolve("stopped/config.json").toFile())
                .get("args").get("stop_strings"); // [[stop], null]
        assertThat(written.get(0).get(0).asText()).isEqualTo(stop);
        assertThat(written.get(1).isNull()).isTrue();
    }
}
