package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.within;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** LoRA adapters: PEFT's initialisation and names, the delta and its gradients against plain autograd, merging. */
class LoraAdapterTest {
    static final ModelConfig MODEL = ModelPresets.config("qwen2", "tiny", 64, 1, 2, "float32");

    @Test
    void configRulesAndScales() {
        assertThat(new LoraConfig(8, 16, 0, List.of("q_proj"), false).scale()).isEqualTo(2.0);
        assertThat(new LoraConfig(16, 32, 0, List.of("q_proj"), true).scale()).isEqualTo(8.0); // 32/√16
        assertThat(new LoraConfig(4, 8, 0, List.of("all-linear"), false).targetModules())
                .isEqualTo(LoraConfig.PROJECTIONS);
        assertThat(new LoraConfig(4, 8, 0, List.of("v_proj", "q_proj"), false).targetModules())
                .containsExactly("q_proj", "v_proj");
        assertThatThrownBy(() -> new LoraConfig(0, 8, 0, List.of("q_proj"), false)).hasMessageContaining("lora.r must be >= 1");
        assertThatThrownBy(() -> new LoraConfig(4, 8, 1.0, List.of("q_proj"), false)).hasMessageContaining("lora.dropout");
        assertThatThrownBy(() -> new LoraConfig(4, 8, 0, List.of("lm_head"), false))
                .hasMessageContaining("unknown projection \"lm_head\"");
        assertThat(LoraConfig.fromMap(Map.of("r", 4, "alpha", 8, "target_modules", "all-linear")).targetModules())
                .hasSize(7);
        assertThatThrownBy(() -> LoraConfig.fromMap(Map.of("rank", 4))).hasMessageContaining("unknown key 'rank'");
    }

    @Test
    void toMapIsTheLoraSectionInItsOrderAndReadsBack() {
        LoraConfig c = new LoraConfig(4, 16, 0.1, List.of("v_proj", "q_proj"), true);
        assertThat(c.toMap()).containsExactly(entry("r", 4), entry("alpha", 16.0), entry("dropout", 0.1),
                entry("target_modules", List.of("q_proj", "v_proj")), entry("use_rslora", true));
        assertThat(LoraConfig.fromMap(c.toMap())).isEqualTo(c);
    }

