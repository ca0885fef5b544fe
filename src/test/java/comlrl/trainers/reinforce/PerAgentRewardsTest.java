package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.data.TaskItem;
import comlrl.reward.AgentRewardFunction;
import comlrl.rl.JointMode;
import comlrl.rl.RolloutNode;
import comlrl.rl.TreeReturns;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-agent rewards in the MAGRPO family ({@link AgentRewardFunction}): each agent's returns from its own
 * rewards, worked by hand for two agents and G = 2 (aligned over two turns, cross over one),
 * {@code advantage_normalization_scope} agent vs joint, and a real training step in which agent 1's
 * rewards are constant, so its gradient is exactly zero while agent 0's is not.
 */
class PerAgentRewardsTest {
    @TempDir
    static Path models;
    static Path agent;

    @BeforeAll
    static void writeAgent() {
        agent = TinyAgents.create(models.resolve("agent"), 13);
    }

    private static List<TreeReturns> trees(RolloutNode... perAgent) {
        return java.util.Arrays.stream(perAgent).map(TreeReturns::compute).toList();
    }

    /**
     * Aligned, two turns, joint action k at the root leads to child k:
     * <pre>
     *   agent 0: root r = [1, 2], child 0 r = [3, 5] (mean 4), child 1 r = [0, 2] (mean 1) → R_0 = [1 + 4, 2 + 1] = [5, 3]
     *   agent 1: root r = [0, 4], child 0 r = [1, 1] (mean 1), child 1 r = [6, 2] (mean 4) → R_1 = [0 + 1, 4 + 4] = [1, 8]
     * </pre>
     * The team tree of the mean rewards would give both agents [3, 5.5].
     */
    @Test
    void alignedReturnsUseEachAgentsOwnRewardsDownTheTree() {
        RolloutNode a0 = RolloutNode.of(new double[] {1, 2}, List.of(RolloutNode.leaf(3, 5), RolloutNode.leaf(0, 2)));
        RolloutNode a1 = RolloutNode.of(new double[] {0, 4}, List.of(RolloutNode.leaf(1, 1), RolloutNode.leaf(6, 2)));
        List<TreeReturns> own = trees(a0, a1);
        assertThat(ReinforceTrainer.ownReturns(own, JointMode.ALIGNED, 2)).isDeepEqualTo(new double[][] {{5, 3}, {1, 8}});
        List<TreeReturns> child1 = own.stream().map(t -> t.children().get(1)).toList();
        assertThat(ReinforceTrainer.ownReturns(child1, JointMode.ALIGNED, 2)).isDeepEqualTo(new double[][] {{0, 2}, {6, 2}});
        // team rewards: the same tree N times gives every agent the team's returns
        TreeReturns team = TreeReturns.compute(RolloutNode.of(new double[] {0.5, 3},
                List.of(RolloutNode.leaf(2, 3), RolloutNode.leaf(3, 2))));
        assertThat(ReinforceTrainer.ownReturns(List.of(team, team), JointMode.ALIGNED, 2))
                .isDeepEqualTo(new double[][] {{3, 5.5}, {3, 5.5}});
    }

    /**
     * Cross, one turn, j = 2·k_0 + k_1: r_0 = [1, 0, 3, 5], r_1 = [2, 4, 0, 1].
     * <pre>
     *   R_0[k] = Σ_{j : j_0 = k} r_{0,j}: [1 + 0, 3 + 5] = [1, 8]      R_0[k][c] = r_0[2k + c] = [[1, 0], [3, 5]]
     *   R_1[k] = Σ_{j : j_1 = k} r_{1,j}: [2 + 0, 4 + 1] = [2, 5]      R_1[k][c] = r_1[2c + k] = [[2, 0], [4, 1]]
     * </pre>
     * (Agent 1 summed over agent 0's index would give [6, 1].)
     */
    @Test
    void crossReturnsSumEachAgentsOwnRewardsOverItsCompletion() {
        List<TreeReturns> own = trees(RolloutNode.leaf(1, 0, 3, 5), RolloutNode.leaf(2, 4, 0, 1));
        assertThat(ReinforceTrainer.ownReturns(own, JointMode.CROSS, 2)).isDeepEqualTo(new double[][] {{1, 8}, {2, 5}});
        assertThat(ReinforceTrainer.ownContextReturns(own, JointMode.CROSS, 2))
                .isDeepEqualTo(new double[][][] {{{1, 0}, {3, 5}}, {{2, 0}, {4, 1}}});
    }

    /** Agent {@code i}'s sample of a node whose agents' returns are {@code all} ({@code [N][G]}), with peers. */
    private static NodeSample sample(int i, double[][] all) {
        return new NodeSample(i, 0, new long[] {1}, List.of(new long[1], new long[1]), all[i], null, 0, 0, 0, "test item",
                new boolean[2], null, new NodeSample.Peers(all, null));
    }

