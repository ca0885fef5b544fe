package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.model.TinyConfigs;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Rows whose prompts repeat, scored with each prompt computed once ({@code Scorer.ScoringPass}),
 * against the same rows written out in full: the loss, every parameter's gradient and the
 * per-token log-probabilities.
 *
 * <p>The models run in float64, so that both computations are exact up to float64 rounding: sums of
 * at most a few hundred terms of magnitude ≤ 10 (u = 1.1e-16) stay far below 1e-12 relative to the
 * largest gradient, while any wiring error (a row attending to another row's prompt, a position off by
 * one, a prompt's gradient counted once instead of once per row, the shared token's own gradient
 * missing) changes a gradient at order one.
 */
class SharedPromptScoringTest {
    private static final long[] A = {5, 6, 7, 8, 9};
    private static final long[] B = {10, 11, 12};
    private static final long[] C = {13, 14};
    /** Three rows continue A, two continue B (one of them with an empty completion), one C alone. */
    private static final List<long[]> PROMPTS = List.of(A, B, A, C, A, B);
    private static final List<long[]> COMPLETIONS = List.of(new long[] {20, 21, 2}, new long[] {22},
            new long[] {23, 24, 25, 26}, new long[] {27, 28}, new long[] {29}, new long[0]);
    private static final double[] WEIGHTS = {-0.7, 0.2, 0.5, 1.1, -0.3, 0.9};
    private static final double RELATIVE = 1e-12;

    @AfterEach
    void shareAgain() {
        Scorer.sharePrompts = true;
    }

    private static <T> T unshared(Supplier<T> body) {
        Scorer.sharePrompts = false;
        try {
            return body.get();
        } finally {
            Scorer.sharePrompts = true;
        }
    }

    private static Map<String, double[]> gradients(DecoderLm m, boolean checkpointing, double[] lossOut) {
        m.namedParameters().values().forEach(Tensor::zeroGrad);
        try (Scope s = Scope.open()) {
            lossOut[0] = Scorer.backwardWeighted(m, PROMPTS, COMPLETIONS, 0, WEIGHTS, checkpointing);
            Map<String, double[]> g = new LinkedHashMap<>();
            m.namedParameters().forEach((name, p) -> g.put(name, p.grad() == null ? null : p.grad().toDoubleArray()));
            return g;
        }
    }

    private static void assertClose(Map<String, double[]> shared, Map<String, double[]> plain) {
        double scale = plain.values().stream().flatMapToDouble(Arrays::stream).map(Math::abs).max().orElse(0);
        assertThat(scale).isGreaterThan(0);
        assertThat(shared.keySet()).isEqualTo(plain.keySet());
        plain.forEach((name, g) -> {
            assertThat(g).as("%s has a gradient", name).isNotNull();
            double[] h = shared.get(name);
            assertThat(h).as(name).hasSameSizeAs(g);
            for (int i = 0; i < g.length; i++) {
                assertThat(Math.abs(h[i] - g[i])).as("%s[%d]: %s against %s", name, i, h[i], g[i])
                        .isLessThanOrEqualTo(RELATIVE * scale);
            }
        });
    }

    @ParameterizedTest
    @CsvSource({"qwen2,true,false", "qwen2,false,true", "llama,true,true", "qwen3,false,false"})
    void sharedPromptsGiveTheLossAndGradientsOfTheRowsWrittenOut(String type, boolean tied, boolean checkpointing) {
        ModelConfig c = TinyConfigs.of(type, tied, "float64");
        try (DecoderLm m = DecoderLm.random(c, DType.F64, Device.CPU, 31)) {
            double[] plainLoss = new double[1];
            double[] sharedLoss = new double[1];
            Map<String, double[]> plain = unshared(() -> gradients(m, checkpointing, plainLoss));
            Map<String, double[]> shared = gradients(m, checkpointing, sharedLoss);
            assertThat(sharedLoss[0]).isCloseTo(plainLoss[0], org.assertj.core.data.Offset.offset(
                    RELATIVE * Math.max(1, Math.abs(plainLoss[0]))));
            assertClose(shared, plain);
        }
    }

