package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.ownLength;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reference-KL shaping inside training: a frozen copy of the initial policy, k3 KL per completion. */
class ReferenceKlTrainingTest {
    @TempDir
    static Path models;
    static Path agent;

    @BeforeAll
    static void writeAgent() {
        agent = TinyAgents.create(models.resolve("a"), 9);
    }

    @Test
    void klIsZeroBeforeTheFirstUpdateThenPositiveAndThePenaltyIsBetaTimesIt() {
        double beta = 0.5;
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numAgents(1).rolloutBufferSize(1)
                .referenceKlEnabled(true).referenceKlCoef(beta).agentLearningRate(5e-3).build();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agentModel(agent.toString()).numAgents(1)
                .rewardFunc(ownLength()).trainDataset(tasks(4)).args(config).verbose(false).build()) {
            t.train();
            List<Map<String, Double>> events = t.logHistory();
            assertThat(events).hasSize(4);
            // the first node is sampled before any update: policy == reference, so every k3 term is 0
            assertThat(events.get(0).get("turn_1/reference_kl_mean")).isCloseTo(0.0, within(1e-6));
            double later = events.get(3).get("turn_1/reference_kl_mean");
            assertThat(later).isGreaterThan(1e-6);
            for (Map<String, Double> e : events) {
                assertThat(e.get("turn_1/reference_kl_penalty_mean"))
                        .isCloseTo(beta * e.get("turn_1/reference_kl_mean"), within(1e-12));
                assertThat(e.get("turn_1/reference_kl_mean")).isGreaterThanOrEqualTo(0.0);
            }
        }
    }
}
