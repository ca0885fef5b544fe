package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

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
}
