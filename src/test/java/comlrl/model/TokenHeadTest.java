package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link TokenHead} against autograd through {@code log_softmax(float(x Wᵀ)).gather(y)} (the
 * formula 16-bit scoring used before), in bf16.
 *
 * <p>Tolerances. Forward: both sides evaluate {@code l_y − log Σ_v exp(l_v)} from the same float32
 * logits (the same bf16 product of the same operands), differing only in float32 rounding: a sum of
 * V terms in (0, 1] has relative error ≤ (V − 1)·u, each exp ≤ 2u, u = 2^-24, so the log-sum
 * differs by ≤ (V + 1)·u absolute per side, and the final subtraction rounds within 2u·(|l_y| + |lse|):
 * {@code tol = 2·((V + 1)·u + 2u·(|l_y| + |lse|))}.
 * Backward: each side rounds the float32 logit gradient {@code dl = g·(1[v=y] − p_v)} (which differ
 * by a few float32 ulps) to bf16, so the bf16 values differ by at most one bf16 ulp ≤ 2^-7·|dl|; a
 * product {@code Σ_v dl_v·B_v} then differs by ≤ 2^-7·Σ|dl_v||B_v| before its own rounding, the
 * float32 accumulations by ≤ 2K·u·Σ|dl_v||B_v|, and each side's result rounds to bf16 within
 * 2^-8·Σ|dl_v||B_v|: {@code tol = (2^-7 + 2·2^-8 + 2K·u)·(|dl|·|B|)} elementwise.
 */
class TokenHeadTest {
    private static final double U = Math.pow(2, -24);

    @BeforeAll
    static void init() {
        Engine.init();
    }

    /** W = [[1,0],[0,1],[1,1],[0,0]], h = [1, 2]: l = [1, 2, 3, 0]; y = 2. */
    @Test
    void handWorkedLogprobAndGradient() {
        try (Scope s = Scope.open()) {
            Tensor w = Tensor.ofFloats(new float[] {1, 0, 0, 1, 1, 1, 0, 0}, Device.CPU, 4, 2).to(DType.BF16)
                    .requiresGrad(true);
            Tensor h = Tensor.ofFloats(new float[] {1, 2}, Device.CPU, 1, 2).to(DType.BF16);
            Tensor y = Tensor.ofLongs(new long[] {2}, Device.CPU, 1);
            TokenHead head;
            try (GradMode g = GradMode.noGrad()) {
                head = TokenHead.of(w, h, y, 1);
            }
            double sum = Math.E + Math.exp(2) + Math.exp(3) + 1; // 31.1929
            double lse = Math.log(sum);                               // 3.44019
            assertThat(head.logprobs().toFloatArray()[0]).isCloseTo((float) (3 - lse),
                    org.assertj.core.data.Offset.offset((float) (2 * (5 * U + 2 * U * (3 + lse)))));
            // g = 1: dh = W_y − Σ p_v W_v = [1 − p0 − p2, 1 − p1 − p2]; dW_v = (1[v=y] − p_v)·h
            double[] p = {Math.E / sum, Math.exp(2) / sum, Math.exp(3) / sum, 1 / sum};
            Tensor buffer = Tensor.emptyOf(DType.BF16, Device.CPU, 4, 2);
            float[] dh = head.backward(Tensor.ofFloats(new float[] {1}, Device.CPU, 1), () -> buffer).toFloat().toFloatArray();
            double[] dl = {-p[0], -p[1], 1 - p[2], -p[3]};
            // |dl|·|W| per component of h; |dl|ᵀ·|h| per element of W; K = 4 and 1
            double tolH0 = (Math.pow(2, -7) + Math.pow(2, -7) + 8 * U) * (Math.abs(dl[0]) + Math.abs(dl[2]));
            double tolH1 = (Math.pow(2, -7) + Math.pow(2, -7) + 8 * U) * (Math.abs(dl[1]) + Math.abs(dl[2]));
            assertThat(dh[0]).isCloseTo((float) (1 - p[0] - p[2]), org.assertj.core.data.Offset.offset((float) tolH0));
            assertThat(dh[1]).isCloseTo((float) (1 - p[1] - p[2]), org.assertj.core.data.Offset.offset((float) tolH1));
            float[] dw = w.grad().toFloat().toFloatArray();
            for (int v = 0; v < 4; v++) {
                for (int e = 0; e < 2; e++) {
                    double expected = dl[v] * (e + 1);
                    double tol = (Math.pow(2, -7) + Math.pow(2, -7) + 2 * U) * Math.abs(expected);
                    assertThat(dw[v * 2 + e]).as("dW[%d][%d]", v, e).isCloseTo((float) expected,
                            org.assertj.core.data.Offset.offset((float) tol + 1e-12f));
                }
            }
        }
    }

