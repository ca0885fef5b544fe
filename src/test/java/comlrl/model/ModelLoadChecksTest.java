package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.generation.BuiltinModels;
import comlrl.generation.CausalLm;
import comlrl.generation.GenerationConfig;
import comlrl.model.io.Safetensors;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.tokenizer.TinyTokenizerFactory;
import comlrl.tokenizer.Tokenizer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What DecoderLm.load and CausalLm.load refuse, and how they say it. */
class ModelLoadChecksTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static void editConfig(Path dir, java.util.function.Consumer<ObjectNode> edit) throws Exception {
        ObjectNode c = (ObjectNode) JSON.readTree(dir.resolve("config.json").toFile());
        edit.accept(c);
        Files.writeString(dir.resolve("config.json"), c.toString());
    }

    @Test
    void tensorsTheConfigDoesNotUseAreReported(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("m");
        BuiltinModels.write("qwen2", "tiny", 1, DType.F32, dir); // 2 layers
        editConfig(dir, c -> c.put("num_hidden_layers", 1));
        assertThatThrownBy(() -> CausalLm.load(dir.toString(), null, Device.CPU))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("model.safetensors holds 12 tensors this config does not use, e.g. model.layers.1.")
                .hasMessageContaining("config.json's num_hidden_layers says 1 but the checkpoint has layers up to 1");

        BuiltinModels.write("llama", "tiny", 1, DType.F32, tmp.resolve("l"));
        editConfig(tmp.resolve("l"), c -> c.put("model_type", "qwen2")); // qwen2 wants biases the file lacks
        assertThatThrownBy(() -> CausalLm.load(tmp.resolve("l").toString(), null, Device.CPU))
                .hasMessageContaining("missing tensor 'model.layers.0.self_attn.q_proj.bias'");
        BuiltinModels.write("qwen2", "tiny", 1, DType.F32, tmp.resolve("q"));
        editConfig(tmp.resolve("q"), c -> c.put("model_type", "mistral")); // the file has biases mistral lacks
        assertThatThrownBy(() -> CausalLm.load(tmp.resolve("q").toString(), null, Device.CPU))
                .hasMessageContaining("holds 6 tensors this config does not use")
                .hasMessageContaining("declares no such biases");
    }

    @Test
    void aTiedModelMayCarryItsHeadAndOldRotaryBuffers(@TempDir Path tmp) throws Exception {
        ModelConfig c = TinyConfigs.of("qwen2", true, "float32");
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 3); Scope s = Scope.open()) {
            Map<String, Tensor> w = new LinkedHashMap<>(m.namedParameters());
            w.put("lm_head.weight", w.get("model.embed_tokens.weight"));
            w.put("model.layers.0.self_attn.rotary_emb.inv_freq", Tensor.zerosOf(DType.F32, Device.CPU, 4));
            Safetensors.saveModelDir(w, tmp, 1L << 30);
            try (DecoderLm back = DecoderLm.load(tmp, c, DType.F32, Device.CPU)) {
                assertThat(back.namedParameters()).hasSize(m.namedParameters().size());
            }
        }
    }

    @Test
    void nonFiniteWeightsAreRefusedNamingTensorAndFile(@TempDir Path tmp) throws Exception {
        ModelConfig c = TinyConfigs.of("llama", false, "bfloat16");
        try (DecoderLm m = DecoderLm.random(c, DType.BF16, Device.CPU, 3); Scope s = Scope.open()) {
            Map<String, Tensor> w = new LinkedHashMap<>(m.namedParameters());
            Tensor bad = w.get("model.layers.1.mlp.up_proj.weight").cloneTensor();
            bad.select(0, 3).select(0, 7).fill_(Double.NaN);
            w.put("model.layers.1.mlp.up_proj.weight", bad);
            Safetensors.saveModelDir(w, tmp, 3_000); // sharded: the message names the shard
            String shard = JSON.readTree(tmp.resolve(Safetensors.INDEX_FILE).toFile()).get("weight_map")
                    .get("model.layers.1.mlp.up_proj.weight").asText();
            assertThatThrownBy(() -> DecoderLm.load(tmp, c, DType.BF16, Device.CPU))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(tmp.resolve(shard) + ": tensor 'model.layers.1.mlp.up_proj.weight' holds NaN "
                            + "or infinite values");
            // resuming a checkpoint checks the same way
            assertThatThrownBy(() -> m.loadParameters(tmp)).hasMessageContaining("holds NaN or infinite values");
            bad.fill_(Double.POSITIVE_INFINITY);
            Safetensors.saveModelDir(w, tmp, 1L << 30);
            assertThatThrownBy(() -> DecoderLm.load(tmp, c, DType.F32, Device.CPU))
                    .hasMessageContaining("model.safetensors: tensor 'model.layers.1.mlp.up_proj.weight' holds NaN");
        }
    }

    @Test
    void aTokenizerLargerThanTheEmbeddingIsRefusedAtLoad(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("m");
        int ids = TinyTokenizerFactory.write(dir);
        ModelConfig c = ModelPresets.config("qwen2", "tiny", 300, -1, 2, "float32"); // fewer rows than ids
        try (Tokenizer t = Tokenizer.load(dir);
                CausalLm lm = new CausalLm(dir.toString(), DecoderLm.random(c, DType.F32, Device.CPU, 1), Tokenizer.load(dir),
                        GenerationConfig.of(-1, 2, t.padTokenId()))) {
            lm.save(dir);
        }
        assertThatThrownBy(() -> CausalLm.load(dir.toString(), null, Device.CPU))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the tokenizer has " + ids + " token ids")
                .hasMessageContaining("vocab_size gives the embedding only 300 rows")
                .hasMessageContaining("resize_token_embeddings");
        // more rows than ids is normal (embeddings padded to a multiple)
        ModelConfig padded = ModelPresets.config("qwen2", "tiny", ids + 61, -1, 2, "float32");
        try (Tokenizer t = Tokenizer.load(dir);
                CausalLm lm = new CausalLm(dir.toString(), DecoderLm.random(padded, DType.F32, Device.CPU, 1),
                        Tokenizer.load(dir), GenerationConfig.of(-1, 2, t.padTokenId()))) {
            lm.save(dir);
        }
        try (CausalLm lm = CausalLm.load(dir.toString(), null, Device.CPU)) {
            assertThat(lm.model().config().vocabSize()).isEqualTo(ids + 61);
        }
    }

    @Test
    void aModelLargerThanMemoryIsRefusedBeforeAllocating() {
        ObjectNode n = TinyConfigs.of("qwen2", false, "float32").raw().deepCopy();
        n.put("vocab_size", 1_000_000);
        n.put("hidden_size", 100_000);
        n.put("num_attention_heads", 1000);
        n.put("num_key_value_heads", 1000);
        ModelConfig huge = ModelConfig.fromJson(n, "t"); // 2.8e11 parameters: valid sizes, no machine's memory
        assertThatThrownBy(() -> DecoderLm.random(huge, DType.F32, Device.CPU, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parameters")
                .hasMessageContaining("more than this machine's");
    }
}
