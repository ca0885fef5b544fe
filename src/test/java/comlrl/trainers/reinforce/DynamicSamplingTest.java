package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.data.Dataset;
import comlrl.reward.RewardFunction;
import comlrl.rl.DynamicSampling;
import comlrl.rl.RolloutNode;
import comlrl.rl.TreeReturns;
import comlrl.trainers.ResumeCheck;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dynamic_sampling} and {@code dynamic_sampling_max_draws} ({@link DynamicSampling}): which
 * items are dropped, which take their place, the cap per update batch, the count logged, resume.
 *
 * <p>The trainer runs use a reward that makes each item recognisable: item i's joint action k is
 * rewarded {@code 10 i + k} (G = 2, aligned: node mean {@code 10 i + 0.5}), a "flat" item's every
 * joint action {@code 10 i} (all equal: nothing to learn). Single turn, two agents, so each item is
 * one NodeSample per agent and {@code env_step} grows by K = 2 per item, dropped ones included: the
 * event of a drain whose last item is i is at {@code env_step 2 (i + 1)}, and its
 * {@code turn_1/reward_mean} is the mean of its items' node means. Every value is a sum of a few
 * halves divided by 1, 2 or 4, exact in binary, so the checks are exact.
 */
class DynamicSamplingTest {
    @TempDir
    static Path models;
    static List<String> team;

    @BeforeAll
    static void writeAgents() {
        team = List.of(TinyAgents.create(models.resolve("a"), 3).toString(),
                TinyAgents.create(models.resolve("b"), 4).toString());
    }

    // ------------------------------------------------------------------ which items carry no signal

    private static TreeReturns tree(double[] rootRewards, double[]... childRewards) {
        List<RolloutNode> children = new ArrayList<>();
        for (double[] c : childRewards) {
            children.add(RolloutNode.of(c, List.of()));
        }
        return TreeReturns.compute(RolloutNode.of(rootRewards, children));
    }

    @Test
    void anItemCarriesNoSignalOnlyWhenEveryNodesJointReturnsAreEqual() {
        assertThat(DynamicSampling.carriesNoSignal(tree(new double[] {0.5, 0.5, 0.5, 0.5}))).isTrue();
        assertThat(DynamicSampling.carriesNoSignal(tree(new double[] {0.5, 0.5, 0.5, 0.25}))).isFalse();
        // two turns: r = [1, 1]; children [0, 0] and [0, 0]: R = [1, 1], every node ties
        assertThat(DynamicSampling.carriesNoSignal(tree(new double[] {1, 1}, new double[] {0, 0}, new double[] {0, 0})))
                .isTrue();
        // the first turn ties, the second does not: R = [1 + 0, 1 + 1] differ
        assertThat(DynamicSampling.carriesNoSignal(tree(new double[] {1, 1}, new double[] {0, 0}, new double[] {0, 2})))
                .isFalse();
        // the root's returns tie (R = [1 + 1, 1 + 1]) but each child's rewards differ: kept
        assertThat(DynamicSampling.carriesNoSignal(tree(new double[] {1, 1}, new double[] {0, 2}, new double[] {2, 0})))
                .isFalse();
        // non-finite returns are kept, for the update's non-finite checks
        assertThat(DynamicSampling.carriesNoSignal(tree(new double[] {Double.NaN, Double.NaN}))).isFalse();
        assertThat(DynamicSampling.carriesNoSignal(tree(new double[] {Double.POSITIVE_INFINITY,
            Double.POSITIVE_INFINITY}))).isFalse();
    }

    /**
     * With per-agent rewards each agent's own tree is looked at: agent 0's rewards [1, 0] and agent 1's
     * [0, 1] have the team mean [0.5, 0.5] (all equal) but each agent's returns differ, so the item is kept;
     * it is dropped only when every agent's tree ties.
     */
    @Test
    void withPerAgentRewardsAnItemIsDroppedOnlyWhenEveryAgentsReturnsTie() {
        DynamicSampling sampling = new DynamicSampling(true, null);
        assertThat(DynamicSampling.carriesNoSignal(tree(new double[] {0.5, 0.5}))).as("the team mean ties").isTrue();
        assertThat(sampling.drop(List.of(tree(new double[] {1, 0}), tree(new double[] {0, 1})))).isFalse();
        assertThat(sampling.drop(List.of(tree(new double[] {1, 1}), tree(new double[] {0, 1})))).isFalse();
        assertThat(sampling.drop(List.of(tree(new double[] {1, 1}), tree(new double[] {0, 0})))).isTrue();
    }

