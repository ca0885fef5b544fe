package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.distributed.Codecs;
import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.tensor.Rounding;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import comlrl.distributed.RankWork;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The clipped surrogate of {@code num_iterations} &gt; 1 on its gradients: the old log-probabilities are
 * given explicitly as {@code log π_θ − ln r} for chosen ratios r, so every token's ratio, clip decision
 * and coefficient of {@code ∇log π(y_t)} is worked by hand; the expected gradient is
 * {@code Σ_t coef_t ∇log π(y_t)} from one autograd pass over the per-token log-probabilities.
 */
class ClippedSurrogateTest {
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

    /** ε = 0.2, ε_high = 0.28: r is clipped to [0.8, 1.28]; advantages A = R − mean R (scale_rewards none). */
    private static MAGRPOConfig.Builder<MAGRPOConfig> config() {
        return MAGRPOConfig.builder().numGenerations(2).maxNewTokens(8).scaleRewards("none").numIterations(2)
                .epsilon(0.2).epsilonHigh(0.28);
    }

    private static NodeSample sample(long[] prompt, List<long[]> completions, double[] returns) {
        return new NodeSample(0, 0, prompt, completions, returns, null, 0, 0, 0, "test item",
                new boolean[completions.size()], null, null);
    }

    /** log π_θ of each token, without gradient, as the loss computes it. */
    private static float[][] logprobs(NodeSample s) {
        return Scorer.tokenLogprobs(lm.model(), Collections.nCopies(s.completionIds().size(), s.promptIds()),
                s.completionIds(), lm.padId());
    }

    /** {@code old_t = log π_θ(y_t) − δ_t} in float32: the ratio is then exp(δ_t) up to one rounding of exp. */
    private static float[][] shifted(float[][] logp, double[][] delta) {
        float[][] old = new float[logp.length][];
        for (int k = 0; k < logp.length; k++) {
            old[k] = new float[logp[k].length];
            for (int t = 0; t < old[k].length; t++) {
                old[k][t] = (float) (logp[k][t] - delta[k][t]);
            }
        }
        return old;
    }

    /**
     * ρ_t = log π_θ − log π_old as the loss computes it: a float32 difference of two numbers near
     * −ln V ≈ −6.2 within a factor 2 of each other, hence exact (Sterbenz), so exp(ρ) in double is
     * the ratio the loss uses up to float32's rounding of exp.
     */
    private static double[][] logRatios(float[][] logp, float[][] old) {
        double[][] rho = new double[logp.length][];
        for (int k = 0; k < logp.length; k++) {
            rho[k] = new double[logp[k].length];
            for (int t = 0; t < rho[k].length; t++) {
                rho[k][t] = (double) logp[k][t] - old[k][t];
            }
        }
        return rho;
    }

    private static double[][] ln(double[][] ratios) {
        double[][] out = new double[ratios.length][];
        for (int k = 0; k < ratios.length; k++) {
            out[k] = java.util.Arrays.stream(ratios[k]).map(Math::log).toArray();
        }
        return out;
    }

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

    /** The gradient of {@code Σ_k Σ_t coef[k][t] · log π(y_{k,t})}, each completion scored alone. */
    private static Map<String, float[]> expectedGradient(NodeSample s, double[][] coef) {
        zeroGrad();
        try (Scope scope = Scope.open()) {
            for (int k = 0; k < coef.length; k++) {
                long[] y = s.completionIds().get(k);
                Tensor c = Tensor.ofDoubles(coef[k], lm.model().device()).toFloat().view(1, y.length);
                Scorer.score(lm.model(), List.of(s.promptIds()), List.of(y), lm.padId()).tokenLogprobs().mul(c).sum()
                        .backward();
            }
        }
        Map<String, float[]> out = gradients();
        zeroGrad();
        return out;
    }

    private static MAGRPOLoss.ClippedLosses clippedGradient(NodeSample s, float[][] old, MAGRPOConfig args) {
        zeroGrad();
        return MAGRPOLoss.accumulateClipped(lm.model(), List.of(s), Collections.singletonList(old), args, lm.padId(), RankWork.single(1));
    }

    /** Positions a gradient element sums over here: the completions scored (prompt + at most 4 tokens each). */
    private static int positions(NodeSample s) {
        return s.completionIds().size() * (s.promptIds().length + 4);
    }

