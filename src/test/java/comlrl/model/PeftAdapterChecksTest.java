package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.model.io.Safetensors;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * PEFT adapter directories that are not plain LoRA adapters are refused, naming the setting or the
 * tensor, before any weights are read; half-precision weights are widened exactly.
 */
class PeftAdapterChecksTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ModelConfig MODEL = LoraAdapterTest.MODEL; // 2 layers
    private static final LoraConfig LORA = new LoraConfig(4, 8, 0, List.of("q_proj", "v_proj"), false);
    private static final String Q0 = "base_model.model.model.layers.0.self_attn.q_proj";

    /** A plain adapter directory with random A and B. */
    private static Path saved(Path tmp) {
        Path dir = tmp.resolve("adapter");
        try (LoraAdapter adapter = LoraAdapter.init(MODEL, LORA, DType.F32, Device.CPU, 1); Rng rng = new Rng(2);
                Scope s = Scope.open()) {
            try (GradMode g = GradMode.noGrad()) {
                for (Tensor p : adapter.parameters()) {
                    p.copy_(Tensor.randn(rng, 0.1, DType.F32, Device.CPU, p.shape()));
                }
            }
            adapter.savePeft(dir, "/models/base");
        }
        return dir;
    }

    private static void editConfig(Path dir, Consumer<ObjectNode> edit) throws Exception {
        Path file = dir.resolve(LoraAdapter.CONFIG_FILE);
        ObjectNode c = (ObjectNode) JSON.readTree(file.toFile());
        edit.accept(c);
        Files.writeString(file, c.toString());
    }

    /** Rewrites the weights file with {@code edit} applied to its tensors (in file order). */
    private static void editWeights(Path dir, Consumer<Map<String, Tensor>> edit) {
        Path file = dir.resolve(LoraAdapter.WEIGHTS_FILE);
        Map<String, Tensor> loaded = Safetensors.load(file);
        try (Scope s = Scope.open()) { // frees what edit makes
            Map<String, Tensor> w = new LinkedHashMap<>(loaded);
            edit.accept(w);
            Safetensors.save(w, file);
        } finally {
            loaded.values().forEach(Tensor::close);
        }
    }

    /** Every way of reading the directory fails with a message holding each of {@code fragments}. */
    private static void assertRefused(Path dir, String... fragments) {
        assertThatThrownBy(() -> LoraAdapter.checkPeft(dir)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll(fragments);
        assertThatThrownBy(() -> LoraAdapter.loadPeft(dir, MODEL, DType.F32, Device.CPU))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContainingAll(fragments);
    }

    static Stream<Arguments> unsupportedSettings() {
        return Stream.of(
                Arguments.of("alpha_pattern", "{\"q_proj\":32}"),
                Arguments.of("rank_pattern", "{\"model.layers.0.self_attn.v_proj\":16}"),
                Arguments.of("modules_to_save", "[\"lm_head\"]"),
                Arguments.of("layers_to_transform", "[0]"),
                Arguments.of("layers_pattern", "\"layers\""),
                Arguments.of("use_dora", "true"),
                Arguments.of("bias", "\"lora_only\""),
                Arguments.of("fan_in_fan_out", "true"),
                Arguments.of("target_modules", "\".*\\\\.(q_proj|v_proj)\""),
                Arguments.of("layer_replication", "[[0,1],[1,2]]"),
                Arguments.of("init_lora_weights", "\"pissa\""),
                Arguments.of("init_lora_weights", "\"loftq\""),
                Arguments.of("lora_bias", "true"),
                Arguments.of("exclude_modules", "[\"q_proj\"]"),
                Arguments.of("trainable_token_indices", "[1,2]"),
                Arguments.of("use_qalora", "true"),
                Arguments.of("target_parameters", "[\"mlp.experts.down_proj\"]"),
                Arguments.of("alora_invocation_tokens", "[5,6]"),
                Arguments.of("megatron_config", "{\"tensor_model_parallel_size\":2}"),
                Arguments.of("a_setting_of_a_newer_peft", "true"));
    }

    @ParameterizedTest(name = "{0} = {1}")
    @MethodSource("unsupportedSettings")
    void aSettingWeDoNotImplementIsRefusedWithItsNameAndValue(String key, String value, @TempDir Path tmp)
            throws Exception {
        Path dir = saved(tmp);
        JsonNode v = JSON.readTree(value);
        editConfig(dir, c -> c.set(key, v));
        String file = dir.resolve(LoraAdapter.CONFIG_FILE).toString();
        assertRefused(dir, file + ": " + key + " = " + v, "we load plain LoRA adapters");
        assertThatThrownBy(() -> LoraAdapter.readPeftConfig(dir)).hasMessageContaining(key + " = " + v);
    }

    @Test
    void anotherTaskTypeIsRefused(@TempDir Path tmp) throws Exception {
        Path dir = saved(tmp);
        editConfig(dir, c -> c.put("task_type", "SEQ_CLS"));
        assertRefused(dir, "task_type \"SEQ_CLS\" is not supported", "only CAUSAL_LM");
    }

    @Test
    void settingsAtTheirDoNothingValuesLoadAsThePlainAdapter(@TempDir Path tmp) throws Exception {
        Path dir = saved(tmp);
        byte[] weights = Files.readAllBytes(dir.resolve(LoraAdapter.WEIGHTS_FILE));
        editConfig(dir, c -> {
            c.putObject("rank_pattern").put("q_proj", 4);       // the global r
            c.putObject("alpha_pattern").put("v_proj", 8);      // the global lora_alpha
            c.putNull("modules_to_save");
            c.putArray("exclude_modules");
            c.putNull("layers_to_transform");
            c.put("use_dora", false);
            c.put("bias", "none");
            c.put("init_lora_weights", "gaussian");             // how A was drawn, irrelevant once saved
            c.putObject("loftq_config").put("loftq_bits", 4);   // peft ignores it unless init is loftq
            c.putNull("a_setting_of_a_newer_peft");
            c.put("peft_version", "0.17.1");
        });
        assertThat(LoraAdapter.checkPeft(dir)).isEqualTo(LORA);
        try (LoraAdapter back = LoraAdapter.loadPeft(dir, MODEL, DType.F32, Device.CPU); Scope s = Scope.open()) {
            Map<String, Tensor> file = Safetensors.load(dir.resolve(LoraAdapter.WEIGHTS_FILE));
            back.peftStateDict().forEach((k, t) -> assertThat(t.toBytes()).as(k).isEqualTo(file.get(k).toBytes()));
        }
        assertThat(Files.readAllBytes(dir.resolve(LoraAdapter.WEIGHTS_FILE))).isEqualTo(weights);
    }

    @Test
    void aTensorForAModuleWeDoNotAdaptIsRefusedNamingIt(@TempDir Path tmp) throws Exception {
        Path dir = saved(tmp);
        Path file = dir.resolve(LoraAdapter.WEIGHTS_FILE);
        String head = "base_model.model.lm_head.lora_A.weight";
        editWeights(dir, w -> {
            w.put(head, Tensor.zerosOf(DType.F32, Device.CPU, 4, MODEL.hiddenSize()));
            w.put("base_model.model.lm_head.lora_B.weight", Tensor.zerosOf(DType.F32, Device.CPU, MODEL.vocabSize(), 4));
        });
        assertRefused(dir, file + ": tensor '" + head + "' is a LoRA factor or copy of lm_head, which we do not adapt");

        Path other = saved(tmp.resolve("k"));
        String k = "base_model.model.model.layers.1.self_attn.k_proj.lora_A.weight";
        editWeights(other, w -> w.put(k, Tensor.zerosOf(DType.F32, Device.CPU, 4, MODEL.hiddenSize())));
        assertRefused(other, "tensor '" + k + "' adapts k_proj but adapter_config.json's target_modules is "
                + "[q_proj, v_proj]");

        Path embed = saved(tmp.resolve("e"));
        String e = "base_model.model.model.embed_tokens.weight"; // peft's save_embedding_layers
        editWeights(embed, w -> w.put(e, Tensor.zerosOf(DType.F32, Device.CPU, MODEL.vocabSize(), MODEL.hiddenSize())));
        assertRefused(embed, "tensor '" + e + "'", "embed_tokens, which we do not adapt");
    }

    @Test
    void anAdapterOnSomeLayersOnlyIsRefused(@TempDir Path tmp) throws Exception {
        Path dir = saved(tmp);
        editWeights(dir, w -> w.keySet().removeIf(n -> n.contains("layers.0.")));
        assertRefused(dir, "tensor '" + Q0 + ".lora_A.weight' is missing", "some layers only are not supported");
        // without layer 1, the file alone looks like an adapter of a 1-layer model: the base tells
        Path last = saved(tmp.resolve("last"));
        editWeights(last, w -> w.keySet().removeIf(n -> n.contains("layers.1.")));
        assertThat(LoraAdapter.checkPeft(last)).isEqualTo(LORA);
        assertThatThrownBy(() -> LoraAdapter.loadPeft(last, MODEL, DType.F32, Device.CPU))
                .hasMessageContaining("'base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight' is missing");
    }

    @Test
    void integerOrNarrowingDtypesAreRefusedNamingFileTensorAndBothDtypes(@TempDir Path tmp) throws Exception {
        Path dir = saved(tmp);
        Path file = dir.resolve(LoraAdapter.WEIGHTS_FILE);
        String b = Q0 + ".lora_B.weight";
        editWeights(dir, w -> w.put(b, Tensor.zerosOf(DType.I32, Device.CPU, w.get(b).shape())));
        assertRefused(dir, file + ": tensor '" + b + "' is stored as I32, an integer type", "floating-point (F32 here)");

        Path wide = saved(tmp.resolve("f64"));
        editWeights(wide, w -> w.put(b, w.get(b).to(DType.F64)));
        assertThat(LoraAdapter.checkPeft(wide)).isEqualTo(LORA); // a float: fine without a target dtype
        assertThatThrownBy(() -> LoraAdapter.loadPeft(wide, MODEL, DType.F32, Device.CPU))
                .hasMessageContaining("tensor '" + b + "' is stored as F64 but this adapter trains in F32");
    }

    @Test
    void aRankOtherThanTheConfigsIsRefusedFromTheHeader(@TempDir Path tmp) throws Exception {
        Path dir = saved(tmp);
        editConfig(dir, c -> c.put("r", 8));
        assertRefused(dir, "tensor '" + Q0 + ".lora_A.weight' has shape [4, " + MODEL.hiddenSize() + "] (rank 4)",
                "adapter_config.json's r = 8");
    }

    /** float16 bits to the float32 they denote (normal numbers and zero). */
    private static float halfToFloat(int h) {
        int sign = (h >>> 15) & 1;
        int exponent = (h >>> 10) & 0x1f;
        int mantissa = h & 0x3ff;
        int bits = exponent == 0 ? sign << 31 : sign << 31 | (exponent - 15 + 127) << 23 | mantissa << 13;
        return Float.intBitsToFloat(bits);
    }

    /**
     * The adapter's weights stored in {@code dtype} (2-byte elements from {@code bits}, one draw per
     * element), loaded as a float32 adapter: every value is exactly the stored one widened.
     */
    private static void assertWidened(Path tmp, DType dtype, IntUnaryOperator bits, IntUnaryOperator toFloatBits) {
        Path dir = saved(tmp);
        Map<String, float[]> expected = new LinkedHashMap<>();
        int[] draw = {0};
        editWeights(dir, w -> w.replaceAll((name, t) -> {
            ByteBuffer buf = ByteBuffer.allocate((int) t.numel() * 2).order(ByteOrder.LITTLE_ENDIAN);
            float[] values = new float[(int) t.numel()];
            for (int i = 0; i < values.length; i++) {
                int h = bits.applyAsInt(draw[0]++);
                buf.putShort((short) h);
                values[i] = Float.intBitsToFloat(toFloatBits.applyAsInt(h));
            }
            expected.put(name, values);
            return Tensor.fromBytes(buf.flip(), dtype, t.shape());
        }));
        assertThat(Safetensors.readHeader(dir.resolve(LoraAdapter.WEIGHTS_FILE))).allMatch(e -> e.dtype() == dtype);
        try (LoraAdapter back = LoraAdapter.loadPeft(dir, MODEL, DType.F32, Device.CPU)) {
            back.peftStateDict().forEach((k, t) -> {
                assertThat(t.dtype()).isEqualTo(DType.F32);
                assertThat(t.toFloatArray()).as(k).containsExactly(expected.get(k));
            });
        }
    }

    @Test
    void float16WeightsAreWidenedToFloat32Exactly(@TempDir Path tmp) {
        // sign, exponent 1..30 (normal, finite), any mantissa, from a fixed scramble of the index
        assertWidened(tmp, DType.F16, i -> {
            int r = i * 0x9E3779B1;
            return (r >>> 31) << 15 | (1 + Math.floorMod(r >>> 10, 30)) << 10 | (r >>> 3) & 0x3ff;
        }, h -> Float.floatToIntBits(halfToFloat(h)));
    }

    @Test
    void bfloat16WeightsAreWidenedToFloat32Exactly(@TempDir Path tmp) {
        // bfloat16 is the top half of a float32: exponent 1..254 (finite), any mantissa
        assertWidened(tmp, DType.BF16, i -> {
            int r = i * 0x9E3779B1;
            return (r >>> 31) << 15 | (1 + Math.floorMod(r >>> 8, 254)) << 7 | (r >>> 2) & 0x7f;
        }, h -> h << 16);
    }
}
