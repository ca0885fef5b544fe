package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A LoRA adapter view over a shared decoder: zero-init identity, equality with the merged model, gradients to A and B only. */
class LoraDecoderTest {
    static final ModelConfig MODEL = LoraAdapterTest.MODEL;
    static final long[] IDS = {1, 5, 9, 13, 17, 21};

    static Tensor logits(DecoderLm m) {
        Tensor ids = Tensor.ofLongs(IDS, Device.CPU, 1, IDS.length);
        Tensor pos = Tensor.ofLongs(new long[] {0, 1, 2, 3, 4, 5}, Device.CPU, 1, IDS.length);
        return m.forward(ids, pos, null, null, 0).logits();
    }

    @Test
    void aFreshAdapterLeavesTheLogitsOfTheBaseAndATrainedOneEqualsTheMergedModel() {
        LoraConfig c = new LoraConfig(4, 8, 0, List.of("all-linear"), false);
        try (DecoderLm base = DecoderLm.random(MODEL, DType.F32, Device.CPU, 3);
                LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 4);
                DecoderLm agent = base.withAdapter(adapter); Scope s = Scope.open(); GradMode g = GradMode.noGrad();
                Rng rng = new Rng(8)) {
            assertThat(logits(agent).sub(logits(base)).abs().max().item()).isEqualTo(0.0);
            List<Tensor> params = adapter.parameters();
            for (int k = 1; k < params.size(); k += 2) { // every B
                params.get(k).copy_(Tensor.randn(rng, 0.05, DType.F32, Device.CPU, params.get(k).shape()));
            }
            Tensor adapted = logits(agent);
            assertThat(adapted.sub(logits(base)).abs().max().item()).isGreaterThan(1e-4);
            try (DecoderLm folded = agent.mergeAdapter()) {
                assertThat(adapted.sub(logits(folded)).abs().max().item()).isLessThan(1e-4);
                assertThat(folded.adapter()).isNull(); // a standalone model: saves as a full Hugging Face model
            }
            assertThatThrownBy(base::mergeAdapter).hasMessageContaining("no adapter to merge");
        }
    }

    @Test
    void onlyTheAdapterTrainsAndTheViewNeitherSavesNorClosesTheBase(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        LoraConfig c = new LoraConfig(2, 4, 0, List.of("q_proj", "v_proj"), false);
        try (DecoderLm base = DecoderLm.random(MODEL, DType.F32, Device.CPU, 3);
                LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 4)) {
            base.parameters().forEach(p -> p.requiresGrad(false));
            try (DecoderLm agent = base.withAdapter(adapter); Scope s = Scope.open()) {
                assertThat(agent.parameters()).isEqualTo(adapter.parameters());
                logits(agent).mul(logits(agent)).sum().backward();
                assertThat(adapter.parameters()).allMatch(p -> p.grad() != null);
                assertThat(base.parameters()).allMatch(p -> p.grad() == null);
                assertThatThrownBy(() -> agent.save(dir.resolve("x"), 1L << 30)).isInstanceOf(UnsupportedOperationException.class);
                assertThatThrownBy(() -> agent.withAdapter(adapter)).hasMessageContaining("already an adapter view");
            }
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                assertThat(logits(base).abs().max().item()).isGreaterThan(0.0); // the base is still open
            }
        }
    }

    /** The adapter's gradients after one backward of sum(logits²) with or without checkpointing. */
    static List<double[]> gradients(DecoderLm agent, boolean checkpointing) {
        try (Scope s = Scope.open()) {
            agent.parameters().forEach(p -> p.zeroGrad());
            Tensor ids = Tensor.ofLongs(IDS, Device.CPU, 1, IDS.length);
            Tensor pos = Tensor.ofLongs(new long[] {0, 1, 2, 3, 4, 5}, Device.CPU, 1, IDS.length);
            agent.backward(ids, pos, null, 0, out -> out.logits().mul(out.logits()).sum(), checkpointing);
            return agent.parameters().stream().map(p -> p.grad().toDoubleArray()).toList();
        }
    }

    static double maxDifference(List<double[]> a, List<double[]> b) {
        double worst = 0;
        for (int i = 0; i < a.size(); i++) {
            for (int j = 0; j < a.get(i).length; j++) {
                worst = Math.max(worst, Math.abs(a.get(i)[j] - b.get(i)[j]));
            }
        }
        return worst;
    }

    @Test
    void loraDropoutDrawsNewMasksPerPassTheSameInACheckpointedRecomputationAndResumesItsSequence() {
        LoraConfig c = new LoraConfig(4, 8, 0.5, List.of("all-linear"), false);
        try (DecoderLm base = DecoderLm.random(MODEL, DType.F32, Device.CPU, 3);
                LoraAdapter adapter = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, 4);
                DecoderLm agent = base.withAdapter(adapter)) {
            base.parameters().forEach(p -> p.requiresGrad(false));
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(8)) {
                List<Tensor> params = adapter.parameters();
                for (int k = 1; k < params.size(); k += 2) {
                    params.get(k).copy_(Tensor.randn(rng, 0.05, DType.F32, Device.CPU, params.get(k).shape()));
                }
            }
            long[] before = adapter.dropoutState();
            List<double[]> plain = gradients(agent, false);
            List<double[]> next = gradients(agent, false);
            assertThat(maxDifference(plain, next)).as("a new pass draws new masks").isGreaterThan(1e-6);
            adapter.setDropoutState(before);
            assertThat(maxDifference(plain, gradients(agent, true))).as("checkpointed recomputation, same masks")
                    .isLessThan(1e-5);
            assertThat(maxDifference(next, gradients(agent, false))).as("the sequence resumes").isEqualTo(0.0);
            // without dropout the gradients differ from any of the masked passes
            try (LoraAdapter plainAdapter = LoraAdapter.init(MODEL, new LoraConfig(4, 8, 0, List.of("all-linear"), false),
                    DType.F32, Device.CPU, 4); DecoderLm noDropout = base.withAdapter(plainAdapter)) {
                try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                    for (int k = 0; k < adapter.parameters().size(); k++) {
                        plainAdapter.parameters().get(k).copy_(adapter.parameters().get(k).detach());
                    }
                }
                assertThat(maxDifference(plain, gradients(noDropout, false))).isGreaterThan(1e-6);
            }
        }
    }

    /**
     * In a bf16 model, an adapted projection is {@code r(float(y) + Δ)}, one rounding as PEFT's (see
     * {@link LoraAdapter#added}): a tiny model whose attention is zero (q, k, v, o and their biases) and
     * whose second layer is zero passes {@code h = e + down(silu(gate(n)) · up(n))} with n the first
     * layer's normed embedding e, so its final hidden state is computable from the same operations; with
     * a float32 adapter on down_proj it must be {@code rmsNorm(e + added(down(g), g))}, not the
     * delta rounded before the sum.
     */
    @Test
    void aBf16ModelRoundsEachAdaptedProjectionsSumOnce() {
        ModelConfig bf16 = ModelPresets.config("qwen2", "tiny", 64, 1, 2, "bfloat16");
        LoraConfig c = new LoraConfig(4, 8, 0, List.of("down_proj"), false);
        try (DecoderLm base = DecoderLm.random(bf16, DType.BF16, Device.CPU, 3);
                LoraAdapter adapter = LoraAdapter.init(bf16, c, LoraAdapter.trainingDtype(DType.BF16), Device.CPU, 4);
                DecoderLm agent = base.withAdapter(adapter);
                Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(8)) {
            Map<String, Tensor> w = base.namedParameters();
            w.forEach((name, t) -> {
                if (name.contains("self_attn.") || name.startsWith(DecoderLm.layer(1, ""))
                        && !name.endsWith("layernorm.weight")) {
                    t.fill_(0);
                }
            });
            Tensor b0 = adapter.parameters().get(1);
            b0.copy_(Tensor.randn(rng, 1.0, DType.F32, Device.CPU, b0.shape())); // Δ as large as y: many near-ties
            Tensor ids = Tensor.ofLongs(IDS, Device.CPU, 1, IDS.length);
            Tensor pos = Tensor.ofLongs(new long[] {0, 1, 2, 3, 4, 5}, Device.CPU, 1, IDS.length);
            Tensor hidden = agent.forward(ids, pos, null, null, 0).hidden();
            Tensor e = Tensor.embedding(w.get("model.embed_tokens.weight"), ids);
            String l0 = DecoderLm.layer(0, "");
            Tensor n = e.rmsNorm(w.get(l0 + "post_attention_layernorm.weight"), bf16.rmsNormEps());
            Tensor gated = n.linear(w.get(l0 + "mlp.gate_proj.weight"), null).silu()
                    .mul(n.linear(w.get(l0 + "mlp.up_proj.weight"), null));
            Tensor down = w.get(l0 + "mlp.down_proj.weight");
            Tensor finalNorm = w.get("model.norm.weight");
            Tensor once = e.add(adapter.added(gated.linear(down, null), gated, 0, "down_proj", null))
                    .rmsNorm(finalNorm, bf16.rmsNormEps());
            Tensor twice = e.add(gated.linear(down, null).add(adapter.delta(gated, 0, "down_proj", null)))
                    .rmsNorm(finalNorm, bf16.rmsNormEps());
            assertThat(hidden.dtype()).isEqualTo(DType.BF16);
            assertThat(hidden.bitEquals(once)).isTrue();
            assertThat(twice.bitEquals(once)).as("the delta rounded first differs somewhere").isFalse();
        }
    }

    @Test
    void float32AdaptersTrainOnABf16BaseWithGradientCheckpointing() {
        ModelConfig bf16 = ModelPresets.config("qwen2", "tiny", 64, 1, 2, "bfloat16");
        LoraConfig c = new LoraConfig(4, 8, 0, List.of("all-linear"), false);
        assertThat(LoraAdapter.trainingDtype(DType.BF16)).isEqualTo(DType.F32);
        try (DecoderLm base = DecoderLm.random(bf16, DType.BF16, Device.CPU, 3);
                LoraAdapter adapter = LoraAdapter.init(bf16, c, LoraAdapter.trainingDtype(DType.BF16), Device.CPU, 4);
                DecoderLm agent = base.withAdapter(adapter)) {
            base.parameters().forEach(p -> p.requiresGrad(false));
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(8)) {
                assertThat(logits(agent).sub(logits(base)).abs().max().item()).isEqualTo(0.0);
                for (int k = 1; k < adapter.parameters().size(); k += 2) {
                    Tensor p = adapter.parameters().get(k);
                    p.copy_(Tensor.randn(rng, 0.05, DType.F32, Device.CPU, p.shape()));
                }
                assertThat(logits(agent).dtype()).isEqualTo(DType.BF16);
            }
            List<double[]> plain = gradients(agent, false);
            List<double[]> checkpointed = gradients(agent, true);
            assertThat(adapter.parameters()).allMatch(p -> p.dtype() == DType.F32 && p.grad().dtype() == DType.F32);
            assertThat(maxDifference(plain, checkpointed)).isLessThan(1e-3 * Math.max(1, maxAbs(plain)));
            assertThat(maxAbs(plain)).isGreaterThan(0.0);
        }
    }

    static double maxAbs(List<double[]> a) {
        double m = 0;
        for (double[] x : a) {
            for (double v : x) {
                m = Math.max(m, Math.abs(v));
            }
        }
        return m;
    }
}