    private static MAGRPOConfig.Builder<MAGRPOConfig> scope(String scope) {
        return MAGRPOConfig.builder().jointMode("cross").advantageNormalizationScope(scope);
    }

    /**
     * The cross node above: R_0 = [1, 8], R_1 = [2, 5]; mean baseline A_0 = [−3.5, 3.5], A_1 = [−1.5, 1.5].
     * <pre>
     *   group, agent: A_0 / 3.5 = [−1, 1],  A_1 / 1.5 = [−1, 1]
     *   group, joint: pooled {−3.5, 3.5, −1.5, 1.5}: mean 0, σ² = (2·12.25 + 2·2.25) / 4 = 7.25
     *                 → A_0 / √7.25, A_1 / √7.25
     *   batch (B = agent 0's one sample), agent: σ of {1, 8} = 3.5 → [−1, 1]
     *   batch, joint: σ of {1, 8, 2, 5}: mean 4, σ² = (9 + 16 + 4 + 1) / 4 = 7.5 → A_0 / √7.5
     *   raw baseline (MA-REINFORCE), group, joint: pooled {1, 8, 2, 5}, mean 4, σ = √7.5
     *                 → A_0 = [−3, 4] / √7.5, A_1 = [−2, 1] / √7.5   (agent: [−1, 1] both)
     * </pre>
     * Tolerance: a few ulps of values below 4 (one subtraction and one division of exact inputs).
     */
    @Test
    void agentAndJointNormalisationAsWorkedByHand() {
        double[][] all = {{1, 8}, {2, 5}};
        NodeSample s0 = sample(0, all);
        NodeSample s1 = sample(1, all);
        double tol = 1e-15;
        assertThat(MAGRPOLoss.advantages(s0, scope("agent").build())).containsExactly(-1, 1);
        assertThat(MAGRPOLoss.advantages(s1, scope("agent").build())).containsExactly(-1, 1);
        double g = Math.sqrt(7.25);
        assertThat(MAGRPOLoss.advantages(s0, scope("joint").build())).containsExactly(new double[] {-3.5 / g, 3.5 / g}, within(tol));
        assertThat(MAGRPOLoss.advantages(s1, scope("joint").build())).containsExactly(new double[] {-1.5 / g, 1.5 / g}, within(tol));
        assertThat(MAGRPOLoss.advantages(s0, scope("agent").scaleRewards("batch").build())).containsExactly(-1, 1);
        double b = Math.sqrt(7.5);
        assertThat(MAGRPOLoss.advantages(s0, scope("joint").scaleRewards("batch").build()))
                .containsExactly(new double[] {-3.5 / b, 3.5 / b}, within(tol));
        MAGRPOConfig raw = MAREINFORCEConfig.builder().jointMode("cross").advantageNormalizationScope("joint").build();
        assertThat(MAGRPOLoss.advantages(s0, raw)).containsExactly(new double[] {-3 / b, 4 / b}, within(tol));
        assertThat(MAGRPOLoss.advantages(s1, raw)).containsExactly(new double[] {-2 / b, 1 / b}, within(tol));
        assertThat(MAGRPOLoss.advantages(s0, raw.toBuilder().advantageNormalizationScope("agent").build()))
                .containsExactly(-1, 1);
        // scale none ignores the scope
        assertThat(MAGRPOLoss.advantages(s0, scope("joint").scaleRewards("none").build())).containsExactly(-3.5, 3.5);
        // team rewards, aligned: every agent's returns are the same numbers, so joint = agent
        double[][] team = {{0.5, 3}, {0.5, 3}};
        assertThat(MAGRPOLoss.advantages(sample(1, team), scope("joint").jointMode("aligned").build()))
                .containsExactly(MAGRPOLoss.advantages(sample(1, team), scope("agent").jointMode("aligned").build()));
    }