    /**
     * Token level, R = [1, −1] → A = [1, −1], sequence_sum: c = 1/D = 1/(M·|B|) = 1/2. Per token the
     * term is {@code −c·min(r·A, clip(r)·A)}; unclipped its gradient is {@code −c·A·r·∇log π}, clipped 0.
     * <pre>
     *   y_1 (A = 1):  r = 1.5 → above 1.28, clipped: 0;   1.25 → inside (only because ε_high = 0.28 &gt; ε):
     *                 −0.625;   0.5 → below 0.8 but A &gt; 0, min keeps r·A: −0.25;   1 → −0.5
     *   y_2 (A = −1): r = 0.5 → below 0.8 with A &lt; 0, clipped: 0;   0.9 → +0.45;   1.5 → above but A &lt; 0,
     *                 min keeps r·A: +0.75
     *   L = −0.5·(1.28 + 1.25 + 0.5 + 1) + 0.5·(0.8 + 0.9 + 1.5) = −2.015 + 1.6 = −0.415
     * </pre>
     * 7 tokens in the loss, one clipped low, one clipped high.
     */
    @Test
    void tokenRatiosOutsideTheClipRangeHaveNoGradientWhereTheClipBinds() {
        NodeSample s = sample(lm.encode("Say hello."), List.of(new long[] {40, 41, 42, 43}, new long[] {50, 51, 52}),
                new double[] {1, -1});
        float[][] logp = logprobs(s);
        float[][] old = shifted(logp, ln(new double[][] {{1.5, 1.25, 0.5, 1.0}, {0.5, 0.9, 1.5}}));
        double[][] rho = logRatios(logp, old);
        boolean[][] clipped = {{true, false, false, false}, {true, false, false}};
        double[] a = {1, -1};
        double[][] coef = new double[2][];
        for (int k = 0; k < 2; k++) {
            coef[k] = new double[rho[k].length];
            for (int t = 0; t < coef[k].length; t++) {
                coef[k][t] = clipped[k][t] ? 0 : -0.5 * a[k] * Math.exp(rho[k][t]);
            }
        }
        assertThat(coef[0]).containsExactly(new double[] {0, -0.625, -0.25, -0.5}, within(1e-6));
        assertThat(coef[1]).containsExactly(new double[] {0, 0.45, 0.75}, within(1e-6));

        MAGRPOLoss.ClippedLosses got = clippedGradient(s, old, config().build());
        Rounding.assertSameGradients(gradients(), expectedGradient(s, coef), positions(s));
        // 7 float32 terms of size ≤ 1.5 (Σ|term| ≈ 3.6): the ratios, the clip bounds and the sum each round
        // at most u per term and a term passes through at most 16 roundings
        assertThat(got.losses()[0]).isCloseTo(-0.415, within(16 * 3.615 * Rounding.U));
        assertThat(new double[] {got.tokens(), got.lowClipped(), got.highClipped()}).containsExactly(7, 1, 1);
        // layer-wise recomputation (gradient_checkpointing) gives the same gradient
        clippedGradient(s, old, config().gradientCheckpointing(true).build());
        Rounding.assertSameGradients(gradients(), expectedGradient(s, coef), positions(s));
        zeroGrad();
    }

    /**
     * Sequence level (GSPO), R = [1, 1, −2] → A = [1, 1, −2], c = 1/3. One ratio per completion,
     * {@code s = exp(mean_t δ_t)}, on every token; unclipped, {@code Σ_t −c·A·s} has the gradient
     * {@code −c·A·s·Σ_t ∇log π(y_t)} (|y|·∇s, ∇s = s·(1/|y|)·Σ_t ∇log π):
     * <pre>
     *   y_1 (A = 1):  δ = [0.3, −0.1, 0.1] → s = e^0.1 ≈ 1.105 inside: each token −e^0.1/3
     *                 (token level would clip its first token: e^0.3 ≈ 1.35; a sum in place of the mean, e^0.3, all)
     *   y_2 (A = 1):  δ = [0.5, 0.3] → s = e^0.4 ≈ 1.49 &gt; 1.28: clipped, 0
     *   y_3 (A = −2): δ = [−0.4] → s = e^−0.4 ≈ 0.67 &lt; 0.8 with A &lt; 0: clipped, 0
     *   L = (1/3)·(−3·e^0.1 − 2·1.28 + 2·0.8) = −e^0.1 − 0.32
     * </pre>
     */
    @Test
    void sequenceRatiosClipWholeCompletions() {
        NodeSample s = sample(lm.encode("Why?"), List.of(new long[] {60, 61, 62}, new long[] {63, 64}, new long[] {65}),
                new double[] {1, 1, -2});
        float[][] logp = logprobs(s);
        float[][] old = shifted(logp, new double[][] {{0.3, -0.1, 0.1}, {0.5, 0.3}, {-0.4}});
        double[][] rho = logRatios(logp, old);
        double seq = Math.exp((rho[0][0] + rho[0][1] + rho[0][2]) / 3);
        double[][] coef = {{-seq / 3, -seq / 3, -seq / 3}, {0, 0}, {0}};
        assertThat(seq).isCloseTo(Math.exp(0.1), within(1e-6));

        MAGRPOConfig args = config().numGenerations(3).importanceSamplingLevel("sequence").build();
        MAGRPOLoss.ClippedLosses got = clippedGradient(s, old, args);
        Rounding.assertSameGradients(gradients(), expectedGradient(s, coef), positions(s));
        assertThat(got.losses()[0]).isCloseTo(-Math.exp(0.1) - 0.32, within(16 * 1.5 * Rounding.U));
        // 6 tokens; y_2's 2 clipped high, y_3's 1 clipped low
        assertThat(new double[] {got.tokens(), got.lowClipped(), got.highClipped()}).containsExactly(6, 1, 2);
        zeroGrad();
    }

