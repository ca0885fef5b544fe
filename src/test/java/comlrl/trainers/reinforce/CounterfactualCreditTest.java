package comlrl.trainers.reinforce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.rl.JointMode;
import comlrl.rl.RolloutNode;
import comlrl.rl.TreeReturns;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import comlrl.distributed.RankWork;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code credit: counterfactual} ({@link Credit}, {@link MAGRPOLoss#advantages(List, MAGRPOConfig)}): the
 * per-context returns of two and three agents, the advantages worked by hand, their relation to shared
 * credit, and the gradient of the real loss.
 *
 * <p>The two-agent node used throughout, G = 2, joint index j = 2·k_0 + k_1:
 * <pre>
 *   R = [R(0,0), R(0,1), R(1,0), R(1,1)] = [1, 0, 3, 5]
 *   agent 0, context c = k_1:  R_0[k][c] = [[1, 0], [3, 5]]    contexts: c0 = [1, 3], c1 = [0, 5]
 *   agent 1, context c = k_0:  R_1[k][c] = [[1, 3], [0, 5]]    contexts: c0 = [1, 0], c1 = [3, 5]
 *   shared credit: R_0 = [1, 8], R_1 = [4, 5]
 * </pre>
 */
class CounterfactualCreditTest {
    @TempDir
    static Path models;
    static CausalLm lm;

    @BeforeAll
    static void load() {
        lm = TinyAgents.load(TinyAgents.create(models.resolve("a"), 29));
    }

    @AfterAll
    static void close() {
        lm.close();
    }

    static final double[] TWO_AGENTS = {1, 0, 3, 5};
    static final double[][] AGENT_0 = {{1, 0}, {3, 5}};   // [G][C]
    static final double[][] AGENT_1 = {{1, 3}, {0, 5}};

    /** Agent i's sample of a node: G completions of one token, shared returns Σ_c, per-context returns as given. */
    private static NodeSample sample(int agent, double[][] contextReturns, double[] kls) {
        return sample(agent, new long[] {1}, java.util.Collections.nCopies(contextReturns.length, new long[1]),
                contextReturns, kls);
    }

    private static NodeSample sample(int agent, long[] prompt, List<long[]> completions, double[][] contextReturns,
            double[] kls) {
        double[] shared = new double[contextReturns.length];
        for (int k = 0; k < shared.length; k++) {
            shared[k] = java.util.Arrays.stream(contextReturns[k]).sum();
        }
        return new NodeSample(agent, 0, prompt, completions, shared, kls, 0, 0, 0, "test item",
                new boolean[completions.size()], contextReturns, null);
    }

    private static MAGRPOConfig.Builder<MAGRPOConfig> counterfactual() {
        return MAGRPOConfig.builder().jointMode("cross").credit("counterfactual");
    }

    @Test
    void contextReturnsOfTwoAndThreeAgents() {
        double[][][] two = JointMode.CROSS.contextReturns(TWO_AGENTS, 2, 2);
        assertThat(two[0]).isDeepEqualTo(AGENT_0);
        assertThat(two[1]).isDeepEqualTo(AGENT_1);
        // three agents, G = 2, j = 4·k_0 + 2·k_1 + k_2, C = 4:
        //   R = [2, 0, 1, 0, 0, 3, 0, 1]
        //   agent 0, c = 2·k_1 + k_2: R_0[k][c] = R[4k + c]         = [[2, 0, 1, 0], [0, 3, 0, 1]]
        //   agent 1, c = 2·k_0 + k_2: R_1[0] = R[0], R[1], R[4], R[5] = [2, 0, 0, 3]; R_1[1] = R[2], R[3], R[6], R[7] = [1, 0, 0, 1]
        //   agent 2, c = 2·k_0 + k_1: R_2[k][c] = R[2c + k]         = [[2, 1, 0, 0], [0, 0, 3, 1]]
        double[] r3 = {2, 0, 1, 0, 0, 3, 0, 1};
        double[][][] three = JointMode.CROSS.contextReturns(r3, 2, 3);
        assertThat(three[0]).isDeepEqualTo(new double[][] {{2, 0, 1, 0}, {0, 3, 0, 1}});
        assertThat(three[1]).isDeepEqualTo(new double[][] {{2, 0, 0, 3}, {1, 0, 0, 1}});
        assertThat(three[2]).isDeepEqualTo(new double[][] {{2, 1, 0, 0}, {0, 0, 3, 1}});
        // summed over the contexts: shared credit's R_i[k]
        double[][] shared = JointMode.CROSS.perAgentReturns(r3, 2, 3);
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < 2; k++) {
                assertThat(java.util.Arrays.stream(three[i][k]).sum()).isEqualTo(shared[i][k]);
            }
        }
        // one agent: one context, R_0[k][0] = R_k; aligned has no contexts
        assertThat(JointMode.CROSS.contextReturns(new double[] {4, 7}, 2, 1)).isDeepEqualTo(new double[][][] {{{4}, {7}}});
        assertThatThrownBy(() -> JointMode.ALIGNED.contextReturns(new double[] {1, 2}, 2, 2))
                .hasMessageContaining("cross");
    }

    @Test
    void twoAgentAdvantagesAsWorkedByHand() {
        NodeSample s0 = sample(0, AGENT_0, null);
        NodeSample s1 = sample(1, AGENT_1, null);
        // scale none, mean baseline: agent 0: c0 [1, 3] → [−1, 1], c1 [0, 5] → [−2.5, 2.5], mean [−1.75, 1.75]
        //                            agent 1: c0 [1, 0] → [0.5, −0.5], c1 [3, 5] → [−1, 1], mean [−0.25, 0.25]
        MAGRPOConfig none = counterfactual().scaleRewards("none").build();
        assertThat(MAGRPOLoss.advantages(s0, none)).containsExactly(-1.75, 1.75);
        assertThat(MAGRPOLoss.advantages(s1, none)).containsExactly(-0.25, 0.25);
        // scale group (G = 2: ±1 in a context where the two differ): agent 0: [−1, 1] in both → [−1, 1];
        // agent 1: [1, −1] then [−1, 1] → [0, 0]: its completion 1 helps in one context and hurts in the other.
        // Shared credit gives agent 1 R = [4, 5] → [−1, 1].
        MAGRPOConfig group = counterfactual().build();
        assertThat(MAGRPOLoss.advantages(s0, group)).containsExactly(-1, 1);
        assertThat(MAGRPOLoss.advantages(s1, group)).containsExactly(0, 0);
        assertThat(MAGRPOLoss.advantages(s1, MAGRPOConfig.builder().jointMode("cross").build())).containsExactly(-1, 1);
        // scale batch over B = {s0, s1}: the std of every R'(k, c) = {1, 0, 3, 5} twice: mean 2.25,
        // squares 1.5625 + 5.0625 + 0.5625 + 7.5625 = 14.75, σ = sqrt(14.75 / 4) = sqrt(3.6875)
        // (shared credit's R {1, 8, 4, 5} would give σ = 2.5)
        double sigma = Math.sqrt(3.6875);
        double[][] batch = MAGRPOLoss.advantages(List.of(s0, s1), counterfactual().scaleRewards("batch").build());
        assertThat(batch[0]).containsExactly(new double[] {-1.75 / sigma, 1.75 / sigma}, within(1e-15));
        assertThat(batch[1]).containsExactly(new double[] {-0.25 / sigma, 0.25 / sigma}, within(1e-15));
        // rloo, none (G = 2: A_k = R_k − R_other): agent 0: [−2, 2], [−5, 5] → [−3.5, 3.5];
        // agent 1: [1, −1], [−2, 2] → [−0.5, 0.5]
        MAGRPOConfig rloo = MARLOOConfig.builder().jointMode("cross").credit("counterfactual").scaleRewards("none").build();
        assertThat(MAGRPOLoss.advantages(s0, rloo)).containsExactly(-3.5, 3.5);
        assertThat(MAGRPOLoss.advantages(s1, rloo)).containsExactly(-0.5, 0.5);
        // reference KL, β = 1, KL_0 = [0.5, 0.1], none: c0 [0.5, 2.9] → [−1.2, 1.2], c1 [−0.5, 4.9] → [−2.7, 2.7],
        // mean [−1.95, 1.95]: the KL weighs β per context (shared: R' = [0.5, 7.9] → [−3.7, 3.7], whose half is −1.85)
        MAGRPOConfig kl = counterfactual().scaleRewards("none").referenceKlEnabled(true).referenceKlCoef(1.0).build();
        assertThat(MAGRPOLoss.advantages(sample(0, AGENT_0, new double[] {0.5, 0.1}), kl))
                .containsExactly(new double[] {-1.95, 1.95}, within(1e-15));
    }

    @Test
    void threeAgentAdvantagesAsWorkedByHand() {
        // the three-agent node of contextReturnsOfTwoAndThreeAgents, contexts as columns [k = 0, k = 1]:
        //   agent 0: c0 [2, 0], c1 [0, 3], c2 [1, 0], c3 [0, 1]
        //   agent 1: c0 [2, 1], c1 [0, 0], c2 [0, 0], c3 [3, 1]
        //   agent 2: c0 [2, 0], c1 [1, 0], c2 [0, 3], c3 [0, 1]
        NodeSample s0 = sample(0, new double[][] {{2, 0, 1, 0}, {0, 3, 0, 1}}, null);
        NodeSample s1 = sample(1, new double[][] {{2, 0, 0, 3}, {1, 0, 0, 1}}, null);
        NodeSample s2 = sample(2, new double[][] {{2, 1, 0, 0}, {0, 0, 3, 1}}, null);
        // none, mean: agent 0: [1, −1], [−1.5, 1.5], [0.5, −0.5], [−0.5, 0.5] → Σ = [−0.5, 0.5] → /4 = [−0.125, 0.125]
        //             agent 1: [0.5, −0.5], [0, 0], [0, 0], [1, −1] → [1.5, −1.5] / 4 = [0.375, −0.375]
        //             agent 2: [1, −1], [0.5, −0.5], [−1.5, 1.5], [−0.5, 0.5] → [−0.5, 0.5] / 4 = [−0.125, 0.125]
        MAGRPOConfig none = counterfactual().numAgents(3).scaleRewards("none").build();
        assertThat(MAGRPOLoss.advantages(s0, none)).containsExactly(-0.125, 0.125);
        assertThat(MAGRPOLoss.advantages(s1, none)).containsExactly(0.375, -0.375);
        assertThat(MAGRPOLoss.advantages(s2, none)).containsExactly(-0.125, 0.125);
        // group: agent 0: [1, −1], [−1, 1], [1, −1], [−1, 1] → [0, 0]; agent 1: [1, −1], [0, 0], [0, 0], [1, −1]
        // → [0.5, −0.5]; agent 2: [1, −1], [1, −1], [−1, 1], [−1, 1] → [0, 0]. (Shared: ±1 for every agent.)
        MAGRPOConfig group = counterfactual().numAgents(3).build();
        assertThat(MAGRPOLoss.advantages(s0, group)).containsExactly(0, 0);
        assertThat(MAGRPOLoss.advantages(s1, group)).containsExactly(0.5, -0.5);
        assertThat(MAGRPOLoss.advantages(s2, group)).containsExactly(0, 0);
    }

    /**
     * Σ_c (R(k,c) − mean_k' R(k',c)) = R_i[k] − mean_k' R_i[k']: with the mean baseline and scale none,
     * counterfactual A_i = shared A_i / C, for every agent of a G = 3, N = 2 node and of the N = 3 node.
     * Sums of a few numbers below 10 (exact in binary halves and quarters, else within a few ulps).
     */
    @Test
    void withTheMeanBaselineAndNoScalingItIsSharedCreditOverC() {
        double[] r2 = {0.5, 2, -1, 4, 0, 1.5, 3, -2, 1};   // G = 3, N = 2, C = 3
        double[] r3 = {2, 0, 1, 0, 0, 3, 0, 1};            // G = 2, N = 3, C = 4
        for (double[] r : List.of(r2, r3)) {
            int n = r.length == 9 ? 2 : 3;
            int g = r.length == 9 ? 3 : 2;
            double[][][] ctx = JointMode.CROSS.contextReturns(r, g, n);
            MAGRPOConfig cf = counterfactual().numAgents(n).numGenerations(Math.max(g, 2)).scaleRewards("none").build();
            MAGRPOConfig shared = cf.toBuilder().credit(Credit.SHARED).build();
            for (int i = 0; i < n; i++) {
                NodeSample s = sample(i, ctx[i], null);
                double[] a = MAGRPOLoss.advantages(s, cf);
                double[] b = MAGRPOLoss.advantages(s, shared);
                int contexts = ctx[i][0].length;
                for (int k = 0; k < g; k++) {
                    assertThat(a[k]).as("agent %d, completion %d", i, k).isCloseTo(b[k] / contexts, within(1e-14));
                }
            }
        }
    }

    /** Every parameter's gradient, by name (zeros where none). */
    private static Map<String, float[]> gradients() {
        Map<String, float[]> out = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor> e : lm.model().namedParameters().entrySet()) {
            Tensor g = e.getValue().grad();
            out.put(e.getKey(), g == null ? new float[(int) e.getValue().numel()] : g.toFloatArray());
        }
        return out;
    }

    private static void zeroGrad() {
        lm.model().parameters().forEach(Tensor::zeroGrad);
    }

    /**
     * B = {agent 0's and agent 1's samples of the two-agent node}, scale none: A_0 = [−1.75, 1.75],
     * A_1 = [−0.25, 0.25]; sequence_sum, M = 2, |B| = 2: w = −A / 4 = [0.4375, −0.4375], [0.0625, −0.0625].
     * The real loss's gradient is Σ w · ∇ Σ_t log π.
     */
    @Test
    void theGradientOfTheLossIsTheCounterfactuallyWeightedSumOfLogLikelihoodGradients() {
        long eos = lm.padId();
        List<NodeSample> b = List.of(
                sample(0, lm.encode("Say hello."), List.of(new long[] {40, 41, eos}, new long[] {42, eos}), AGENT_0, null),
                sample(1, lm.encode("Why?"), List.of(new long[] {50, eos}, new long[] {51, 52, 53, eos}), AGENT_1, null));
        double[][] want = {{0.4375, -0.4375}, {0.0625, -0.0625}};
        assertThat(MAGRPOLoss.weights(b, counterfactual().scaleRewards("none").build())).isDeepEqualTo(want);
        zeroGrad();
        MAGRPOLoss.accumulate(lm.model(), b, counterfactual().scaleRewards("none").build(), lm.padId(), RankWork.single(1));
        Map<String, float[]> got = gradients();
        zeroGrad();
        try (Scope scope = Scope.open()) {
            for (int j = 0; j < 2; j++) {
                for (int k = 0; k < 2; k++) {
                    Scorer.score(lm.model(), List.of(b.get(j).promptIds()), List.of(b.get(j).completionIds().get(k)),
                            lm.padId()).sequenceLogprobs().sum().mul(want[j][k]).backward();
                }
            }
        }
        // 2 samples × 2 completions × (the longer prompt + 4 completion tokens) positions
        int prompt = Math.max(b.get(0).promptIds().length, b.get(1).promptIds().length);
        comlrl.tensor.Rounding.assertSameGradients(got, gradients(), 2 * 2 * (prompt + 4));
        zeroGrad();
    }

    @Test
    void counterfactualCreditNeedsCrossJointActions() {
        assertThat(MAGRPOConfig.builder().build().credit()).isEqualTo(Credit.SHARED);
        assertThatThrownBy(() -> MAGRPOConfig.builder().credit("counterfactual").build())
                .hasMessageContaining("credit=\"counterfactual\"").hasMessageContaining("joint_mode=\"cross\"")
                .hasMessageContaining("joint_mode=\"aligned\"").hasMessageContaining("set joint_mode: cross, or credit: shared");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("credit", "coma")))
                .hasMessageContaining("credit must be one of: shared, counterfactual (got \"coma\")");
        MAGRPOConfig cf = MAGRPOConfig.fromMap(Map.of("credit", "counterfactual", "joint_mode", "cross"));
        assertThat(cf.credit()).isEqualTo(Credit.COUNTERFACTUAL);
        assertThat(cf.toMap()).containsEntry("credit", "counterfactual");
        assertThat(MAGRPOConfig.fromMap(cf.toMap())).isEqualTo(cf);
        assertThat(MAGRPOConfig.keys()).contains("credit");
        // a sample without per-context returns cannot be credited counterfactually
        NodeSample noContexts = new NodeSample(0, 0, new long[] {1}, List.of(new long[1], new long[1]), new double[] {1, 2},
                null, 0, 0, 0, "test item", new boolean[2], null, null);
        assertThatThrownBy(() -> MAGRPOLoss.advantages(noContexts, cf)).hasMessageContaining("per context");
    }

    /**
     * Multi-turn: each node's per-context returns are its joint actions' tree returns (children's mean
     * return included). Root K = 4 joint rewards r = [1, 0, 0.5, 2]; child of joint action 3 has rewards
     * [1, 1, 3, 3] (mean 2), the other children mean 0: R = [1, 0, 0.5, 4]; agent 0 (c = k_1):
     * R_0[k][c] = R[2k + c] = [[1, 0], [0.5, 4]]; agent 1 (c = k_0): R_1[k][c] = R[2c + k] = [[1, 0.5], [0, 4]].
     */
    @Test
    void treeReturnsPerContextIncludeTheChildren() {
        RolloutNode zero = RolloutNode.of(new double[4], List.of());
        RolloutNode root = RolloutNode.of(new double[] {1, 0, 0.5, 2},
                List.of(zero, zero, zero, RolloutNode.of(new double[] {1, 1, 3, 3}, List.of())));
        double[][][] ctx = TreeReturns.compute(root).contextReturns(JointMode.CROSS, 2, 2);
        assertThat(ctx[0]).isDeepEqualTo(new double[][] {{1, 0}, {0.5, 4}});
        assertThat(ctx[1]).isDeepEqualTo(new double[][] {{1, 0.5}, {0, 4}});
    }

    /** A two-turn run with counterfactual credit trains both agents (every sample has its contexts). */
    @Test
    void aTwoTurnRunTrainsBothAgents(@TempDir Path tmp) {
        MAGRPOConfig config = ReinforceFixtures.fast(counterfactual()).numTurns(2).earlyTerminationThreshold(null).build();
        MAGRPOUpdateTest.GradientRecorder recorder = new MAGRPOUpdateTest.GradientRecorder();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder()
                .agents(List.of(TinyAgents.create(tmp.resolve("a"), 3).toString(), TinyAgents.create(tmp.resolve("b"), 4).toString()))
                .rewardFunc(ReinforceFixtures.lengthDifference()).trainDataset(ReinforceFixtures.tasks(2)).args(config)
                .externalTransition(ctx -> ctx.agentCompletions().stream().map(c -> "Improve: " + c).toList())
                .verbose(false).gradientObserver(recorder).build()) {
            t.train();
            // 2 items, each K = 4 joint actions at the root and one child node of 4 below each: 2 · (4 + 4·4)
            assertThat(t.envStep()).isEqualTo(40);
        }
        assertThat(recorder.steps).isNotEmpty();
        assertThat(recorder.steps).allSatisfy(step -> assertThat(step.values()).allSatisfy(g -> {
            for (float x : g) {
                assertThat(Float.isFinite(x)).isTrue();
            }
        }));
    }

    /**
     * The trainer hands each agent its own contexts: with a reward of agent 0's completion alone,
     * R(k_0, k_1) = |y_0| / 10, every context of agent 1 holds G equal returns, so its advantages and
     * gradient are exactly 0, while agent 0's are not (its G = 4 completions differ in length).
     */
    @Test
    void aRewardOfAgent0AloneMovesOnlyAgent0(@TempDir Path tmp) {
        MAGRPOConfig config = ReinforceFixtures.fast(counterfactual()).numGenerations(4).build();
        Map<Integer, Double> gradientNorm = new java.util.TreeMap<>();
        comlrl.reward.RewardFunction agent0Length = (completions, items) ->
                completions.get(0).stream().map(y -> y.length() / 10.0).toList();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder()
                .agents(List.of(TinyAgents.create(tmp.resolve("a"), 5).toString(), TinyAgents.create(tmp.resolve("b"), 6).toString()))
                .rewardFunc(agent0Length).trainDataset(ReinforceFixtures.tasks(2)).args(config).verbose(false)
                .gradientObserver((agent, model) -> {
                    double sum = 0;
                    for (Tensor p : model.parameters()) {
                        if (p.grad() != null) {
                            for (float x : p.grad().toFloatArray()) {
                                sum += Math.abs(x);
                            }
                        }
                    }
                    gradientNorm.merge(agent, sum, Double::sum);
                }).build()) {
            t.train();
        }
        assertThat(gradientNorm).containsOnlyKeys(0, 1);
        assertThat(gradientNorm.get(0)).isGreaterThan(0);
        assertThat(gradientNorm.get(1)).isZero();
    }
}