    @Test
    void theScopeIsAConfigFieldDefaultingToAgent() {
        assertThat(MAGRPOConfig.builder().build().advantageNormalizationScope()).isEqualTo(NormalizationScope.AGENT);
        MAGRPOConfig joint = MAGRPOConfig.fromMap(Map.of("advantage_normalization_scope", "joint"));
        assertThat(joint.advantageNormalizationScope()).isEqualTo(NormalizationScope.JOINT);
        assertThat(joint.toMap()).containsEntry("advantage_normalization_scope", "joint");
        assertThat(MAGRPOConfig.fromMap(joint.toMap())).isEqualTo(joint);
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("advantage_normalization_scope", "global")))
                .hasMessageContaining("advantage_normalization_scope must be one of: agent, joint (got \"global\")");
        assertThatThrownBy(() -> scope("joint").credit("counterfactual").build())
                .hasMessageContaining("advantage_normalization_scope: agent, or credit: shared");
        NodeSample noPeers = new NodeSample(0, 0, new long[] {1}, List.of(new long[1], new long[1]), new double[] {1, 2},
                null, 0, 0, 0, "test item", new boolean[2], null, null);
        assertThatThrownBy(() -> MAGRPOLoss.advantages(noPeers, scope("joint").build()))
                .hasMessageContaining("every agent's returns");
    }

    /**
     * A team reward returned through {@link AgentRewardFunction} (one-value vectors) trains exactly as the
     * plain function does: the same weights, byte for byte, and the same logged metrics, in aligned and
     * cross mode.
     */
    @Test
    void oneValueVectorsTrainAsTheTeamRewardDoes() {
        comlrl.reward.RewardFunction plain = ReinforceFixtures.lengthDifference();
        AgentRewardFunction asVectors = (completions, items) -> plain.score(completions, items).stream()
                .map(v -> new double[] {v}).toList();
        for (String mode : List.of("aligned", "cross")) {
            List<Map<String, byte[]>> weights = new ArrayList<>();
            List<List<Map<String, Double>>> logs = new ArrayList<>();
            for (comlrl.reward.RewardFunction reward : List.of(plain, asVectors)) {
                MAGRPOConfig config = fast(MAGRPOConfig.builder()).numAgents(2).jointMode(mode).rolloutBufferSize(1).build();
                try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel(agent.toString()).rewardFunc(reward)
                        .trainDataset(tasks(1)).args(config).verbose(false).build()) {
                    trainer.train();
                    weights.add(ReinforceFixtures.bytes(trainer.agents().get(1)));
                    assertThat(trainer.logHistory().get(0)).as(mode).containsKey("turn_1/reward_mean");
                    logs.add(trainer.logHistory());
                }
            }
            assertThat(weights.get(1)).as(mode).containsExactlyEntriesOf(weights.get(0));
            assertThat(logs.get(1)).as(mode).isEqualTo(logs.get(0));
        }
    }

    /** Records each agent's gradient at its optimizer step: whether any entry is non-zero. */
    static final class NonZero implements java.util.function.BiConsumer<Integer, comlrl.model.DecoderLm> {
        final List<int[]> steps = new ArrayList<>(); // {agent, nonZeroEntries}

        @Override
        public void accept(Integer agent, comlrl.model.DecoderLm model) {
            int nonZero = 0;
            for (Tensor p : model.namedParameters().values()) {
                if (p.grad() != null) {
                    for (float v : p.grad().toFloatArray()) {
                        nonZero += v != 0 ? 1 : 0;
                    }
                }
            }
            steps.add(new int[] {agent, nonZero});
        }
    }

    /**
     * Agent 0's reward is its completion's length (varies), agent 1's is 2 for every joint response: agent 1's
     * returns are equal within each group, so its advantages (mean baseline) and its gradient are exactly 0,
     * while agent 0's are not; each agent's logged reward is its own ({@code agent_1/turn_1/reward_mean} = 2),
     * the aggregate their mean. Also with {@code advantage_normalization_scope: joint}.
     */
    @Test
    void anAgentsGradientDependsOnlyOnItsOwnRewards() {
        AgentRewardFunction reward = (completions, items) -> {
            List<double[]> rows = new ArrayList<>();
            for (String c : completions.get(0)) {
                rows.add(new double[] {c.length(), 2.0});
            }
            return rows;
        };
        // joint normalisation keeps agent 1 at 0 too: with the mean baseline the pooled mean is 0
        for (String mode : List.of("aligned", "cross", "cross+joint")) {
            NonZero recorded = new NonZero();
            MAGRPOConfig config = fast(MAGRPOConfig.builder()).numAgents(2).jointMode(mode.substring(0, mode.indexOf('+') < 0
                    ? mode.length() : mode.indexOf('+'))).numGenerations(3).maxNewTokens(5).rolloutBufferSize(1)
                    .advantageNormalizationScope(mode.endsWith("joint") ? "joint" : "agent").build();
            try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel(agent.toString()).rewardFunc(reward)
                    .trainDataset(tasks(1)).args(config).verbose(false).gradientObserver(recorded).build()) {
                trainer.train();
                Map<String, Double> log = trainer.logHistory().get(0);
                assertThat(log.get("agent_1/turn_1/reward_mean")).as(mode).isEqualTo(2.0);
                assertThat(log.get("agent_0/turn_1/reward_mean")).as(mode).isNotEqualTo(2.0);
                assertThat(log.get("turn_1/reward_mean")).as(mode).isCloseTo(
                        (log.get("agent_0/turn_1/reward_mean") + 2.0) / 2, within(1e-12));
            }
            assertThat(recorded.steps).as(mode).hasSize(2);
            for (int[] step : recorded.steps) {
                if (step[0] == 1) {
                    assertThat(step[1]).as("%s: agent 1's non-zero gradient entries", mode).isZero();
                } else {
                    assertThat(step[1]).as("%s: agent 0's non-zero gradient entries", mode).isPositive();
                }
            }
        }
    }
}