    /** A LoRA agent (random B, so that A has a gradient too): its adapters' gradients, on a frozen base. */
    @ParameterizedTest
    @CsvSource({"false", "true"})
    void aLoraAgentsAdapterGradientsAreThoseOfTheRowsWrittenOut(boolean checkpointing) {
        ModelConfig c = TinyConfigs.of("qwen2", true, "float64");
        comlrl.model.LoraConfig lc = new comlrl.model.LoraConfig(4, 8, 0, comlrl.model.LoraConfig.PROJECTIONS, false);
        try (DecoderLm base = DecoderLm.random(c, DType.F64, Device.CPU, 34);
                comlrl.model.LoraAdapter a = comlrl.model.LoraAdapter.init(c, lc, DType.F64, Device.CPU, 35)) {
            try (Scope s = Scope.open(); comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad();
                    comlrl.tensor.Rng rng = new comlrl.tensor.Rng(36)) {
                List<Tensor> p = a.parameters();
                for (int k = 1; k < p.size(); k += 2) { // every B
                    p.get(k).copy_(Tensor.randn(rng, 0.05, DType.F64, Device.CPU, p.get(k).shape()));
                }
            }
            try (DecoderLm agent = base.withAdapter(a)) {
                assertThat(agent.sharesPrefixes()).isTrue();
                double[] plainLoss = new double[1];
                double[] sharedLoss = new double[1];
                Map<String, double[]> plain = unshared(() -> gradients(agent, checkpointing, plainLoss));
                Map<String, double[]> shared = gradients(agent, checkpointing, sharedLoss);
                assertThat(plain).isNotEmpty();
                assertThat(sharedLoss[0]).isCloseTo(plainLoss[0], org.assertj.core.data.Offset.offset(
                        RELATIVE * Math.max(1, Math.abs(plainLoss[0]))));
                assertClose(shared, plain);
            }
        }
    }

    /**
     * A value head's loss: hidden states read at each row's last token and at its last prompt token
     * (counted from the end, as {@code ActorValueHeads} reads them), with and without logits (an actor
     * with its head; a critic).
     */
    @ParameterizedTest
    @CsvSource({"true,false", "true,true", "false,false"})
    void hiddenStatesFromThePromptsEndGiveTheGradientsOfTheRowsWrittenOut(boolean logits, boolean checkpointing) {
        ModelConfig c = TinyConfigs.of("qwen2", false, "float64");
        try (DecoderLm m = DecoderLm.random(c, DType.F64, Device.CPU, 37)) {
            java.util.function.Function<Scorer.Scores, Tensor> loss = sc -> {
                Tensor h = sc.hidden();                                   // [N, S, E]
                long len = h.size(1);
                long e = h.size(2);
                long[] last = new long[(int) (PROMPTS.size() * e)];
                long[] promptEnd = new long[last.length];
                for (int i = 0; i < PROMPTS.size(); i++) {
                    for (int k = 0; k < e; k++) {
                        last[(int) (i * e + k)] = len - 1;
                        promptEnd[(int) (i * e + k)] = len - 1 - COMPLETIONS.get(i).length;
                    }
                }
                Tensor u = Tensor.arangeOf(e, Device.CPU).to(DType.F64).mul(0.01).sub(0.1); // a fixed read-out
                Tensor v = h.gather(1, Tensor.ofLongs(last, Device.CPU, PROMPTS.size(), 1, e)).mul(u).sum()
                        .add(h.gather(1, Tensor.ofLongs(promptEnd, Device.CPU, PROMPTS.size(), 1, e)).mul(u).sum().mul(-0.5));
                return logits ? v.add(sc.sequenceLogprobs().mul(Tensor.ofDoubles(WEIGHTS, Device.CPU)).sum()) : v;
            };
            java.util.function.Supplier<Map<String, double[]>> run = () -> {
                m.namedParameters().values().forEach(Tensor::zeroGrad);
                try (Scope s = Scope.open()) {
                    Scorer.backwardFromPromptEnd(m, PROMPTS, COMPLETIONS, 0, logits, loss, checkpointing);
                    Map<String, double[]> g = new LinkedHashMap<>();
                    m.namedParameters().forEach((name, p) -> {
                        if (p.grad() != null || logits) { // without logits the head has no gradient
                            g.put(name, p.grad() == null ? null : p.grad().toDoubleArray());
                        }
                    });
                    return g;
                }
            };
            Map<String, double[]> plain = unshared(run);
            Map<String, double[]> shared = run.get();
            assertClose(shared, plain);
        }
    }

