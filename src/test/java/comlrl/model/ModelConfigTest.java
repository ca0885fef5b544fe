package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelConfigTest {
    @Test
    void readsQwen2FieldsAndDefaults(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("config.json"), """
                {"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864,
                 "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
                 "rope_theta": 1000000.0, "rms_norm_eps": 1e-06, "tie_word_embeddings": true,
                 "torch_dtype": "bfloat16", "eos_token_id": 151643, "bos_token_id": 151643, "hidden_act": "silu"}
                """);
        ModelConfig c = ModelConfig.load(dir);
        assertThat(c.headDim()).isEqualTo(64);
        assertThat(c.qkvBias()).isTrue();
        assertThat(c.outputBias()).isFalse();
        assertThat(c.tieWordEmbeddings()).isTrue();
        assertThat(c.dtype()).isEqualTo(comlrl.tensor.DType.BF16);
        assertThat(c.eosTokenIds()).containsExactly(151643L);
    }

    @Test
    void unknownModelTypeNamesTheSupportedOnes(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("config.json"), "{\"model_type\": \"gpt2\", \"vocab_size\": 10}");
        assertThatThrownBy(() -> ModelConfig.load(dir)).hasMessageContaining("'gpt2' is not supported")
                .hasMessageContaining("llama, mistral, qwen2, qwen3");
    }

    @Test
    void malformedOrMissingConfigIsNamed(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> ModelConfig.load(dir)).hasMessageContaining("No config.json in");
        Files.writeString(dir.resolve("config.json"), "{\"model_type\": ");
        assertThatThrownBy(() -> ModelConfig.load(dir)).hasMessageContaining("Malformed JSON in").hasMessageContaining("config.json");
    }

    @Test
    void llama3RopeScalingGoldenValues() {
        // D = 8, theta = 10000: inv_freq = [1, 0.1, 0.01, 0.001]; wavelen = 2π/inv = [6.28, 62.8, 628, 6283]
        // original = 64, low_freq_factor 1 → low_wavelen 64; high_freq_factor 4 → high_wavelen 16; factor 8
        // j=0: 6.28 < 16 → kept 1.0;  j=2,3: > 64 → /8 → 0.00125, 0.000125
        // j=1: medium: s = (64/62.83 − 1)/(4 − 1) = 0.006198; (1−s)·0.1/8 + s·0.1 = 0.0130424
        RopeScaling r = new RopeScaling("llama3", 8.0, 1.0, 4.0, 64);
        float[] inv = r.inverseFrequencies(8, 10000.0);
        assertThat((double) inv[0]).isCloseTo(1.0, within(1e-6));
        assertThat((double) inv[1]).isCloseTo(0.0130424, within(1e-6));
        assertThat((double) inv[2]).isCloseTo(0.00125, within(1e-8));
        assertThat((double) inv[3]).isCloseTo(0.000125, within(1e-9));
        float[] linear = new RopeScaling("linear", 2.0, 0, 0, 0).inverseFrequencies(8, 10000.0);
        assertThat((double) linear[1]).isCloseTo(0.05, within(1e-7));
    }

    @Test
    void slidingWindowIsOnlyInForceWhereTheModelUsesIt() {
        com.fasterxml.jackson.databind.node.ObjectNode base = TinyConfigs.of("qwen2", false, "float32").raw().deepCopy();
        base.put("sliding_window", 4096);
        assertThat(ModelConfig.fromJson(base, "t").slidingWindow()).isZero(); // qwen2 without use_sliding_window
        base.put("use_sliding_window", true);
        assertThat(ModelConfig.fromJson(base, "t").slidingWindow()).isEqualTo(4096);
        base.put("model_type", "mistral");
        base.remove("use_sliding_window");
        base.put("sliding_window", 6);
        ModelConfig mistral = ModelConfig.fromJson(base, "t");
        assertThat(mistral.slidingWindow()).isEqualTo(6);
        try (DecoderLm m = DecoderLm.random(mistral, comlrl.tensor.DType.F32, comlrl.tensor.Device.CPU, 1);
                comlrl.tensor.Scope s = comlrl.tensor.Scope.open()) {
            comlrl.tensor.Tensor ids = comlrl.tensor.Tensor.ofLongs(new long[] {1, 2, 3, 4, 5, 6, 7}, comlrl.tensor.Device.CPU, 1, 7);
            comlrl.tensor.Tensor pos = comlrl.tensor.Tensor.arangeOf(7, comlrl.tensor.Device.CPU).view(1, 7);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> m.forward(ids, pos, null, null, 0))
                    .hasMessageContaining("exceeds this model's sliding_window of 6");
            assertThat(m.forward(ids.narrow(1, 0, 6), pos.narrow(1, 0, 6), null, null, 0).logits().size(1)).isEqualTo(6);
        }
    }

    private static com.fasterxml.jackson.databind.node.ObjectNode tiny() {
        return TinyConfigs.of("qwen2", false, "float32").raw().deepCopy();
    }

    private static org.assertj.core.api.AbstractThrowableAssert<?, ? extends Throwable> refused(
            com.fasterxml.jackson.databind.node.ObjectNode json) {
        return assertThatThrownBy(() -> ModelConfig.fromJson(json, "dir/config.json"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("dir/config.json: ");
    }

    @Test
    void impossibleSizesAreRefusedWithTheFieldNamed() {
        // field, value, what the message says
        Object[][] cases = {
            {"num_attention_heads", 0, "num_attention_heads must be at least 1, got 0"},
            {"num_key_value_heads", 0, "num_key_value_heads must be at least 1, got 0"},
            {"num_key_value_heads", 3, "num_attention_heads (4) must be a multiple of num_key_value_heads (3)"},
            {"hidden_size", 30, "hidden_size (30) is not a multiple of num_attention_heads (4); fix the sizes or give head_dim"},
            {"head_dim", 7, "head_dim 7 must be even"},
            {"intermediate_size", -5, "intermediate_size must be at least 1, got -5"},
            {"num_hidden_layers", 0, "num_hidden_layers must be at least 1, got 0"},
            {"vocab_size", 0, "vocab_size must be at least 1"},
            {"rms_norm_eps", 0.0, "rms_norm_eps must be a positive number"},
            {"max_position_embeddings", 0, "max_position_embeddings must be at least 1"},
            {"hidden_size", 5_000_000_000L, "'hidden_size' = 5000000000 is far beyond any real model"},
            {"num_hidden_layers", "2", "missing or non-integer 'num_hidden_layers'"},
        };
        for (Object[] c : cases) {
            var json = tiny();
            json.set((String) c[0], new ObjectMapper().valueToTree(c[1]));
            refused(json).as(c[0] + " = " + c[1]).hasMessageContaining((String) c[2]);
        }
        var explicit = tiny();
        explicit.put("hidden_size", 30);
        explicit.put("head_dim", 8); // an explicit head_dim need not divide hidden_size
        assertThat(ModelConfig.fromJson(explicit, "t").headDim()).isEqualTo(8);
    }

    @Test
    void absurdSizesAreRefusedBeforeAnythingIsAllocated() {
        var c = tiny();
        c.put("vocab_size", 2_000_000_000);
        c.put("hidden_size", 1_000_000);
        c.put("num_attention_heads", 1000);
        c.put("num_key_value_heads", 1000);
        refused(c).hasMessageContaining("beyond any real model").hasMessageContaining("vocab_size (2000000000)");
    }

    @Test
    void parameterCountMatchesTheTensorsAllocated() {
        for (String arch : new String[] {"qwen2", "llama", "qwen3", "mistral"}) {
            for (boolean tied : new boolean[] {false, true}) {
                ModelConfig c = TinyConfigs.of(arch, tied, "float32");
                long n = DecoderLm.expectedShapes(c).values().stream()
                        .mapToLong(sh -> java.util.Arrays.stream(sh).reduce(1, (x, y) -> x * y)).sum();
                assertThat(c.parameterCount()).as(arch + " tied=" + tied).isEqualTo(n);
            }
        }
        // Qwen2.5-0.5B: 494,032,768 parameters (tied), as its model card says
        assertThat(ModelPresets.config("qwen2", "qwen2.5-0.5b", 0, -1, 0, "bfloat16").parameterCount())
                .isEqualTo(494_032_768L);
        // Qwen2.5-1.5B: 1.54B and Qwen2.5-Coder-3B: 3.09B (their model cards), counted by hand from the shapes:
        // V·E + L·(2E² + 2·E·K·d + E + 2K·d + 3·E·MLP + 2E) + E
        assertThat(ModelPresets.config("qwen2", "qwen2.5-1.5b", 0, -1, 0, "bfloat16").parameterCount())
                .isEqualTo(1_543_714_304L);
        assertThat(ModelPresets.config("qwen2", "qwen2.5-coder-3b", 0, -1, 0, "bfloat16").parameterCount())
                .isEqualTo(3_085_938_688L);
    }

    @Test
    void realConfigsWithoutAttentionBiasLoad() {
        var c = TinyConfigs.of("llama", false, "float32").raw().deepCopy();
        c.remove("attention_bias");
        ModelConfig llama = ModelConfig.fromJson(c, "t");
        assertThat(llama.qkvBias()).isFalse();
        assertThat(llama.outputBias()).isFalse();
        c.put("attention_bias", true);
        assertThat(ModelConfig.fromJson(c, "t").outputBias()).isTrue();
        var q = tiny();
        q.remove("attention_bias");
        assertThat(ModelConfig.fromJson(q, "t").qkvBias()).isTrue();
    }

    @Test
    void presetsWriteNullForNoBosAndNoAttentionBiasOnQwen2() throws Exception {
        ModelConfig qwen2 = ModelPresets.config("qwen2", "tiny", 100, -1, 5, "float32");
        var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(qwen2.toJson());
        assertThat(json.get("bos_token_id").isNull()).isTrue();
        assertThat(json.has("attention_bias")).isFalse();
        assertThat(qwen2.bosTokenId()).isEqualTo(-1);
        assertThat(qwen2.qkvBias()).isTrue();
        var llama = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(ModelPresets.config("llama", "tiny", 100, 1, 5, "float32").toJson());
        assertThat(llama.get("bos_token_id").asLong()).isEqualTo(1);
        assertThat(llama.get("attention_bias").asBoolean(true)).isFalse();
    }
}
