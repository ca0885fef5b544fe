package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.bytes;
import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.lengthDifference;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Evaluation samples from its own seeds: how often a run evaluates ({@code eval_interval}) does not
 * change what training samples; repeated evaluations sample anew, and a checkpoint keeps the
 * evaluations' position.
 */
class EvaluationSeedsTest {
    @TempDir
    static Path models;
    static Path agentA;
    static Path agentB;

    @BeforeAll
    static void writeAgents() {
        agentA = TinyAgents.create(models.resolve("a"), 3);
        agentB = TinyAgents.create(models.resolve("b"), 4);
    }

    private static MAGRPOTrainer trainer(int evalInterval) {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).rolloutBufferSize(2).evalInterval(evalInterval).build();
        return MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(lengthDifference()).trainDataset(tasks(3)).evalDataset(tasks(2)).args(config)
                .verbose(false).build();
    }

    @Test
    void evaluatingDoesNotChangeWhatTrainingSamples() {
        List<Map<String, byte[]>> quiet = new ArrayList<>();
        List<Map<String, Double>> quietTrain;
        try (MAGRPOTrainer t = trainer(0)) {
            t.train();
            t.agents().forEach(a -> quiet.add(bytes(a)));
            quietTrain = t.logHistory();
        }
        try (MAGRPOTrainer t = trainer(1)) {
            t.train();
            List<Map<String, Double>> history = t.logHistory();
            assertThat(history).anyMatch(e -> e.containsKey("eval/turn_1/reward_mean")); // it did evaluate
            assertThat(history.stream().filter(e -> e.keySet().stream().noneMatch(k -> k.startsWith("eval/"))).toList())
                    .isEqualTo(quietTrain);
            for (int i = 0; i < 2; i++) {
                Map<String, byte[]> expected = quiet.get(i);
                Map<String, byte[]> actual = bytes(t.agents().get(i));
                assertThat(actual.keySet()).isEqualTo(expected.keySet());
                actual.forEach((name, value) -> assertThat(value).as(name).containsExactly(expected.get(name)));
            }
        }
    }

    @Test
    void repeatedEvaluationsSampleAnewAndAResumedRunEvaluatesOnTheStraightRunsSeeds(@TempDir Path tmp) {
        Map<String, Double> first;
        Map<String, Double> third;
        Path checkpoint;
        try (MAGRPOTrainer t = trainer(0)) {
            first = t.evaluate(2);
            assertThat(first).containsKey("eval/turn_1/reward_mean");
            Map<String, Double> second = t.evaluate(2);
            assertThat(second).as("eval_repeats average different samples").isNotEqualTo(first);
            checkpoint = t.saveCheckpoint(tmp); // keeps the evaluations' position: two evaluations drawn
            third = t.evaluate(2);
        }
        try (MAGRPOTrainer t = trainer(0)) {
            t.resumeFrom(checkpoint);
            Map<String, Double> resumed = t.evaluate(2);
            assertThat(resumed).as("the straight run's third evaluation").isEqualTo(third).isNotEqualTo(first);
        }
    }
}