    /** Two samples of lengths [3, 1, 4] and [2, 5] ({@link #muOneSamples}): every loss type at once. */
    private static List<NodeSample> muOneSamples() {
        long eos = lm.padId();
        return List.of(
                sample(lm.encode("Say hello."), List.of(new long[] {40, 41, eos}, new long[] {eos}, new long[] {42, 43, 44, 45}),
                        new double[] {1, 0, 2.5}),
                sample(lm.encode("Why?"), List.of(new long[] {46, eos}, new long[] {47, 48, 49, 50, 51}),
                        new double[] {2, -1}));
    }

    /**
     * μ = 1 is today's update, untouched: {@link MAGRPOLoss#accumulate} adds exactly (bit for bit) the
     * gradient of {@link Scorer#backwardWeighted} with the weights of {@link MAGRPOLoss#weights}, one
     * sample at a time, which is what it computed before the clipped surrogate existed.
     */
    @Test
    void oneIterationKeepsTheWeightedLogLikelihoodBitForBit() {
        List<NodeSample> b = muOneSamples();
        MAGRPOConfig args = config().numIterations(1).lossType(LossType.GRPO).numGenerations(3).build();
        zeroGrad();
        double[] losses = MAGRPOLoss.accumulate(lm.model(), b, args, lm.padId(), RankWork.single(1));
        Map<String, float[]> got = gradients();
        zeroGrad();
        double[][] w = MAGRPOLoss.weights(b, args);
        double[] want = new double[b.size()];
        for (int j = 0; j < b.size(); j++) {
            NodeSample s = b.get(j);
            try (Scope scope = Scope.open()) {
                want[j] = b.size() * Scorer.backwardWeighted(lm.model(), Collections.nCopies(s.completionIds().size(),
                        s.promptIds()), s.completionIds(), lm.padId(), w[j], false);
            }
        }
        Map<String, float[]> old = gradients();
        for (String name : old.keySet()) {
            assertThat(got.get(name)).as(name).containsExactly(old.get(name));
        }
        assertThat(losses).containsExactly(want);
        zeroGrad();
    }