    // ------------------------------------------------------------------ config

    @Test
    void defaultsAreOffAndKeysRoundTrip() {
        MAGRPOConfig c = MAGRPOConfig.builder().build();
        assertThat(c.dynamicSampling()).isFalse();
        assertThat(c.dynamicSamplingMaxDraws()).isNull();
        assertThat(MAGRPOConfig.keys()).containsSubsequence("dynamic_sampling", "dynamic_sampling_max_draws");
        MAGRPOConfig on = MAGRPOConfig.fromMap(Map.of("dynamic_sampling", true, "dynamic_sampling_max_draws", 3));
        assertThat(on.dynamicSampling()).isTrue();
        assertThat(on.dynamicSamplingMaxDraws()).isEqualTo(3);
        assertThat(on.toMap()).containsEntry("dynamic_sampling", true).containsEntry("dynamic_sampling_max_draws", 3);
        assertThat(MAGRPOConfig.fromMap(on.toMap())).isEqualTo(on);
        assertThat(on.toBuilder().build()).isEqualTo(on);
        assertThat(MARLOOConfig.fromMap(Map.of("dynamic_sampling", true)).dynamicSampling()).isTrue();
    }

    @Test
    void aNegativeCapOrACapWithoutDynamicSamplingIsRejectedByName() {
        assertThatThrownBy(() -> MAGRPOConfig.builder().dynamicSampling(true).dynamicSamplingMaxDraws(-1).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dynamic_sampling_max_draws must be >= 0, got -1");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("dynamic_sampling_max_draws", 2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dynamic_sampling_max_draws=2").hasMessageContaining("set dynamic_sampling: true");
        // raw returns unscaled: an all-equal group still has a gradient (A = R)
        assertThatThrownBy(() -> MAREINFORCEConfig.builder().dynamicSampling(true).advantageNormalization(false).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("dynamic_sampling")
                .hasMessageContaining("advantage_mode=\"raw\"");
        assertThat(MAREINFORCEConfig.builder().dynamicSampling(true).build().dynamicSampling()).isTrue();
        assertThat(MAGRPOConfig.builder().dynamicSampling(true).dynamicSamplingMaxDraws(0).build()
                .dynamicSamplingMaxDraws()).isZero();
    }

    // ------------------------------------------------------------------ the trainer

    /** Items 0 .. n−1 (field "index"), those in {@code flat} rewarded alike for every joint action. */
    private static Dataset items(int n) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rows.add(Map.of("prompt", "Say " + i + ".", "index", i));
        }
        return Dataset.fromRows(rows);
    }

    /**
     * Joint action k of item i: {@code 10 i + k}, or {@code 10 i} for every k when i is flat. MAGRPO
     * scores the K = 2 joint actions of a node one call each, in order, so k is the call count mod 2.
     */
    private static RewardFunction reward(Set<Integer> flat) {
        AtomicInteger calls = new AtomicInteger();
        return (completions, batch) -> {
            int i = (int) batch.get(0).getLong("index");
            int k = calls.getAndIncrement() % 2;
            return List.of(10.0 * i + (flat.contains(i) ? 0 : k));
        };
    }

    private static MAGRPOTrainer trainer(int n, Set<Integer> flat, int bufferSize, boolean dynamic, Integer cap,
            int epochs, Path out) {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).rolloutBufferSize(bufferSize).numTrainEpochs(epochs)
                .dynamicSampling(dynamic).dynamicSamplingMaxDraws(cap).build();
        return MAGRPOTrainer.builder().agents(team).rewardFunc(reward(flat)).trainDataset(items(n)).args(config)
                .outputDir(out).verbose(false).build();
    }

    /** Each training event of one epoch as {env_step, turn_1/reward_mean (or null), dynamic_sampling/dropped (or null)}. */
    private static List<List<Double>> events(int n, Set<Integer> flat, int bufferSize, boolean dynamic, Integer cap) {
        try (MAGRPOTrainer t = trainer(n, flat, bufferSize, dynamic, cap, 1, null)) {
            t.train();
            List<List<Double>> out = new ArrayList<>();
            for (Map<String, Double> e : t.logHistory()) {
                List<Double> row = new ArrayList<>();
                row.add(e.get("env_step"));
                row.add(e.get("turn_1/reward_mean"));
                row.add(e.get(UpdateMetrics.DROPPED));
                out.add(row);
            }
            return out;
        }
    }

    private static List<Double> event(double envStep, Double rewardMean, Double dropped) {
        List<Double> row = new ArrayList<>();
        row.add(envStep);
        row.add(rewardMean);
        row.add(dropped);
        return row;
    }

    /** Items 0..7, flat 1, 2, 3 and 5; one item per update (rollout_buffer_size 1). */
    private static final Set<Integer> FLAT = Set.of(1, 2, 3, 5);

    @Test
    void withoutCapEveryFlatItemIsDroppedAndTheNextTrainedInItsPlace() {
        // trained: 0, 4, 6, 7 (events at env_step 2(i+1), reward mean 10i + 0.5); dropped before them: 0, 3, 1, 0
        assertThat(events(8, FLAT, 1, true, null)).containsExactly(event(2, 0.5, 0.0), event(10, 40.5, 3.0),
                event(14, 60.5, 1.0), event(16, 70.5, 0.0));
    }

    @Test
    void theCapBoundsTheItemsDroppedPerUpdateBatchAndThenTrainsOnTheFlatItem() {
        // cap 2: 1 and 2 dropped, 3 (flat, the cap reached) trained: node mean 30; the drain resets the count,
        // so 5 is dropped again
        assertThat(events(8, FLAT, 1, true, 2)).containsExactly(event(2, 0.5, 0.0), event(8, 30.0, 2.0),
                event(10, 40.5, 0.0), event(14, 60.5, 1.0), event(16, 70.5, 0.0));
        // two items per update (rollout_buffer_size 2), cap 1: {0, 2} (1 dropped, 2 kept at the cap),
        // {4, 5} (3 dropped, 5 kept at the cap), {6, 7}
        assertThat(events(8, FLAT, 2, true, 1)).containsExactly(event(6, (0.5 + 20) / 2, 1.0),
                event(12, (40.5 + 50) / 2, 1.0), event(16, (60.5 + 70.5) / 2, 0.0));
    }

    @Test
    void offEveryItemIsTrainedAndNothingIsCounted() {
        List<List<Double>> expected = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            expected.add(event(2 * (i + 1), FLAT.contains(i) ? 10.0 * i : 10.0 * i + 0.5, null));
        }
        assertThat(events(8, FLAT, 1, false, null)).isEqualTo(expected);
    }

    @Test
    void itemsDroppedAfterTheEpochsLastUpdateAreLoggedAtItsEnd() {
        // items 0..4, flat 1, 3, 4, two per update: {0, 2} at env_step 6; 3 and 4 dropped, counted at the end (10)
        assertThat(events(5, Set.of(1, 3, 4), 2, true, null)).containsExactly(event(6, (0.5 + 20.5) / 2, 1.0),
                event(10, null, 2.0));
    }

    @Test
    void aRunResumedFromACheckpointDropsWhatTheUninterruptedRunDropped(@TempDir Path dir) {
        // each epoch: {0, 2} updated, 1 dropped; 3 and 4 dropped after the last update, logged at the epoch's end
        ResumeCheck.assertResumeReproduces(dir, out -> trainer(5, Set.of(1, 3, 4), 2, true, null, 3, out), 1);
        // cap 1: 3 dropped, 4 kept at the cap and updated at the epoch's end, whose count does not reach the next
        // epoch (an uninterrupted run would otherwise keep item 1 in epoch 2, the resumed one drop it)
        ResumeCheck.assertResumeReproduces(dir.resolve("capped"), out -> trainer(5, Set.of(1, 3, 4), 2, true, 1, 3, out),
                1);
    }
}
