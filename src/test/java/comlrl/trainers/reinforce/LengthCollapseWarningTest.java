package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import comlrl.reward.RewardFunction;
import comlrl.trainers.TinyAgents;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Under reference-KL shaping an empty answer pays no KL: when an agent's completions shrink to a
 * quarter of their first length (means over 4 log windows), the run says so once, on the console and in the metrics.
 */
class LengthCollapseWarningTest {
    @Test
    void collapsingCompletionsAreReportedOnce(@TempDir Path dir) {
        // printable-ASCII tokens end a completion too, so lengths vary and shorter answers can be learned
        Path agent = TinyAgents.create(dir.resolve("a"), 13, java.util.stream.LongStream.rangeClosed(33, 126).boxed().toList());
        // shorter is better: the agent learns to end at once
        RewardFunction shorter = (completions, items) -> List.of(-completions.get(0).get(0).length() / 3.0);
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numGenerations(4).maxNewTokens(12).rolloutBufferSize(1)
                .agentLearningRate(5e-2).referenceKlEnabled(true).referenceKlCoef(0.01).numTrainEpochs(20).build();
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agentModel(agent.toString()).numAgents(1).rewardFunc(shorter)
                .trainDataset(tasks(4)).args(config).verbose(false)
                .console(new PrintStream(console, true, StandardCharsets.UTF_8)).build()) {
            t.train();
            List<Map<String, Double>> events = t.logHistory();
            double first = events.get(0).get("turn_1/completion_length_mean");
            double last = events.get(events.size() - 1).get("turn_1/completion_length_mean");
            assertThat(first).isGreaterThan(4); // about 5 tokens at first, 1 (the EOS alone) at the end
            assertThat(last).isLessThan(first / 4);
            long warnings = events.stream().filter(e -> e.containsKey("agent_0/warnings/completion_length_collapse")).count();
            assertThat(warnings).isEqualTo(1);
        }
        String out = console.toString(StandardCharsets.UTF_8);
        assertThat(out).contains("warning: agent 0's mean completion length fell from").contains("reference_kl_coef 0.01");
        assertThat(out.split("warning: agent 0", -1)).hasSize(2);
    }
}
