package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.data.TaskItem;
import comlrl.reward.RewardFunction;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code eval_num_generations}: evaluation draws g joint samples of each item, each from its own seeds of the
 * evaluation stream, averages the rewards over items and samples, and gives the logger every sample.
 */
class EvaluationGenerationsTest {
    @TempDir
    static Path models;
    static Path agentA;
    static Path agentB;

    @BeforeAll
    static void writeAgents() {
        agentA = TinyAgents.create(models.resolve("a"), 3);
        agentB = TinyAgents.create(models.resolve("b"), 4);
    }

    /** What one evaluation saw: every joint response the reward scored, and the samples given to the logger. */
    private static final class Seen {
        final List<List<String>> joints = new ArrayList<>();
        final List<Double> rewards = new ArrayList<>();
        final List<List<List<List<List<String>>>>> logged = new ArrayList<>(); // [call][sample][agent][item][turn]
    }

    private static Map<String, Double> evaluate(int generations, int items, Seen seen) {
        RewardFunction reward = (completions, batch) -> {
            List<Double> out = new ArrayList<>();
            for (int k = 0; k < completions.get(0).size(); k++) {
                double r = completions.get(0).get(k).length() - 0.5 * completions.get(1).get(k).length();
                seen.joints.add(List.of(completions.get(0).get(k), completions.get(1).get(k)));
                seen.rewards.add(r);
                out.add(r);
            }
            return out;
        };
        EvalLogger logger = new EvalLogger() {
            @Override
            public List<Map<String, Double>> log(List<List<List<String>>> c, List<TaskItem> batch, List<String> p) {
                throw new AssertionError("the evaluator calls logSamples");
            }

            @Override
            public List<Map<String, Double>> logSamples(List<List<List<List<String>>>> samples, List<TaskItem> batch,
                    List<String> prompts) {
                seen.logged.add(samples);
                return batch.stream().map(i -> Map.of("samples", (double) samples.size())).toList();
            }
        };
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).set("eval_num_generations", generations).build();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(reward).trainDataset(tasks(1)).evalDataset(tasks(items)).args(config)
                .evalLogger(logger).evalAggregator(EvalAggregator.mean()).verbose(false).build()) {
            return t.evaluate(items);
        }
    }

    @Test
    void eachItemIsSampledGTimesWithItsOwnSeedsAndTheRewardsAveragedOverAll() {
        Seen three = new Seen();
        Map<String, Double> metrics = evaluate(3, 2, three);
        // batch size 1: item 0's three samples, then item 1's; one logger call per batch with three samples
        assertThat(three.joints).hasSize(6);
        assertThat(three.logged).hasSize(2).allSatisfy(samples -> assertThat(samples).hasSize(3));
        for (int item = 0; item < 2; item++) {
            for (int s = 0; s < 3; s++) {
                List<List<List<String>>> sample = three.logged.get(item).get(s);
                assertThat(List.of(sample.get(0).get(0).get(0), sample.get(1).get(0).get(0)))
                        .isEqualTo(three.joints.get(3 * item + s));
            }
            assertThat(three.joints.subList(3 * item, 3 * item + 3)).as("three samples, not one drawn three times")
                    .doesNotHaveDuplicates();
        }
        double sum = three.rewards.stream().mapToDouble(Double::doubleValue).sum();
        assertThat(metrics.get("eval/turn_1/reward_mean")).isCloseTo(sum / 6, within(1e-12));
        assertThat(metrics).containsEntry("eval/samples", 3.0);

        // the evaluation stream's seeds in order: item 0's first sample draws the seeds a one-sample run draws
        Seen one = new Seen();
        Map<String, Double> single = evaluate(1, 1, one);
        assertThat(one.joints).containsExactly(three.joints.get(0));
        assertThat(single.get("eval/turn_1/reward_mean")).isEqualTo(one.rewards.get(0));
        // deterministic per seed
        Seen again = new Seen();
        evaluate(3, 2, again);
        assertThat(again.joints).isEqualTo(three.joints);
    }

    @Test
    void aCountBelowOneIsRefused() {
        assertThatThrownBy(() -> fast(MAGRPOConfig.builder()).set("eval_num_generations", 0).build())
                .hasMessageContaining("eval_num_generations");
    }
}
