package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.model.TinyConfigs;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The training backward ({@link DecoderLm#backward}) against autograd through the plain forward:
 * the embedding gradient added row by row, and layer-wise recomputation, give the same gradients.
 *
 * <p>Both comparisons are exact, because the compared computations are the same float operations:
 * <ul>
 *   <li>Recomputation repeats each layer's forward on the same input with the same kernels and
 *       shapes (the first, gradient-free pass cannot switch to oneDNN's few-row products: the tiny
 *       weights are far below their size threshold), and every parameter's gradient is the same
 *       product of the same two operands; tied embeddings add the same two terms (a + b = b + a).</li>
 *   <li>Every real token of these sequences occurs once, so each embedding row's gradient is one
 *       term (plus exact zeros from padding): no summation whose order could differ between
 *       {@code index_add} and autograd's embedding backward.</li>
 * </ul>
 * A tolerance here would only hide a recomputation that drifted from the plain forward.
 */
class CheckpointedBackwardTest {
    private static final List<long[]> PROMPTS = List.of(new long[] {5, 6, 7, 8}, new long[] {9, 10}, new long[] {3});
    private static final List<long[]> COMPLETIONS = List.of(new long[] {11, 12, 2}, new long[] {13}, new long[] {14, 15, 16, 17});
    private static final double[] WEIGHTS = {-0.7, 0.2, 0.5};

    private static Map<String, float[]> gradients(DecoderLm m, boolean checkpointing, double[] lossOut) {
        m.namedParameters().values().forEach(Tensor::zeroGrad);
        try (Scope s = Scope.open()) {
            lossOut[0] = Scorer.backwardWeighted(m, PROMPTS, COMPLETIONS, 0, WEIGHTS, checkpointing);
            Map<String, float[]> g = new LinkedHashMap<>();
            m.namedParameters().forEach((name, p) -> {
                Tensor grad = p.grad();
                g.put(name, grad == null ? null : grad.toFloatArray());
            });
            return g;
        }
    }

    @ParameterizedTest
    @CsvSource({"qwen2,false", "qwen2,true", "llama,false", "qwen3,true"})
    void layerwiseRecomputationGivesTheSameLossAndGradients(String type, boolean tied) {
        ModelConfig c = TinyConfigs.of(type, tied, "float32");
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 21)) {
            double[] plainLoss = new double[1];
            double[] ckptLoss = new double[1];
            Map<String, float[]> plain = gradients(m, false, plainLoss);
            Map<String, float[]> ckpt = gradients(m, true, ckptLoss);
            assertThat(ckptLoss[0]).isEqualTo(plainLoss[0]);
            // the loss really is Σ_i w_i Σ_t log π: compare with the scores (another computation: the
            // scores' float32 sums of ≤ 4 log-probabilities of magnitude < 8, summed in double here,
            // against the loss's float32 weighted sum: a few ulps of 8 (4.8e-7 each), far below 1e-5)
            try (Scope s = Scope.open()) {
                double[] seq = Scorer.score(m, PROMPTS, COMPLETIONS, 0).sequenceLogprobs().toDoubleArray();
                double expected = 0;
                for (int i = 0; i < seq.length; i++) {
                    expected += WEIGHTS[i] * seq[i];
                }
                assertThat(plainLoss[0]).isCloseTo(expected, org.assertj.core.data.Offset.offset(1e-5));
            }
            assertThat(ckpt.keySet()).isEqualTo(plain.keySet());
            plain.forEach((name, g) -> {
                assertThat(g).as("%s has a gradient", name).isNotNull();
                assertThat(ckpt.get(name)).as(name).containsExactly(g);
            });
        }
    }

    @ParameterizedTest
    @CsvSource({"qwen2,false", "qwen2,true", "llama,true"})
    void embeddingRowsAddedByIndexEqualAutogradsEmbeddingBackward(String type, boolean tied) {
        ModelConfig c = TinyConfigs.of(type, tied, "float32");
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 22)) {
            double[] loss = new double[1];
            Map<String, float[]> rows = gradients(m, false, loss);
            // autograd all the way: L = Σ_i w_i Σ_t log π through the forward's own embedding lookup
            m.namedParameters().values().forEach(Tensor::zeroGrad);
            Map<String, float[]> autograd = new LinkedHashMap<>();
            try (Scope s = Scope.open()) {
                Tensor seq = Scorer.score(m, PROMPTS, COMPLETIONS, 0).sequenceLogprobs();
                seq.mul(Tensor.ofDoubles(WEIGHTS, Device.CPU).toFloat()).sum().backward();
                m.namedParameters().forEach((name, p) -> autograd.put(name, p.grad().toFloatArray()));
            }
            String embedding = "model.embed_tokens.weight";
            assertThat(autograd.get(embedding)).as("the embedding has a gradient").isNotNull();
            autograd.forEach((name, g) -> assertThat(rows.get(name)).as(name).containsExactly(g));
        }
    }
}
