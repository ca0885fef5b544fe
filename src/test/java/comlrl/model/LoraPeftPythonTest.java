package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our PEFT adapter directories against Python {@code peft}: {@code PeftModel.from_pretrained} loads
 * what {@link LoraAdapter#savePeft} writes onto the base, and its logits equal our adapter view's.
 * Needs Python with torch, transformers and peft. Run with
 * {@code mvn test -Dtest=LoraPeftPythonTest -Dtest.excludedGroups=none}.
 */
@Tag("python")
class LoraPeftPythonTest {
    @Test
    void peftLoadsOurAdapterAndGivesOurLogits(@TempDir Path tmp) throws Exception {
        assumeTrue(TransformersCompatibilityTest.pythonCanImport("torch, transformers, peft"),
                "python with torch, transformers and peft is not available");
        ModelConfig model = LoraAdapterTest.MODEL;
        LoraConfig c = new LoraConfig(4, 8, 0, List.of("q_proj", "k_proj", "o_proj", "up_proj", "down_proj"), true);
        double[] ours;
        try (DecoderLm base = DecoderLm.random(model, DType.F32, Device.CPU, 3);
                LoraAdapter adapter = LoraAdapter.init(model, c, DType.F32, Device.CPU, 4); Rng rng = new Rng(9)) {
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                for (Tensor p : adapter.parameters()) {
                    p.copy_(Tensor.randn(rng, 0.05, DType.F32, Device.CPU, p.shape()));
                }
            }
            base.save(tmp.resolve("base"), 1L << 30);
            adapter.savePeft(tmp.resolve("adapter"), tmp.resolve("base").toString());
            try (DecoderLm agent = base.withAdapter(adapter); Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                ours = LoraDecoderTest.logits(agent).toDoubleArray();
            }
        }
        Process p = new ProcessBuilder(TransformersCompatibilityTest.python(), "src/test/python/peft_lora.py",
                tmp.resolve("base").toString(), tmp.resolve("adapter").toString(),
                java.util.Arrays.toString(LoraDecoderTest.IDS)).redirectErrorStream(false).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(err).isZero();
        JsonNode result = new ObjectMapper().readTree(out);
        double[] theirs = new double[ours.length];
        int k = 0;
        for (JsonNode row : result.get("logits")) {
            for (JsonNode v : row) {
                theirs[k++] = v.asDouble();
            }
        }
        assertThat(k).isEqualTo(ours.length);
        for (int i = 0; i < ours.length; i++) {
            assertThat(ours[i]).as("logit %d", i).isCloseTo(theirs[i], within(1e-4));
        }
    }

    /**
     * {@code lora.autocast} against PEFT under {@code torch.autocast}, and the default against PEFT without
     * it: on the hand-worked inputs of {@link LoraAdapterTest#autocastRunsTheProductsInTheBasesDtypeWorkedByHand}
     * (every sum exact in float32, so only the bf16 roundings can differ) the delta and both gradients are
     * equal, bit for bit.
     */
    @Test
    void autocastGivesPeftsNumbersUnderTorchAutocast() throws Exception {
        JsonNode peft = peftAutocastNumbers();
        for (boolean autocast : new boolean[] {false, true}) {
            JsonNode theirs = peft.get(autocast ? "autocast" : "float32");
            assertThat(theirs.get("delta_dtype").asText()).isEqualTo("torch.bfloat16");
            assertThat(theirs.get("grad_dtype").asText()).isEqualTo("torch.float32");
            try (LoraAdapter adapter = LoraAdapterTest.filledAdapter(autocast, 1 + Math.scalb(1.0, -8), Math.scalb(1.0, -8));
                    Scope s = Scope.open()) {
                Tensor delta = adapter.delta(Tensor.zerosOf(DType.BF16, Device.CPU, 1, 1, 64).add(3), 0, "q_proj", null);
                assertPeftsOutputAndGradients(theirs, "autocast " + autocast, delta, adapter);
            }
        }
    }

    /**
     * The adapted projection's output {@code y + Δ} on a bf16 base against PEFT's, with and without
     * {@code torch.autocast}, on the hand-worked inputs of {@link
     * LoraAdapterTest#addedRoundsTheSumOnceAsPeftDoesWorkedByHand} (y = 1, Δ = 2⁻⁸ + 2⁻¹⁶: the sum rounded
     * once is 1 + 2⁻⁷, rounded after the delta's own rounding 1): the output and both gradients are equal,
     * bit for bit.
     */
    @Test
    void theAdaptedProjectionRoundsItsSumAsPeftDoes() throws Exception {
        JsonNode peft = peftAutocastNumbers().get("sum");
        for (boolean autocast : new boolean[] {false, true}) {
            JsonNode theirs = peft.get(autocast ? "autocast" : "float32");
            assertThat(theirs.get("delta_dtype").asText()).isEqualTo("torch.bfloat16");
            try (LoraAdapter adapter = LoraAdapterTest.filledAdapter(autocast, 1 + Math.scalb(1.0, -8), Math.scalb(1.0, -16));
                    Scope s = Scope.open()) {
                Tensor w = Tensor.zerosOf(DType.BF16, Device.CPU, 64, 64).add(Math.scalb(1.0, -6));
                Tensor x = Tensor.zerosOf(DType.BF16, Device.CPU, 1, 1, 64).add(1);
                Tensor out = adapter.added(x.linear(w, null), x, 0, "q_proj", null);
                assertPeftsOutputAndGradients(theirs, "autocast " + autocast, out, adapter);
            }
        }
    }

    /**
     * Backpropagates {@code L = Σ out} (bf16) into {@code adapter}'s A and B and holds the output and
     * both gradients, bit for bit, to PEFT's {@code theirs} ("delta", "dA", "dB": one value each).
     */
    private static void assertPeftsOutputAndGradients(JsonNode theirs, String as, Tensor out, LoraAdapter adapter) {
        out.toFloat().sum().backward();
        assertThat(out.dtype()).isEqualTo(DType.BF16);
        assertThat(out.toFloat().toDoubleArray()).as(as).containsOnly(theirs.get("delta").asDouble());
        assertThat(adapter.parameters().get(0).grad().toDoubleArray()).as(as).containsOnly(theirs.get("dA").asDouble());
        assertThat(adapter.parameters().get(1).grad().toDoubleArray()).as(as).containsOnly(theirs.get("dB").asDouble());
    }

    /**
     * A merged bf16 weight against PEFT's {@code merge_and_unload()} on the inputs of {@link
     * LoraAdapterTest#aMergedWeightRoundsOnceAsPeftsMergeAndUnload}: equal to its default (one rounding),
     * not to {@code safe_merge=True} (the delta rounded first).
     */
    @Test
    void aMergedWeightIsPeftsMergeAndUnload() throws Exception {
        JsonNode peft = peftAutocastNumbers().get("merged");
        assertThat(peft.get("default").get("dtype").asText()).isEqualTo("torch.bfloat16");
        try (LoraAdapter adapter = LoraAdapterTest.filledAdapter(false, 1 + Math.scalb(1.0, -8), Math.scalb(1.0, -10));
                Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Tensor merged = adapter.merged(Tensor.zerosOf(DType.BF16, Device.CPU, 64, 64).add(1), 0, "q_proj");
            assertThat(merged.toFloat().toDoubleArray()).containsOnly(peft.get("default").get("value").asDouble());
            assertThat(peft.get("safe").get("value").asDouble()).isNotEqualTo(peft.get("default").get("value").asDouble());
        }
    }

    /** What {@code src/test/python/peft_lora_autocast.py} prints: PEFT's numbers for every case. */
    private static JsonNode peftAutocastNumbers() throws Exception {
        assumeTrue(TransformersCompatibilityTest.pythonCanImport("torch, peft"), "python with torch and peft is not available");
        Process p = new ProcessBuilder(TransformersCompatibilityTest.python(), "src/test/python/peft_lora_autocast.py")
                .redirectErrorStream(false).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(err).isZero();
        return new ObjectMapper().readTree(out);
    }
}