    /**
     * The first pass after sampling: π_old recorded by {@link MAGRPOLoss#behaviourLogprobs} is exactly
     * what the loss computes for π_θ (same forward, no gradient; with the prompt shared by the rows),
     * so every ratio is 1, nothing is
     * clipped, and the gradient is μ = 1's {@code Σ w Σ_t ∇log π} (a sum in another order: rounding
     * apart). The loss value is then {@code |B|·Σ_k w_k·|y_k|}.
     */
    @Test
    void theFirstPassHasRatioOneAndTheOnPolicyGradient() {
        List<NodeSample> b = muOneSamples();
        for (LossType type : LossType.values()) {
            MAGRPOConfig args = config().lossType(type).numGenerations(3).build();
            for (NodeSample s : b) {
                float[][] old = MAGRPOLoss.behaviourLogprobs(lm.model(), s, lm.padId(), RankWork.single(1));
                try (Scope scope = Scope.open()) {
                    Scorer.Scores sc = Scorer.score(lm.model(), Collections.nCopies(old.length, s.promptIds()),
                            s.completionIds(), lm.padId());
                    float[] all = sc.tokenLogprobs().toFloatArray();
                    int t = all.length / old.length;
                    // each completion's own log-probabilities, in order: the rows written out (score)
                    // against their shared prompt (what the loss computes, and behaviourLogprobs with it:
                    // SharedPromptScoringTest holds those two equal bit for bit); the same values but for
                    // the order of float32 sums of at most 16 terms, so within 16 ulps of each value
                    for (int k = 0; k < old.length; k++) {
                        int len = old[k].length;
                        float[] written = java.util.Arrays.copyOfRange(all, k * t + t - len, k * t + t);
                        assertThat(old[k]).hasSize(len);
                        for (int i = 0; i < len; i++) {
                            assertThat(old[k][i]).as("row %d token %d", k, i).isCloseTo(written[i],
                                    within(16 * Math.ulp(written[i])));
                        }
                    }
                }
            }
            zeroGrad();
            MAGRPOLoss.accumulate(lm.model(), b, args, lm.padId(), RankWork.single(1));
            Map<String, float[]> onPolicy = gradients();
            zeroGrad();
            List<float[][]> old = b.stream().map(s -> MAGRPOLoss.behaviourLogprobs(lm.model(), s, lm.padId(),
                    RankWork.single(1))).toList();
            MAGRPOLoss.ClippedLosses got = MAGRPOLoss.accumulateClipped(lm.model(), b, old, args, lm.padId(),
                    RankWork.single(1));
            int positions = 2 * 3 * (Math.max(b.get(0).promptIds().length, b.get(1).promptIds().length) + 5);
            Rounding.assertSameGradients(gradients(), onPolicy, positions);
            assertThat(new double[] {got.tokens(), got.lowClipped(), got.highClipped()}).containsExactly(15, 0, 0);
            double[][] w = MAGRPOLoss.weights(b, args);
            for (int j = 0; j < b.size(); j++) {
                double want = 0;
                for (int k = 0; k < w[j].length; k++) {
                    want += b.size() * w[j][k] * b.get(j).completionIds().get(k).length;
                }
                // at most 5 float32 terms of size ≤ |B|·max|w|·5 per sample, each rounded a few times
                assertThat(got.losses()[j]).as(type + " sample " + j).isCloseTo(want, within(1e-5));
            }
            zeroGrad();
        }
    }

    /** The first optimizer step's gradient of agent 0, the number of steps, and the log events of a run. */
    private record Run(List<Map<String, float[]>> steps, List<Map<String, Double>> events) {
    }