    /**
     * Chunks of 3 rows (3, 3, 3, 1) against the whole float32 log-softmax, values and gradients, for
     * bf16 weights and for float32 ones (which score through the head's chunks on the CPU too).
     */
    @ParameterizedTest
    @ValueSource(strings = {"bfloat16", "float32"})
    void chunkedHeadMatchesAutogradThroughLogSoftmax(String type) {
        DType dtype = DType.fromTorchName(type);
        long m = 10;
        long e = 48;
        long v = 300;
        try (Scope s = Scope.open(); Rng rng = new Rng(11)) {
            Tensor w = weight(rng, dtype, v, e);
            Tensor x = Tensor.randn(rng, 1, DType.F32, Device.CPU, m, e).to(dtype).requiresGrad(true);
            Tensor y = targets(rng, v, m);
            float[] gv = Tensor.randn(rng, 1, DType.F32, Device.CPU, m).toFloatArray();
            gv[4] = 0; // a masked token
            Tensor g = Tensor.ofFloats(gv, Device.CPU, m);
            // reference: autograd through the float32 log-softmax of the bf16 logits
            Tensor logits = x.linear(w, null).toFloat();                                  // [M, V]
            Tensor ref = logits.logSoftmax(-1).gather(1, y.view(m, 1)).squeeze(1);       // [M]
            ref.mul(g).sum().backward();
            Tensor refDx = x.grad().toFloat();
            Tensor refDw = w.grad().toFloat();
            w.zeroGrad();
            Tensor dx;
            Tensor mine;
            try (GradMode off = GradMode.noGrad()) {
                TokenHead head = TokenHead.of(w, x.detach(), y, 3);
                mine = head.logprobs();
                dx = head.backward(g, () -> Tensor.emptyOf(dtype, Device.CPU, v, e)).toFloat();
            }
            Tensor dw = w.grad().toFloat();
            try (GradMode off = GradMode.noGrad()) {
                // forward: tol = 2·((V + 1)·u + 2u·(|l_y| + |lse|))
                Tensor lf = logits.detach();
                Tensor lse = lf.logsumexp(1);
                Tensor ly = lf.gather(1, y.view(m, 1)).squeeze(1);
                Tensor tol = ly.abs().add(lse.abs()).mul(4 * U).add(2 * (v + 1) * U);
                assertWithin(mine, ref.detach(), tol, "logp");
                // the logit gradient by hand: dl = g·(1[v=y] − softmax(l))
                Tensor dl = lf.softmax(-1).neg().scatterAdd_(1, y.view(m, 1), Tensor.fullOf(1, DType.F32, Device.CPU,
                        m, 1)).mul(g.view(m, 1));
                // bf16: the gradients' own rounding (2^-8 relative, twice) and that of dl's bf16 copy (2^-7);
                // float32: a few roundings of u each
                double factor = dtype == DType.BF16 ? Math.pow(2, -7) + 2 * Math.pow(2, -8) : 4 * U;
                Tensor tolDx = dl.abs().matmul(w.detach().toFloat().abs()).mul(factor + 2 * v * U);
                Tensor tolDw = dl.abs().transpose(0, 1).matmul(x.detach().toFloat().abs()).mul(factor + 2 * m * U);
                assertWithin(dx, refDx, tolDx, "dx");
                assertWithin(dw, refDw, tolDw, "dW");
                assertWithin(refDx, dl.matmul(w.detach().toFloat()), tolDx, "dx by hand");
                assertThat(dx.view(m, e).select(0, 4).abs().max().item()).as("masked row").isZero();
            }
        }
    }

