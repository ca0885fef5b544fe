package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.lengthDifference;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.trainers.TinyAgents;
import comlrl.utils.Formatter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each evaluation appends its first items' joint samples to {@code eval_samples.jsonl}: every agent's
 * prompt (its formatter's text) and completion, and the reward the evaluation gave them — the reward
 * function's value on exactly those completions, whose mean over the items is {@code eval/turn_1/reward_mean}.
 */
class EvalSamplesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void anEvaluationRecordsWhatEachAgentSawAndWroteWithItsReward(@TempDir Path tmp) throws Exception {
        Path agentA = TinyAgents.create(tmp.resolve("a"), 3);
        Path agentB = TinyAgents.create(tmp.resolve("b"), 4);
        Formatter brief = item -> "Briefly: " + item.getString("prompt");
        Formatter detailed = item -> "In detail: " + item.getString("prompt");
        Dataset eval = tasks(3);
        Path out = tmp.resolve("run");
        Map<String, Double> first;
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .formatters(List.of(brief, detailed)).rewardFunc(lengthDifference()).trainDataset(tasks(2))
                .evalDataset(eval).args(fast(MAGRPOConfig.builder()).build()).outputDir(out).verbose(false).build()) {
            first = t.evaluate(3);
            t.evaluate(2);
        }
        List<String> lines = Files.readAllLines(out.resolve("eval_samples.jsonl"));
        assertThat(lines).hasSize(2);
        JsonNode evaluation = JSON.readTree(lines.get(0));
        assertThat(evaluation.get("env_step").asLong()).isZero();
        JsonNode samples = evaluation.get("samples");
        assertThat(samples).hasSize(3);
        double sum = 0;
        for (int j = 0; j < 3; j++) {
            JsonNode s = samples.get(j);
            TaskItem item = eval.get(j);
            assertThat(s.get("item").asInt()).isEqualTo(j);
            assertThat(s.get("prompts").get(0).get(0).asText()).isEqualTo(brief.format(item));
            assertThat(s.get("prompts").get(1).get(0).asText()).isEqualTo(detailed.format(item));
            List<List<String>> completions = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                assertThat(s.get("completions").get(i)).hasSize(1);
                completions.add(List.of(s.get("completions").get(i).get(0).asText()));
            }
            double reward = lengthDifference().score(completions, List.of(item)).get(0);
            assertThat(s.get("rewards").get(0).asDouble()).isEqualTo(reward);
            sum += reward;
        }
        // the same three rewards, summed in the same order, make the evaluation's mean
        assertThat(first.get("eval/turn_1/reward_mean")).isEqualTo(sum / 3);
        assertThat(JSON.readTree(lines.get(1)).get("samples")).hasSize(2);
    }
}
