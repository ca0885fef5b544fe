package comlrl.trainers.reinforce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
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
 * The MAGRPO loss on its gradients (not through an optimizer step, which only shows their signs):
 * hand-worked advantages and weights, ∇L equal to the weighted sum of per-completion log-likelihood
 * gradients, and a minibatch of 8 scored in one batch equal to 8 samples accumulated one by one.
 */
class MAGRPOLossTest {
    @TempDir
    static Path models;
    static CausalLm lm;

    @BeforeAll
    static void load() {
        lm = TinyAgents.load(TinyAgents.create(models.resolve("a"), 17));
    }

    @AfterAll
    static void close() {
        lm.close();
    }

    private static NodeSample sample(long[] prompt, List<long[]> completions, double[] returns, double[] kls) {
        return new NodeSample(0, 0, prompt, completions, returns, kls, 0, 0, 0, "test item",
                new boolean[completions.size()], null, null);
    }

    @Test
    void advantagesAreShapedThenBaselinedThenNormalised() {
        // R = [1, 2, 4, 1], KL = [0.2, 0, 0.4, 0], β = 0.5: R' = [0.9, 2, 3.8, 1]
        // mean R' = 1.925 → A = [−1.025, 0.075, 1.875, −0.925]
        // std_pop = sqrt((1.050625 + 0.005625 + 3.515625 + 0.855625) / 4) = sqrt(1.356875) = 1.1648497757...
        MAGRPOConfig args = MAGRPOConfig.builder().referenceKlEnabled(true).referenceKlCoef(0.5).build();
        NodeSample s = sample(new long[] {1}, List.of(new long[1], new long[1], new long[1], new long[1]),
                new double[] {1, 2, 4, 1}, new double[] {0.2, 0, 0.4, 0});
        double std = Math.sqrt(1.356875);
        assertThat(MAGRPOLoss.advantages(s, args))
                .containsExactly(new double[] {-1.025 / std, 0.075 / std, 1.875 / std, -0.925 / std}, within(1e-12));
        MAGRPOConfig raw = args.toBuilder().advantageNormalization(false).build();
        assertThat(MAGRPOLoss.advantages(s, raw)).containsExactly(new double[] {-1.025, 0.075, 1.875, -0.925}, within(1e-12));
    }

    @Test
    void weightsAreMinusTheAdvantageOverNonEmptyCompletionsAndMinibatch() {
        // M = 2 non-empty completions, |B| = 2: w = −A / (2·2); the empty completion has no term (w = 0)
        NodeSample s = sample(new long[] {1}, List.of(new long[3], new long[0], new long[2]), new double[3], null);
        double[][] w = MAGRPOLoss.weights(List.of(s, s), new double[][] {{1, -1, 0.5}, {1, -1, 0.5}},
                LossType.SEQUENCE_SUM, false, 1);
        assertThat(w[0]).containsExactly(new double[] {-0.25, 0, -0.125}, within(1e-15));
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
     * Equal up to float32 rounding ({@link comlrl.tensor.Rounding}) over at most 8 samples × 4
     * completions × (a prompt of at most 26 tokens, one per byte at worst, + 5 completion tokens)
     * positions, and not all zero.
     */
    private static void assertClose(Map<String, float[]> got, Map<String, float[]> want) {
        comlrl.tensor.Rounding.assertSameGradients(got, want, 8 * 4 * (26 + 5));
    }

    private static List<long[]> group(int seed) {
        long eos = lm.padId();
        List<long[]> out = new ArrayList<>();
        // lengths 3, 1 (the EOS alone), 5 (cut), 2: the batched scoring pads them
        out.add(new long[] {40 + seed, 41, eos});
        out.add(new long[] {eos});
        out.add(new long[] {50 + seed, 51, 52, 53, 54});
        out.add(new long[] {60 + seed, eos});
        return out;
    }

    @Test
    void theGradientIsTheWeightedSumOfPerCompletionLogLikelihoodGradients() {
        MAGRPOConfig args = MAGRPOConfig.builder().build();
        long[] prompt = lm.encode("Say hello.");
        NodeSample s = sample(prompt, group(0), new double[] {1.0, 0.0, 2.5, -0.5}, null);
        zeroGrad();
        double[] losses = MAGRPOLoss.accumulate(lm.model(), List.of(s), args, lm.padId(), RankWork.single(1));
        Map<String, float[]> got = gradients();
        // by hand: A from the same returns; L = (1/4) Σ_k −A_k Σ_t log π(y_k), each completion scored alone
        double[] a = MAGRPOLoss.advantages(s, args);
        zeroGrad();
        double expectedLoss = 0;
        try (Scope scope = Scope.open()) {
            for (int k = 0; k < 4; k++) {
                Tensor logp = Scorer.score(lm.model(), List.of(prompt), List.of(s.completionIds().get(k)), lm.padId())
                        .sequenceLogprobs().sum();
                Tensor term = logp.mul(-a[k] / 4);
                expectedLoss += term.item();
                term.backward();
            }
        }
        // completions of at most 5 tokens on the tiny agent (V = 515, K = 64, L = 2, logits below 1), Σ|A_k|/4 ≤ 1
        assertThat(losses[0]).isCloseTo(expectedLoss, within(comlrl.tensor.Rounding.logprobSumBound(5, 515, 64, 2, 1.0, 1.0)));
        assertClose(got, gradients());
        zeroGrad();
    }

    @Test
    void aMinibatchOfEightScoredTogetherEqualsEightAccumulatedSamples() {
        MAGRPOConfig args = MAGRPOConfig.builder().build();
        List<NodeSample> minibatch = new ArrayList<>();
        String[] prompts = {"Say hello.", "Describe the sea.", "Why?", "Write a story about a cat.", "Hi", "Explain rain.",
            "Count to three.", "Name a colour."};
        for (int i = 0; i < 8; i++) {
            minibatch.add(sample(lm.encode(prompts[i]), group(i), new double[] {i % 3, 1.0, -i / 4.0, 0.5 * i}, null));
        }
        // 8×1: one sample at a time, gradients accumulated
        zeroGrad();
        MAGRPOLoss.accumulate(lm.model(), minibatch, args, lm.padId(), RankWork.single(1));
        Map<String, float[]> accumulated = gradients();
        // 1×8: every completion of every sample in one left-padded batch, one backward
        List<long[]> rowPrompts = new ArrayList<>();
        List<long[]> rowCompletions = new ArrayList<>();
        List<Double> weights = new ArrayList<>();
        double[][] w = MAGRPOLoss.weights(minibatch, args);
        for (int j = 0; j < 8; j++) {
            NodeSample s = minibatch.get(j);
            rowPrompts.addAll(Collections.nCopies(s.completionIds().size(), s.promptIds()));
            rowCompletions.addAll(s.completionIds());
            for (double wk : w[j]) {
                weights.add(wk);
            }
        }
        zeroGrad();
        try (Scope scope = Scope.open()) {
            Scorer.backwardWeighted(lm.model(), rowPrompts, rowCompletions, lm.padId(),
                    weights.stream().mapToDouble(Double::doubleValue).toArray(), false);
        }
        assertClose(accumulated, gradients());
        zeroGrad();
    }
}