    /**
     * Logits written into a kept tensor (NaN before, as stale memory may hold anything) give the same
     * bits as a fresh one, for bf16 and for float32 (whose large vocabularies score in the head too):
     * log-probabilities, the rows' gradient and the weight's.
     */
    @ParameterizedTest
    @ValueSource(strings = {"bfloat16", "float32"})
    void logitsWrittenIntoAKeptTensorAreTheFreshOnesBitForBit(String type) {
        DType dtype = DType.fromTorchName(type);
        long m = 12;
        long e = 40;
        long v = 300;
        try (Scope s = Scope.open(); GradMode off = GradMode.noGrad(); Rng rng = new Rng(17)) {
            Tensor w = weight(rng, dtype, v, e);
            Tensor x = Tensor.randn(rng, 1, DType.F32, Device.CPU, 3, 4, e).to(dtype);
            Tensor y = targets(rng, v, 3, 4);
            Tensor g = Tensor.randn(rng, 1, DType.F32, Device.CPU, m);
            TokenHead fresh = TokenHead.of(w, x, y, 5);
            Tensor freshLogp = fresh.logprobs();
            Tensor freshDx = fresh.backward(g, () -> Tensor.emptyOf(dtype, Device.CPU, v, e));
            Tensor freshDw = w.grad().cloneTensor();
            w.zeroGrad();
            Tensor kept = Tensor.fullOf(Double.NaN, dtype, Device.CPU, m, v);
            TokenHead into = TokenHead.of(w, x, y, 5, kept);
            assertThat(into.logprobs().bitEquals(freshLogp)).as("logp").isTrue();
            Tensor dx = into.backward(g, () -> Tensor.emptyOf(dtype, Device.CPU, v, e));
            assertThat(dx.bitEquals(freshDx)).as("dx").isTrue();
            assertThat(w.grad().bitEquals(freshDw)).as("dW").isTrue();
            assertThat(freshDw.abs().max().item()).as("a non-trivial gradient").isGreaterThan(1e-3);
        }
    }

    /**
     * A model's kept logits storage is handed out again only when nothing else refers to it: a pass
     * whose logits are still held (another pass, a kept view) gets storage of its own, so writing one
     * leaves the other; above {@link DecoderLm#KEPT_LOGITS_BYTES} none is kept (null: a fresh tensor).
     */
    @Test
    void keptLogitsStorageIsNeverHandedToTwoHoldersAndIsCapped() {
        ModelConfig bf16 = ModelPresets.config("qwen2", "tiny", 64, 1, 2, "bfloat16");
        try (DecoderLm m = DecoderLm.random(bf16, DType.BF16, Device.CPU, 3); Scope s = Scope.open();
                GradMode off = GradMode.noGrad()) {
            long v = bf16.vocabSize();
            Tensor first = m.headLogitsBuffer(3).fill_(7);
            assertThat(first.shape()).containsExactly(3, v);
            Tensor second = m.headLogitsBuffer(2).fill_(1);
            assertThat(first.eq(7.0).allTrue()).as("the held logits").isTrue();
            assertThat(second.eq(1.0).allTrue()).isTrue();
            assertThat(m.headLogitsBuffer(DecoderLm.KEPT_LOGITS_BYTES / (2 * v) + 1)).isNull();
            assertThat(m.headLogitsBuffer(DecoderLm.KEPT_LOGITS_BYTES / (2 * v))).isNotNull();
        }
    }

    /** With gradients on, {@link TokenHead#of} is differentiable through autograd: the same values as under no-grad. */
    @Test
    void gradModeValuesEqualNoGradValues() {
        try (Scope s = Scope.open(); Rng rng = new Rng(5)) {
            Tensor w = Tensor.randn(rng, 0.5, DType.F32, Device.CPU, 50, 16).to(DType.BF16).requiresGrad(true);
            Tensor x = Tensor.randn(rng, 1, DType.F32, Device.CPU, 2, 3, 16).to(DType.BF16);
            Tensor y = Tensor.randn(rng, 1, DType.F32, Device.CPU, 2, 3).abs().mul(10).to(DType.I64).clampMax(49L);
            Tensor withGrad = TokenHead.of(w, x, y, 4).logprobs();
            Tensor noGrad;
            try (GradMode off = GradMode.noGrad()) {
                noGrad = TokenHead.of(w, x, y, 4).logprobs();
            }
            assertThat(withGrad.requiresGrad()).isTrue();
            assertThat(withGrad.detach().bitEquals(noGrad)).isTrue();
        }
    }

    /** A random head weight {@code [v, e]} of {@code dtype} that requires a gradient. */
    private static Tensor weight(Rng rng, DType dtype, long v, long e) {
        return Tensor.randn(rng, 0.5, DType.F32, Device.CPU, v, e).to(dtype).requiresGrad(true);
    }

    /** Random token ids below {@code v} of the given shape (int64). */
    private static Tensor targets(Rng rng, long v, long... shape) {
        return Tensor.randn(rng, 1, DType.F32, Device.CPU, shape).abs().mul(100).to(DType.I64).clampMax(v - 1);
    }

    private static void assertWithin(Tensor actual, Tensor expected, Tensor tol, String what) {
        Tensor excess = actual.view(expected.shape()).sub(expected).abs().sub(tol);
        assertThat(excess.max().item()).as("%s: largest |difference| − tolerance", what).isLessThanOrEqualTo(0.0);
    }
}