    private static Run train(Path a, int iterations) {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numGenerations(4).maxNewTokens(6).numIterations(iterations)
                .epsilon(0.2).rolloutBufferSize(2).trainBatchSize(1).build();
        MAGRPOUpdateTest.GradientRecorder recorder = new MAGRPOUpdateTest.GradientRecorder();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agentModel(a.toString()).numAgents(1)
                .rewardFunc(ReinforceFixtures.ownLength()).trainDataset(tasks(2)).args(config).verbose(false)
                .gradientObserver(recorder).build()) {
            t.train();
            return new Run(recorder.steps, t.logHistory());
        }
    }

    /**
     * Through the trainer: μ = 2 steps each buffered minibatch twice (2 items → one drain of 2
     * minibatches: 2 steps at μ = 1, 4 at μ = 2, in the order 1, 2, 1, 2); its first step is μ = 1's
     * (ratio 1, the same rollouts); the clip fractions are logged with μ = 2 only.
     */
    @Test
    void severalIterationsStepEachMinibatchAgainAndLogTheClipRatio(@TempDir Path tmp) {
        Path a = TinyAgents.create(tmp.resolve("a"), 5);
        Run one = train(a, 1);
        Run two = train(a, 2);
        assertThat(one.steps()).hasSize(2);
        assertThat(two.steps()).hasSize(4);
        Rounding.assertSameGradients(two.steps().get(0), one.steps().get(0), 4 * (17 + 6));
        assertThat(one.events()).allSatisfy(e -> assertThat(e.keySet()).noneMatch(k -> k.contains("clip_ratio")));
        Map<String, Double> last = two.events().stream().filter(e -> e.containsKey("turn_1/policy_loss")).reduce((x, y) -> y)
                .orElseThrow();
        assertThat(last).containsKeys("turn_1/clip_ratio/low_mean", "turn_1/clip_ratio/high_mean",
                "turn_1/clip_ratio/region_mean", "agent_0/turn_1/clip_ratio/region_mean");
        assertThat(last.get("turn_1/clip_ratio/region_mean")).isBetween(0.0, 1.0)
                .isEqualTo(last.get("turn_1/clip_ratio/low_mean") + last.get("turn_1/clip_ratio/high_mean"));
    }

    /**
     * TurnStats with clip counts: agent 0 with 10 tokens, 1 low, 2 high; agent 1 with 4 tokens, 1 high.
     * Per agent 0.1 / 0.2 / 0.3 and 0 / 0.25 / 0.25; the aggregate the mean of the agents' fractions:
     * 0.05 / 0.225 / 0.275. Without clip counts the codec sends the 7 on-policy fields, as before.
     */
    @Test
    void clipRatiosAreFractionsOfTheTokensInTheLossAveragedOverAgents() {
        NodeSample s = sample(new long[] {1}, List.of(new long[] {2}), new double[] {0});
        TurnStats a0 = new TurnStats();
        a0.add(s, 0, false);
        a0.addClipped(10, 1, 2);
        TurnStats a1 = new TurnStats();
        a1.add(s, 0, false);
        a1.addClipped(4, 0, 1);
        Map<String, Double> out = new LinkedHashMap<>();
        a0.put(out, "agent_0/", 0, 0, false);
        TurnStats.meanOf(List.of(a0, a1)).put(out, "", 0, 0, false);
        assertThat(out.get("agent_0/turn_1/clip_ratio/low_mean")).isEqualTo(0.1);
        assertThat(out.get("agent_0/turn_1/clip_ratio/high_mean")).isEqualTo(0.2);
        assertThat(out.get("agent_0/turn_1/clip_ratio/region_mean")).isCloseTo(0.3, within(1e-16));
        assertThat(out.get("turn_1/clip_ratio/low_mean")).isEqualTo(0.05);
        assertThat(out.get("turn_1/clip_ratio/high_mean")).isCloseTo(0.225, within(1e-16));
        assertThat(out.get("turn_1/clip_ratio/region_mean")).isCloseTo(0.275, within(1e-16));
        TurnStats back = Codecs.decode(Codecs.encode(a0, TurnStats.CODEC), "a0", TurnStats.CODEC);
        Map<String, Double> again = new LinkedHashMap<>();
        back.put(again, "agent_0/", 0, 0, false);
        assertThat(again).containsAllEntriesOf(out.entrySet().stream().filter(e -> e.getKey().startsWith("agent_0/"))
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
        TurnStats plain = new TurnStats();
        plain.add(s, 0, false);
        assertThat(Codecs.decode(Codecs.encode(plain, TurnStats.CODEC), "plain", Codecs.DOUBLES)).hasSize(7);
    }

    @Test
    void contradictionsAreRefusedAtBuildNamingTheFieldAndTheFix() {
        MAGRPOConfig defaults = MAGRPOConfig.builder().build();
        assertThat(defaults.numIterations()).isEqualTo(1);
        assertThat(defaults.epsilon()).isEqualTo(0.2);
        assertThat(defaults.epsilonHigh()).isEqualTo(0.2);
        assertThat(defaults.importanceSamplingLevel()).isEqualTo(ImportanceSamplingLevel.TOKEN);
        assertThat(defaults.toMap()).containsEntry("num_iterations", 1).containsEntry("epsilon", 0.2)
                .containsEntry("epsilon_high", null).containsEntry("importance_sampling_level", "token");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("num_iterations", 0)))
                .hasMessageContaining("num_iterations must be >= 1");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("epsilon", 0.0)))
                .hasMessageContaining("epsilon must be a finite number > 0");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("epsilon", 0.3, "epsilon_high", 0.2)))
                .hasMessageContaining("epsilon_high (0.2) must be at least epsilon (0.3)")
                .hasMessageContaining("set epsilon_high to null");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("importance_sampling_level", "sentence")))
                .hasMessageContaining("importance_sampling_level must be one of: token, sequence (got \"sentence\")");
        // sequence with one iteration is allowed (every ratio is 1: the on-policy update)
        MAGRPOConfig gspo = MAGRPOConfig.fromMap(Map.of("importance_sampling_level", "sequence", "epsilon_high", 0.28));
        assertThat(gspo.epsilonHigh()).isEqualTo(0.28);
        assertThat(MAGRPOConfig.fromMap(gspo.toMap())).isEqualTo(gspo);
    }
}