    @Test
    void sharedPromptsGiveEachTokensLogProbability() {
        ModelConfig c = TinyConfigs.of("qwen2", true, "float64");
        try (DecoderLm m = DecoderLm.random(c, DType.F64, Device.CPU, 32)) {
            float[][] plain = unshared(() -> Scorer.tokenLogprobs(m, PROMPTS, COMPLETIONS, 0));
            float[][] shared = Scorer.tokenLogprobs(m, PROMPTS, COMPLETIONS, 0);
            for (int i = 0; i < plain.length; i++) {
                assertThat(shared[i]).as("row %d", i).hasSize(COMPLETIONS.get(i).length);
                // float32 results of float64 values equal to ~1e-15: the same float32, but for a value
                // within that of a rounding boundary (one float32 ulp then)
                for (int t = 0; t < plain[i].length; t++) {
                    assertThat(shared[i][t]).as("row %d token %d", i, t).isCloseTo(plain[i][t],
                            org.assertj.core.data.Offset.offset(Math.ulp(plain[i][t])));
                }
            }
        }
    }

    /** {@link Scorer#lastHidden} (a critic's values): {@link Scorer#hidden} at each row's last column. */
    @ParameterizedTest
    @CsvSource({"qwen2,true", "llama,false"})
    void lastHiddenIsEachRowsLastHiddenState(String type, boolean tied) {
        ModelConfig c = TinyConfigs.of(type, tied, "float64");
        try (DecoderLm m = DecoderLm.random(c, DType.F64, Device.CPU, 34); Scope s = Scope.open()) {
            Tensor all = unshared(() -> Scorer.hidden(m, PROMPTS, COMPLETIONS, 0)); // [N, S, E]
            double[] plain = all.select(1, all.size(1) - 1).toDoubleArray();
            double[] shared = Scorer.lastHidden(m, PROMPTS, COMPLETIONS, 0).toDoubleArray();
            double scale = Arrays.stream(plain).map(Math::abs).max().orElse(0);
            assertThat(scale).isGreaterThan(0);
            assertThat(shared).hasSameSizeAs(plain);
            for (int j = 0; j < plain.length; j++) {
                assertThat(shared[j]).as("element %d", j).isCloseTo(plain[j],
                        org.assertj.core.data.Offset.offset(RELATIVE * scale));
            }
        }
    }

    /**
     * What makes the clipped surrogate's first pass exact (ratio 1): {@link Scorer#tokenLogprobs}, which
     * records π_old, gives bit for bit the log-probabilities the loss's own pass computes, with or without
     * recomputation, in float32 and on a bf16 model (whose head scores in chunks): the same operations.
     */
    @ParameterizedTest
    @CsvSource({"float32,false", "float32,true", "bfloat16,false", "bfloat16,true"})
    void tokenLogprobsAreTheLogprobsTheLossSees(String dtype, boolean checkpointing) {
        ModelConfig c = TinyConfigs.wide("qwen2", true, dtype); // wide: the batch shapes change the rounding
        try (DecoderLm m = DecoderLm.random(c, c.dtype(), Device.CPU, 33); Scope s = Scope.open()) {
            float[][] recorded = Scorer.tokenLogprobs(m, PROMPTS, COMPLETIONS, 0);
            Scorer.ScoringPass shared = Scorer.ScoringPass.shared(m, PROMPTS, COMPLETIONS, 0);
            assertThat(shared).as("the rows share their prompts").isNotNull();
            float[][] seen = new float[1][];
            shared.backward(m, true, sc -> {
                seen[0] = sc.tokenLogprobs().detach().toFloatArray();
                return sc.sequenceLogprobs().sum();
            }, checkpointing);
            int t = seen[0].length / PROMPTS.size();
            for (int i = 0; i < recorded.length; i++) {
                int len = COMPLETIONS.get(i).length;
                assertThat(recorded[i]).as("row %d", i).containsExactly(Arrays.copyOfRange(seen[0], i * t + t - len, i * t + t));
            }
        }
    }
}