    @Test
    void aFreshAdapterChangesNothingAndIsNamedAsPeftNamesIt() {
        LoraConfig c = new LoraConfig(4, 8, 0, List.of("q_proj", "down_proj"), false);
        try (LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 3); Scope s = Scope.open();
                Rng rng = new Rng(5)) {
            Tensor x = Tensor.randn(rng, 1.0, DType.F32, Device.CPU, 2, 3, MODEL.hiddenSize());
            assertThat(adapter.delta(x, 0, "q_proj", null).abs().max().item()).isEqualTo(0.0); // B = 0
            assertThat(adapter.delta(x, 0, "k_proj", null)).isNull();
            Map<String, Tensor> peft = adapter.peftStateDict();
            String q = "base_model.model.model.layers.0.self_attn.q_proj";
            String down = "base_model.model.model.layers.1.mlp.down_proj";
            assertThat(peft).containsKeys(q + ".lora_A.weight", q + ".lora_B.weight", down + ".lora_A.weight");
            assertThat(peft).hasSize(MODEL.numLayers() * 2 * 2);
            assertThat(peft.get(q + ".lora_A.weight").shape()).containsExactly(4, MODEL.hiddenSize());
            assertThat(peft.get(down + ".lora_B.weight").shape()).containsExactly(MODEL.hiddenSize(), 4);
            // A ~ U(±1/√in): within the bound, and not degenerate
            double bound = 1 / Math.sqrt(MODEL.intermediateSize());
            Tensor a = peft.get(down + ".lora_A.weight");
            assertThat(a.abs().max().item()).isLessThanOrEqualTo(bound).isGreaterThan(bound / 2);
        }
    }

    @Test
    void theDeltaItsGradientsAndTheMergedWeightMatchThePlainFormula() {
        LoraConfig c = new LoraConfig(3, 6, 0, List.of("q_proj"), false); // s = 2
        try (LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 11); Scope s = Scope.open();
                Rng rng = new Rng(7)) {
            Tensor a = adapter.parameters().get(0);
            Tensor b = adapter.parameters().get(1);
            try (GradMode g = GradMode.noGrad()) {
                b.copy_(Tensor.randn(rng, 0.5, DType.F32, Device.CPU, b.shape())); // a trained-looking B
            }
            long in = MODEL.hiddenSize();
            long out = (long) MODEL.numHeads() * MODEL.headDim();
            Tensor w = Tensor.randn(rng, 0.1, DType.F32, Device.CPU, out, in);
            Tensor x = Tensor.randn(rng, 1.0, DType.F32, Device.CPU, 2, 5, in);
            // ours: y = x Wᵀ + delta(x);  L = Σ y²
            Tensor y = x.linear(w, null).add(adapter.delta(x, 0, "q_proj", null));
            y.mul(y).sum().backward();
            // plain: the same formula with W + s·B·A formed explicitly, on copies of A and B
            Tensor a2 = a.detach().cloneTensor().requiresGrad(true);
            Tensor b2 = b.detach().cloneTensor().requiresGrad(true);
            Tensor y2 = x.matmul(w.add(b2.matmul(a2).mul(2.0)).transpose(0, 1));
            y2.mul(y2).sum().backward();
            assertThat(y.sub(y2).abs().max().item()).isLessThan(1e-4);
            assertClose(a.grad(), a2.grad());
            assertClose(b.grad(), b2.grad());
            // merged weight: x W'ᵀ equals the adapted forward
            try (GradMode g = GradMode.noGrad()) {
                Tensor merged = adapter.merged(w, 0, "q_proj");
                assertThat(x.linear(merged, null).sub(y.detach()).abs().max().item()).isLessThan(1e-4);
                assertThat(adapter.merged(w, 0, "v_proj")).isSameAs(w);
            }
        }
    }

    /**
     * {@code lora.autocast} on a bf16 base, worked by hand (q_proj of the tiny shape: in = out = 64; r = 2,
     * α = 4, so s = 2; x = 3 everywhere, A = c = 1 + 2⁻⁸ and B = 2⁻⁸ everywhere, L = Σ delta).
     * <pre>
     *   float32 products:  t = 64·3·c = 192.75       delta = r(s · 2 · t · 2⁻⁸) = r(3.01171875) = 3.015625
     *                      ∂L/∂B = s·t = 385.5      ∂L/∂A = s · 64 · 2⁻⁸ · 3 = 1.5
     *   autocast:          r(c) = 1 (a tie, to even): t = r(64·3·1) = 192    delta = r(r(2 · 192 · 2⁻⁸) · s) = 3
     *                      ∂L/∂B = r(s·t) = 384     ∂L/∂A = 1.5
     * </pre>
     * (r: rounding to bfloat16, 8 significant bits; every sum here is exact in float32.)
     */
    @Test
    void autocastRunsTheProductsInTheBasesDtypeWorkedByHand() {
        for (boolean autocast : new boolean[] {false, true}) {
            try (LoraAdapter adapter = filledAdapter(autocast, 1 + Math.scalb(1.0, -8), Math.scalb(1.0, -8)); Scope s = Scope.open()) {
                Tensor a = adapter.parameters().get(0);
                Tensor b = adapter.parameters().get(1);
                Tensor x = Tensor.zerosOf(DType.BF16, Device.CPU, 1, 1, 64).add(3);
                Tensor delta = adapter.delta(x, 0, "q_proj", null);
                assertThat(delta.dtype()).isEqualTo(DType.BF16);
                delta.toFloat().sum().backward();
                double expectedDelta = autocast ? 3.0 : 3.015625;
                double expectedDb = autocast ? 384.0 : 385.5;
                assertThat(-delta.toFloat().neg().max().item()).as("delta, autocast %s", autocast).isEqualTo(expectedDelta);
                assertThat(delta.toFloat().max().item()).as("delta, autocast %s", autocast).isEqualTo(expectedDelta);
                assertThat(a.grad().dtype()).isEqualTo(DType.F32);
                assertThat(b.grad().dtype()).isEqualTo(DType.F32);
                assertThat(-a.grad().neg().max().item()).isEqualTo(1.5);
                assertThat(a.grad().max().item()).isEqualTo(1.5);
                assertThat(-b.grad().neg().max().item()).as("dL/dB, autocast %s", autocast).isEqualTo(expectedDb);
                assertThat(b.grad().max().item()).as("dL/dB, autocast %s", autocast).isEqualTo(expectedDb);
            }
        }
    }

    /**
     * The adapted projection on a bf16 base rounds {@code y + Δ} once, as PEFT does, worked by hand
     * (q_proj of the tiny shape: in = out = 64; r = 2, α = 4, so s = 2; W = 2⁻⁶, x = 1, A = c = 1 + 2⁻⁸,
     * B = 2⁻¹⁶ everywhere; L = Σ output):
     * <pre>
     *   y = 64 · 2⁻⁶ = 1        t = 64·c = 64.25        Δ = s · 2 · t · 2⁻¹⁶ = 2⁻⁸ + 2⁻¹⁶   (all exact in float32)
     *   float32 adapters:  r(y + Δ) = 1 + 2⁻⁷ = 1.0078125   (above the midpoint 1 + 2⁻⁸)
     *                      (r(y + r(Δ)) = 1: r(Δ) = 2⁻⁸, a tie to even, then 1 + 2⁻⁸, a tie to even)
     *                      ∂L/∂B = s·t = 128.5     ∂L/∂A = s · Σ_o B · x = 2 · 64 · 2⁻¹⁶ = 2⁻⁹
     *   autocast:          r(c) = 1: t = 64, Δ = 2⁻⁸, r(y + Δ) = 1 (a tie to even)    ∂L/∂B = 128   ∂L/∂A = 2⁻⁹
     * </pre>
     * PEFT's own numbers for the same inputs are checked in {@link LoraPeftPythonTest}.
     */
    @Test
    void addedRoundsTheSumOnceAsPeftDoesWorkedByHand() {
        for (boolean autocast : new boolean[] {false, true}) {
            try (LoraAdapter adapter = filledAdapter(autocast, 1 + Math.scalb(1.0, -8), Math.scalb(1.0, -16)); Scope s = Scope.open()) {
                Tensor a = adapter.parameters().get(0);
                Tensor b = adapter.parameters().get(1);
                Tensor w = Tensor.zerosOf(DType.BF16, Device.CPU, 64, 64).add(Math.scalb(1.0, -6));
                Tensor x = Tensor.zerosOf(DType.BF16, Device.CPU, 1, 1, 64).add(1);
                Tensor out = adapter.added(x.linear(w, null), x, 0, "q_proj", null);
                assertThat(out.dtype()).isEqualTo(DType.BF16);
                out.toFloat().sum().backward();
                double expected = autocast ? 1.0 : 1.0078125;
                assertThat(-out.toFloat().neg().max().item()).as("output, autocast %s", autocast).isEqualTo(expected);
                assertThat(out.toFloat().max().item()).as("output, autocast %s", autocast).isEqualTo(expected);
                double expectedDb = autocast ? 128.0 : 128.5;
                assertThat(-b.grad().neg().max().item()).as("dL/dB, autocast %s", autocast).isEqualTo(expectedDb);
                assertThat(b.grad().max().item()).as("dL/dB, autocast %s", autocast).isEqualTo(expectedDb);
                assertThat(-a.grad().neg().max().item()).isEqualTo(Math.scalb(1.0, -9));
                assertThat(a.grad().max().item()).isEqualTo(Math.scalb(1.0, -9));
                assertThat(a.grad().dtype()).isEqualTo(DType.F32);
                assertThat(b.grad().dtype()).isEqualTo(DType.F32);
                // the delta alone, rounded, then added: the double rounding the sum avoids
                try (GradMode g = GradMode.noGrad()) {
                    assertThat(x.linear(w, null).add(adapter.delta(x, 0, "q_proj", null)).toFloat().max().item())
                            .isEqualTo(1.0);
                }
            }
        }
    }

    /**
     * A merged 16-bit weight is {@code r(W + s·B A)}, one rounding, as PEFT's {@code merge_and_unload()}
     * (q_proj of the tiny shape, s = 2; W = 1, A = 1 + 2⁻⁸, B = 2⁻¹⁰ everywhere):
     * {@code s · Σ_k B A = 2 · 2 · 2⁻¹⁰ · (1 + 2⁻⁸) = 2⁻⁸ + 2⁻¹⁶}, so each merged element is 1 + 2⁻⁷ (PEFT's
     * {@code safe_merge=True}, rounding the delta first, gives 1).
     */
    @Test
    void aMergedWeightRoundsOnceAsPeftsMergeAndUnload() {
        try (LoraAdapter adapter = filledAdapter(false, 1 + Math.scalb(1.0, -8), Math.scalb(1.0, -10));
                Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Tensor w = Tensor.zerosOf(DType.BF16, Device.CPU, 64, 64).add(1);
            Tensor merged = adapter.merged(w, 0, "q_proj");
            assertThat(merged.dtype()).isEqualTo(DType.BF16);
            assertThat(merged.toFloat().toDoubleArray()).containsOnly(1.0078125);
        }
    }

    /**
     * {@code added} is {@code r(float(y) + s·(float(x) Aᵀ) Bᵀ)} bit for bit on random bf16 inputs, for a
     * power-of-two scale (α = 8, r = 4) and another (α = 6, r = 4: s = 1.5), with
     * the gradients of that formula under autograd; over a float32 base it is {@code y + delta}.
     */
    @Test
    void addedIsTheFloat32SumRoundedOnceOnRandomInputs() {
        for (double alpha : new double[] {8, 6}) {
            LoraConfig c = new LoraConfig(4, alpha, 0, List.of("q_proj"), false);
            try (LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 5); Scope s = Scope.open();
                    Rng rng = new Rng(9)) {
                Tensor a = adapter.parameters().get(0);
                Tensor b = adapter.parameters().get(1);
                try (GradMode g = GradMode.noGrad()) {
                    b.copy_(Tensor.randn(rng, 1.0, DType.F32, Device.CPU, b.shape())); // Δ as large as y: many near-ties
                }
                Tensor w = Tensor.randn(rng, 0.2, DType.F32, Device.CPU, 64, 64).to(DType.BF16);
                Tensor x = Tensor.randn(rng, 1.0, DType.F32, Device.CPU, 3, 5, 64).to(DType.BF16);
                Tensor upstream = Tensor.randn(rng, 1.0, DType.F32, Device.CPU, 3, 5, 64);
                Tensor ours = adapter.added(x.linear(w, null), x, 0, "q_proj", null);
                ours.toFloat().mul(upstream).sum().backward();
                Tensor oursDa = a.grad().mul(1.0);
                Tensor oursDb = b.grad().mul(1.0);
                a.zeroGrad();
                b.zeroGrad();
                Tensor formula = x.linear(w, null).toFloat()
                        .add(x.toFloat().linear(a, null).linear(b, null).mul(c.scale())).to(DType.BF16);
                formula.toFloat().mul(upstream).sum().backward();
                assertThat(ours.bitEquals(formula)).as("values, alpha %s", alpha).isTrue();
                assertThat(oursDa.bitEquals(a.grad())).as("dL/dA, alpha %s", alpha).isTrue();
                assertThat(oursDb.bitEquals(b.grad())).as("dL/dB, alpha %s", alpha).isTrue();
                try (GradMode g = GradMode.noGrad()) {
                    Tensor twice = x.linear(w, null).add(adapter.delta(x, 0, "q_proj", null));
                    assertThat(twice.bitEquals(formula)).as("rounding twice differs somewhere, alpha %s", alpha).isFalse();
                    Tensor xf = x.toFloat();
                    Tensor wf = w.toFloat();
                    assertThat(adapter.added(xf.linear(wf, null), xf, 0, "q_proj", null)
                            .bitEquals(xf.linear(wf, null).add(adapter.delta(xf, 0, "q_proj", null)))).isTrue();
                }
            }
        }
    }

    /** A q_proj adapter of the tiny shape (r = 2, α = 4: s = 2), float32, with A = a and B = b everywhere. */
    static LoraAdapter filledAdapter(boolean autocast, double a, double b) {
        LoraConfig c = new LoraConfig(2, 4, 0, List.of("q_proj"), false, autocast);
        LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 1);
        try (GradMode g = GradMode.noGrad()) {
            adapter.parameters().get(0).fill_(a);
            adapter.parameters().get(1).fill_(b);
        }
        return adapter;
    }

    @Test
    void autocastIsASettingOfTheRunNotOfTheAdapter() {
        LoraConfig c = LoraConfig.fromMap(Map.of("r", 4, "alpha", 8, "autocast", true));
        assertThat(c.autocast()).isTrue();
        assertThat(c.toMap()).containsEntry("autocast", true);
        assertThat(LoraConfig.fromMap(c.toMap())).isEqualTo(c);
        assertThat(new LoraConfig(4, 8, 0, List.of("q_proj"), false).autocast()).isFalse();
        assertThat(new LoraConfig(4, 8, 0, List.of("q_proj"), false).toMap()).doesNotContainKey("autocast");
        assertThatThrownBy(() -> LoraConfig.fromMap(Map.of("autocast", "yes")))
                .hasMessageContaining("lora.autocast must be true or false");
        // on a float32 base it changes nothing
        try (LoraAdapter plain = LoraAdapter.init(MODEL, new LoraConfig(4, 8, 0, List.of("q_proj"), false), DType.F32,
                Device.CPU, 3);
                LoraAdapter auto = LoraAdapter.init(MODEL, c.withAutocast(true), DType.F32, Device.CPU, 3);
                Scope s = Scope.open(); Rng rng = new Rng(2)) {
            try (GradMode g = GradMode.noGrad()) {
                plain.parameters().get(1).copy_(Tensor.randn(rng, 0.5, DType.F32, Device.CPU, plain.parameters().get(1).shape()));
                auto.parameters().get(1).copy_(plain.parameters().get(1));
            }
            Tensor x = Tensor.randn(rng, 1.0, DType.F32, Device.CPU, 2, 3, MODEL.hiddenSize());
            assertThat(auto.delta(x, 0, "q_proj", null).sub(plain.delta(x, 0, "q_proj", null)).abs().max().item())
                    .isEqualTo(0.0);
        }
    }

    @Test
    void dropoutOnlyAppliesWithADropoutGenerator() {
        LoraConfig c = new LoraConfig(2, 2, 0.5, List.of("q_proj"), false);
        try (LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 1); Scope s = Scope.open();
                Rng rng = new Rng(2); Rng drop = new Rng(3); GradMode g = GradMode.noGrad()) {
            Tensor b = adapter.parameters().get(1);
            b.copy_(Tensor.randn(rng, 0.5, DType.F32, Device.CPU, b.shape()));
            Tensor x = Tensor.randn(rng, 1.0, DType.F32, Device.CPU, 4, MODEL.hiddenSize());
            Tensor eval1 = adapter.delta(x, 0, "q_proj", null);
            Tensor eval2 = adapter.delta(x, 0, "q_proj", null);
            assertThat(eval1.sub(eval2).abs().max().item()).isEqualTo(0.0);
            assertThat(adapter.delta(x, 0, "q_proj", drop).sub(eval1).abs().max().item()).isGreaterThan(1e-3);
        }
    }

    /**
     * Dropout on a bf16 input, as PEFT's: the input converted to the adapters' float32 first, then
     * {@code x · (keep / (1 − p))} (torch's dropout), so the scaled inputs are float32, not rounded to bf16
     * (p = 0.25: a kept 1 becomes float32(4/3), where bf16 would give 1.3359375). {@code added} equals that
     * formula bit for bit with the same mask (drawn again from the same seed), and rounding the scaled
     * input to bf16 first would differ; under autocast the float32 scaled input is rounded to bf16 for
     * the products, as torch.autocast rounds it.
     */
    @Test
    void dropoutScalesTheFloat32InputAsPeftDoes() {
        double p = 0.25;
        for (boolean autocast : new boolean[] {false, true}) {
            LoraConfig c = new LoraConfig(4, 8, p, List.of("q_proj"), false, autocast);
            try (LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 5); Scope s = Scope.open();
                    Rng rng = new Rng(9); Rng drop = new Rng(3); Rng again = new Rng(3); GradMode g = GradMode.noGrad()) {
                Tensor a = adapter.parameters().get(0);
                Tensor b = adapter.parameters().get(1);
                b.copy_(Tensor.randn(rng, 1.0, DType.F32, Device.CPU, b.shape()));
                Tensor w = Tensor.randn(rng, 0.2, DType.F32, Device.CPU, 64, 64).to(DType.BF16);
                Tensor x = Tensor.randn(rng, 1.0, DType.F32, Device.CPU, 3, 5, 64).to(DType.BF16);
                Tensor ours = adapter.added(x.linear(w, null), x, 0, "q_proj", drop);
                Tensor keep = Tensor.zerosOf(DType.F32, Device.CPU, x.shape()).uniform_(again).gt(p).toFloat();
                Tensor scaled = x.toFloat().mul(keep.div(1 - p));                          // float32, as PEFT's
                Tensor roundedFirst = x.mul(keep.to(DType.BF16)).div(1 - p).toFloat();     // rounded to bf16
                assertThat(keep.sum().item()).isBetween(0.6 * keep.numel(), 0.9 * keep.numel());
                if (autocast) {
                    Tensor in16 = scaled.to(DType.BF16);
                    Tensor expected = x.linear(w, null).add(in16.linear(a.to(DType.BF16), null)
                            .linear(b.to(DType.BF16), null).mul(c.scale()));
                    assertThat(ours.bitEquals(expected)).as("autocast").isTrue();
                } else {
                    Tensor expected = x.linear(w, null).toFloat()
                            .add(scaled.linear(a, null).linear(b, null).mul(c.scale())).to(DType.BF16);
                    Tensor other = x.linear(w, null).toFloat()
                            .add(roundedFirst.linear(a, null).linear(b, null).mul(c.scale())).to(DType.BF16);
                    assertThat(ours.bitEquals(expected)).isTrue();
                    assertThat(other.bitEquals(expected)).as("the input rounded to bf16 first differs").isFalse();
                }
            }
        }
    }

    private static void assertClose(Tensor got, Tensor expected) {
        double[] g = got.toDoubleArray();
        double[] e = expected.toDoubleArray();
        double scale = 0;
        for (double v : e) {
            scale = Math.max(scale, Math.abs(v));
        }
        assertThat(scale).isGreaterThan(0);
        for (int i = 0; i < e.length; i++) {
            assertThat(g[i]).isCloseTo(e[i], within(1e-5 * Math.max(1, scale)));
        }
    }

    @Test
    void aPeftAdapterDirectoryRoundTripsBitExactly(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        LoraConfig c = new LoraConfig(4, 8, 0.05, List.of("q_proj", "v_proj", "down_proj"), true);
        try (LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 21); Scope s = Scope.open();
                Rng rng = new Rng(3)) {
            try (GradMode g = GradMode.noGrad()) {
                for (Tensor p : adapter.parameters()) {
                    p.copy_(Tensor.randn(rng, 0.1, DType.F32, Device.CPU, p.shape()));
                }
            }
            adapter.savePeft(dir.resolve("a"), "/models/base");
            com.fasterxml.jackson.databind.JsonNode cfg = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(dir.resolve("a/adapter_config.json").toFile());
            assertThat(cfg.get("peft_type").asText()).isEqualTo("LORA");
            assertThat(cfg.get("task_type").asText()).isEqualTo("CAUSAL_LM");
            assertThat(cfg.get("r").asInt()).isEqualTo(4);
            assertThat(cfg.get("lora_alpha").asDouble()).isEqualTo(8.0);
            assertThat(cfg.get("lora_dropout").asDouble()).isEqualTo(0.05);
            assertThat(cfg.get("use_rslora").asBoolean()).isTrue();
            assertThat(cfg.get("base_model_name_or_path").asText()).isEqualTo("/models/base");
            assertThat(cfg.get("target_modules").toString()).isEqualTo("[\"q_proj\",\"v_proj\",\"down_proj\"]");
            try (LoraAdapter back = LoraAdapter.loadPeft(dir.resolve("a"), MODEL, DType.F32, Device.CPU)) {
                assertThat(back.config()).isEqualTo(c);
                Map<String, Tensor> saved = adapter.peftStateDict();
                Map<String, Tensor> loaded = back.peftStateDict();
                assertThat(loaded.keySet()).containsExactlyElementsOf(saved.keySet());
                saved.forEach((k, v) -> assertThat(loaded.get(k).toBytes()).as(k).isEqualTo(v.toBytes()));
            }
        }
        assertThatThrownBy(() -> LoraAdapter.loadPeft(dir.resolve("missing"), MODEL, DType.F32, Device.CPU))
                .hasMessageContaining("adapter_config.json");
    }
}
