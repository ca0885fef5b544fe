package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.model.DecoderLm;
import comlrl.model.TinyConfigs;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Scoring a bf16 model, whose head computes {@code l[y] − logsumexp(l)} and its backward itself
 * ({@link DecoderLm#scoresTokensInHead()}): the targets, offsets, mask and weights reach the head as
 * in the float32 formula, the no-grad log-probabilities are bit for bit those of the training
 * loss, and checkpointing changes nothing.
 *
 * <p>Tolerances (u = 2^-24). The head weight's gradient {@code Σ_m dl_m ⊗ h_m} against float32 by
 * hand from the same bf16 logits and hidden states: the bf16 rounding of dl (half an ulp, ≤ 2^-8·|dl|),
 * the float32 accumulation (≤ M·u) and the rounding of the result (≤ 2^-8 of Σ|dl||h|):
 * {@code (2^-7 + M·u)·(|dl|ᵀ·|h|)}. The token log-probabilities against the float32 log-softmax of
 * the forward's logits: those come from another product call over {@code T + 1} positions, so a
 * logit may round differently (≤ 2^-8·max|l| each side); {@code l_y − lse} moves by at most twice
 * the largest logit change, plus float32 rounding of the sum (≤ 2·(V + 1)·u + 4u·(|l_y| + |lse|)).
 */
class ScorerSixteenBitTest {
    private static final List<long[]> PROMPTS = List.of(new long[] {5, 6, 7, 8}, new long[] {9, 10}, new long[] {3});
    private static final List<long[]> COMPLETIONS = List.of(new long[] {11, 12, 2}, new long[] {13}, new long[] {14, 15, 16, 17});
    private static final double[] WEIGHTS = {-0.75, 0.25, 0.5};
    private static final double U = Math.pow(2, -24);

    @BeforeAll
    static void init() {
        Engine.init();
    }

    private static DecoderLm model(boolean tied) {
        return DecoderLm.random(TinyConfigs.of("qwen2", tied, "bfloat16"), DType.BF16, Device.CPU, 21);
    }

    @Test
    void headWeightGradientIsTheWeightedLogSoftmaxGradientByHand() {
        try (DecoderLm m = model(false); Scope s = Scope.open()) {
            assertThat(m.scoresTokensInHead()).isTrue();
            m.parameters().forEach(Tensor::zeroGrad);
            Scorer.backwardWeighted(m, PROMPTS, COMPLETIONS, 0, WEIGHTS, false);
            Tensor w = m.namedParameters().get("lm_head.weight");
            Tensor got = w.grad().toFloat();
            try (GradMode off = GradMode.noGrad()) {
                PaddedBatch b = batch();
                long n = PROMPTS.size();
                long sLen = b.ids().size(1);
                long t = 4;
                long e = m.config().hiddenSize();
                long v = m.config().vocabSize();
                Tensor hidden = m.forward(b.ids(), b.positions(), b.mask(), null, sLen).hidden();
                Tensor h = hidden.narrow(1, sLen - t - 1, t).contiguous().view(n * t, e);     // [M, E] bf16
                Tensor lf = h.linear(w, null).toFloat();                                       // [M, V]
                Tensor y = b.ids().narrow(1, sLen - t, t).reshape(n * t, 1);
                Tensor c = coefficients(n, t).reshape(n * t, 1);
                Tensor dl = lf.softmax(-1).neg().scatterAdd_(1, y, Tensor.fullOf(1, DType.F32, Device.CPU, n * t, 1))
                        .mul(c);                                                               // [M, V]
                Tensor want = dl.transpose(0, 1).matmul(h.toFloat());                          // [V, E]
                Tensor tol = dl.abs().transpose(0, 1).matmul(h.toFloat().abs()).mul(Math.pow(2, -7) + n * t * U);
                assertThat(got.sub(want).abs().sub(tol).max().item()).isLessThanOrEqualTo(0.0);
                assertThat(want.abs().max().item()).as("a non-trivial gradient").isGreaterThan(1e-3);
                assertThat(v).isEqualTo(64);
            }
        }
    }

    /**
     * ∂L/∂hidden reaches the right positions: the final norm weight's gradient {@code Σ_m dh_m ⊙ x̂_m}
     * against autograd through the float32 log-softmax of the same model. The two upstream gradients
     * {@code dh = round(round(dl)·W)} differ by ≤ (2^-7 + 2^-7 + 2V·u)·(|dl|·|W|) (as in TokenHeadTest);
     * the norm's weight gradient adds {@code Σ_m |Δdh_m||x̂_m|} and, rounding its products and its sum
     * to bf16 on each side, ≤ 4·2^-8·Σ_m |dh_m||x̂_m|, with |dh| ≤ |dl|·|W| and x̂ = hidden / g.
     */
    @Test
    void finalNormGradientMatchesAutogradThroughTheFloat32LogSoftmax() {
        try (DecoderLm m = model(false); Scope s = Scope.open()) {
            PaddedBatch b = batch();
            long n = PROMPTS.size();
            long sLen = b.ids().size(1);
            long t = 4;
            long e = m.config().hiddenSize();
            long v = m.config().vocabSize();
            Tensor coef = coefficients(n, t);                                                  // [N, T]
            Tensor y = b.ids().narrow(1, sLen - t, t);
            Tensor norm = m.namedParameters().get("model.norm.weight");
            m.parameters().forEach(Tensor::zeroGrad);
            m.backward(b.ids(), b.positions(), b.mask(), sLen - t - 1, out -> out.logits().narrow(1, 0, t).toFloat()
                    .logSoftmax(-1).gather(2, y.unsqueeze(2)).squeeze(2).mul(coef).sum(), false);
            Tensor want = norm.grad().toFloat();
            m.parameters().forEach(Tensor::zeroGrad);
            Scorer.backwardWeighted(m, PROMPTS, COMPLETIONS, 0, WEIGHTS, false);
            Tensor got = norm.grad().toFloat();
            try (GradMode off = GradMode.noGrad()) {
                Tensor hidden = m.forward(b.ids(), b.positions(), b.mask(), null, sLen).hidden().toFloat();
                Tensor xhat = hidden.div(norm.toFloat()).abs();                                 // [N, S, E]
                Tensor w = m.namedParameters().get("lm_head.weight").toFloat();
                Tensor lf = hidden.narrow(1, sLen - t - 1, t).reshape(n * t, e).to(DType.BF16)
                        .linear(m.namedParameters().get("lm_head.weight"), null).toFloat();
                Tensor dl = lf.softmax(-1).neg().scatterAdd_(1, y.reshape(n * t, 1),
                        Tensor.fullOf(1, DType.F32, Device.CPU, n * t, 1)).mul(coef.reshape(n * t, 1));
                Tensor dhBound = dl.abs().matmul(w.abs()).view(n, t, e);                        // ≥ |dh|
                Tensor x = xhat.narrow(1, sLen - t - 1, t);
                Tensor tol = dhBound.mul(x).sum(1, false).sum(0, false)
                        .mul(2 * Math.pow(2, -7) + 2 * v * U + 4 * Math.pow(2, -8));
                assertThat(got.sub(want).abs().sub(tol).max().item()).isLessThanOrEqualTo(0.0);
                assertThat(want.abs().max().item()).as("a non-trivial gradient").isGreaterThan(1e-3);
            }
        }
    }

    /**
     * The head weight's gradient storage is reused from step to step, but never under a caller who
     * kept a view of an earlier step's gradient past {@code zeroGrad}: the kept values stay, and the
     * new step's gradient is its own. With negated weights the head's gradient is exactly the
     * negation ({@code dl = c·(1[v=y] − p)} changes sign, and rounding is symmetric).
     */
    @Test
    void aKeptHeadGradientIsNotOverwrittenByTheNextStep() {
        try (DecoderLm m = model(false); Scope s = Scope.open()) {
            Tensor w = m.namedParameters().get("lm_head.weight");
            m.parameters().forEach(Tensor::zeroGrad);
            Scorer.backwardWeighted(m, PROMPTS, COMPLETIONS, 0, WEIGHTS, false);
            Tensor kept = w.grad().view(-1); // shares the gradient's memory
            float[] first = kept.toFloatArray();
            m.parameters().forEach(Tensor::zeroGrad);
            double[] negated = java.util.Arrays.stream(WEIGHTS).map(x -> -x).toArray();
            Scorer.backwardWeighted(m, PROMPTS, COMPLETIONS, 0, negated, false);
            assertThat(kept.toFloatArray()).as("the kept gradient").containsExactly(first);
            float[] second = w.grad().toFloatArray();
            for (int j = 0; j < first.length; j++) {
                assertThat(second[j]).as("element %d", j).isEqualTo(-first[j]);
            }
        }
    }

    /** Each prompt ⊕ completion, left-padded with 0 as {@link Scorer} pads them. */
    private static PaddedBatch batch() {
        return PaddedBatch.leftPadded(rows(), 0, Device.CPU);
    }

    private static List<long[]> rows() {
        return ScoringRows.rows(PROMPTS, COMPLETIONS);
    }

    private static Tensor coefficients(long n, long t) {
        return ScoringRows.coefficients(COMPLETIONS, WEIGHTS, t);
    }

    @Test
    void tokenLogprobsMatchTheFloat32LogSoftmaxOfTheLogits() {
        try (DecoderLm m = model(true); Scope s = Scope.open(); GradMode off = GradMode.noGrad()) {
            float[][] mine = Scorer.tokenLogprobs(m, PROMPTS, COMPLETIONS, 0);
            PaddedBatch b = batch();
            long sLen = b.ids().size(1);
            int t = 4;
            long v = m.config().vocabSize();
            Tensor lf = m.forward(b.ids(), b.positions(), b.mask(), null, sLen - t - 1).logits().narrow(1, 0, t).toFloat();
            float[] logp = lf.logSoftmax(-1).toFloatArray();  // [N, T, V]
            float[] lse = lf.logsumexp(2).toFloatArray();     // [N, T]
            float[] l = lf.toFloatArray();
            double maxLogit = lf.abs().max().item();
            for (int i = 0; i < PROMPTS.size(); i++) {
                int len = COMPLETIONS.get(i).length;
                assertThat(mine[i]).hasSize(len);
                for (int j = 0; j < len; j++) {
                    int col = t - len + j;
                    int base = (int) ((i * t + col) * v);
                    int yv = (int) COMPLETIONS.get(i)[j];
                    double tol = 2 * Math.pow(2, -8) * maxLogit * 2 + 2 * (v + 1) * U
                            + 4 * U * (Math.abs(l[base + yv]) + Math.abs(lse[i * t + col]));
                    assertThat((double) mine[i][j]).as("row %d token %d", i, j).isCloseTo(logp[base + yv],
                            org.assertj.core.data.Offset.offset(tol));
                }
            }
        }
    }

    /**
     * π = π_old: old log-probabilities from {@link Scorer#tokenLogprobs} make every ratio of the
     * training loss exactly 1, so a zero clip range clips nothing and L = Σ_i c_i·len_i·(−A_i) exactly.
     */
    @Test
    void noGradLogprobsAreBitForBitThoseOfTheTrainingLoss() {
        try (DecoderLm m = model(true)) {
            float[][] old = Scorer.tokenLogprobs(m, PROMPTS, COMPLETIONS, 0);
            double[] a = {0.5, -1.0, 0.25};
            double[] c = {1.0, 0.5, 0.25};
            try (Scope s = Scope.open()) {
                Scorer.ClippedLoss loss = Scorer.backwardClipped(m, PROMPTS, COMPLETIONS, 0, a, c, old,
                        new Scorer.Clip(0, 0, false), false);
                assertThat(loss.lowClipped() + loss.highClipped()).isZero();
                assertThat(loss.tokens()).isEqualTo(8);
                assertThat(loss.value()).isEqualTo(-(1.0 * 3 * 0.5 + 0.5 * 1 * -1.0 + 0.25 * 4 * 0.25));
            }
        }
    }

    @Test
    void checkpointingGivesTheSameGradients() {
        try (DecoderLm m = model(true)) {
            List<float[]> plain = gradients(m, false);
            List<float[]> ckpt = gradients(m, true);
            for (int i = 0; i < plain.size(); i++) {
                assertThat(ckpt.get(i)).isEqualTo(plain.get(i));
            }
        }
    }

    private static List<float[]> gradients(DecoderLm m, boolean checkpointing) {
        m.parameters().forEach(Tensor::zeroGrad);
        try (Scope s = Scope.open()) {
            Scorer.backwardWeighted(m, PROMPTS, COMPLETIONS, 0, WEIGHTS, checkpointing);
            List<float[]> out = new ArrayList<>();
            for (Map.Entry<String, Tensor> p : m.namedParameters().entrySet()) {
                out.add(p.getValue().grad().toFloat().toFloatArray());
            }
            return out;
        }
    }
}
