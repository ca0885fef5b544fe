package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.model.TinyConfigs;
import comlrl.model.ValueHead;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.Rng;
import comlrl.tensor.Rounding;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An actor that carries a value head (IAC and MAAC with {@code critic_type: value_head}) scored
 * through the head's chunks ({@link DecoderLm#scoresTokensInHead()}: here a float32 model with a
 * vocabulary of 8,192) gets the gradients of autograd through the float32 log-softmax of its logits,
 * for a loss of both the token log-probabilities and the value head's outputs on the same hidden
 * states: {@code L = Σ c·log π(y) + 10·Σ_i (V(h_i) − target_i)²}. In the chunked backward the value
 * head's ∂L/∂h is added to the LM head's before the layers; lost, the layers' and the final norm's
 * gradients would carry only the policy's part.
 *
 * <p>Tolerance ({@link Rounding#assertSameGradients}): each gradient element sums one term per token
 * position (n of them), and each term's softmax factor comes from a log-sum-exp over V logits summed
 * in another order on each side (chunks against one log-softmax), a relative error of at most V·u
 * per side; so n + V positions' worth of rounding.
 */
class ScorerValueHeadTest {
    private static final List<long[]> PROMPTS = List.of(new long[] {5, 6, 7, 8}, new long[] {9, 10}, new long[] {3});
    private static final List<long[]> COMPLETIONS = List.of(new long[] {11, 12, 2}, new long[] {13}, new long[] {14, 15, 16, 17});
    private static final double[] WEIGHTS = {-0.75, 0.25, 0.5};
    private static final float[] TARGETS = {0.5f, -1f, 2f};
    private static final int VOCAB = 8192;

    @BeforeAll
    static void init() {
        Engine.init();
    }

    @Test
    void chunkedHeadScoringGivesAutogradsGradientsToTheActorAndItsValueHead() throws Exception {
        ObjectNode n = (ObjectNode) new ObjectMapper().readTree(TinyConfigs.of("qwen2", false, "float32").toJson());
        n.put("vocab_size", VOCAB);
        ModelConfig config = ModelConfig.fromJson(n, "test config");
        try (DecoderLm m = DecoderLm.random(config, DType.F32, Device.CPU, 21); Rng rng = new Rng(4);
                ValueHead vh = ValueHead.forBackbone(m, 8, rng); Scope s = Scope.open()) {
            assertThat(m.scoresTokensInHead()).isTrue();
            PaddedBatch b = PaddedBatch.leftPadded(rows(), 0, Device.CPU);
            long rowsN = PROMPTS.size();
            long sLen = b.ids().size(1);
            long t = 4;
            Tensor coef = coefficients(rowsN, t);
            Tensor y = b.ids().narrow(1, sLen - t, t);
            long[] last = new long[(int) rowsN];
            java.util.Arrays.fill(last, sLen - 1);
            Tensor target = Tensor.ofFloats(TARGETS, Device.CPU, rowsN);
            Function<Tensor, Tensor> valueLoss = hidden -> ValueHead.valuesAt(vh.forward(hidden), last).sub(target)
                    .mul(ValueHead.valuesAt(vh.forward(hidden), last).sub(target)).sum().mul(10.0);

            zero(m, vh);
            m.backward(b.ids(), b.positions(), b.mask(), sLen - t - 1, out -> out.logits().narrow(1, 0, t)
                    .logSoftmax(-1).gather(2, y.unsqueeze(2)).squeeze(2).mul(coef).sum().add(valueLoss.apply(out.hidden())),
                    false);
            Map<String, float[]> want = grads(m, vh);

            zero(m, vh);
            Scorer.backward(m, PROMPTS, COMPLETIONS, 0, true,
                    sc -> sc.tokenLogprobs().mul(coef).sum().add(valueLoss.apply(sc.hidden())), false);
            Map<String, float[]> got = grads(m, vh);

            int positions = (int) (rowsN * sLen);
            Rounding.assertSameGradients(got, want, positions + VOCAB);
            // both parts reach the layers: the value loss alone moves a layer's gradient by more than the bound
            zero(m, vh);
            m.backward(b.ids(), b.positions(), b.mask(), sLen - t - 1, out -> out.logits().narrow(1, 0, t)
                    .logSoftmax(-1).gather(2, y.unsqueeze(2)).squeeze(2).mul(coef).sum(), false);
            float[] policyOnly = m.namedParameters().get("model.layers.0.mlp.down_proj.weight").grad().toFloatArray();
            float[] both = want.get("model.layers.0.mlp.down_proj.weight");
            double largest = 0;
            double moved = 0;
            for (int j = 0; j < both.length; j++) {
                largest = Math.max(largest, Math.abs(both[j]));
                moved = Math.max(moved, Math.abs(both[j] - policyOnly[j]));
            }
            assertThat(moved).as("the value loss's share of a layer's gradient")
                    .isGreaterThan(10 * Rounding.sumBound(positions + VOCAB, largest));
        }
    }

    private static void zero(DecoderLm m, ValueHead vh) {
        m.parameters().forEach(Tensor::zeroGrad);
        vh.parameters().forEach(Tensor::zeroGrad);
    }

    private static Map<String, float[]> grads(DecoderLm m, ValueHead vh) {
        Map<String, float[]> g = new LinkedHashMap<>();
        m.namedParameters().forEach((name, p) -> {
            if (p.grad() != null) {
                g.put(name, p.grad().toFloatArray());
            }
        });
        vh.namedParameters().forEach((name, p) -> g.put("value_head." + name, p.grad().toFloatArray()));
        return g;
    }

    private static List<long[]> rows() {
        return ScoringRows.rows(PROMPTS, COMPLETIONS);
    }

    private static Tensor coefficients(long n, long t) {
        return ScoringRows.coefficients(COMPLETIONS, WEIGHTS, t);
    }
}
