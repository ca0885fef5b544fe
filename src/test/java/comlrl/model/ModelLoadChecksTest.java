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

    @Test
    void specialTokenIdsOutsideTheVocabularyAreRefusedAtLoad(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("m");
        BuiltinModels.write("qwen2", "tiny", 1, DType.F32, dir);
        int vocab = ModelConfig.load(dir).vocabSize();
        String config = Files.readString(dir.resolve("config.json"));
        String generation = Files.readString(dir.resolve(GenerationConfig.FILE));
        // config.json: one id, a list, a pad id, a negative one, a string: each named with the file and the size
        String[][] bad = {{"eos_token_id", "99999"}, {"eos_token_id", "-5"}, {"pad_token_id", String.valueOf(vocab)},
            {"bos_token_id", "\"1\""}, {"eos_token_id", "[2, 99999]"}};
        for (String[] b : bad) {
            editConfig(dir, c -> c.set(b[0], readJson(b[1])));
            assertThatThrownBy(() -> CausalLm.load(dir.toString(), null, Device.CPU)).as(b[0] + " " + b[1])
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(dir.resolve("config.json") + ": " + b[0] + " " + b[1].replace(" ", ""))
                    .hasMessageContaining("vocab_size " + vocab);
            Files.writeString(dir.resolve("config.json"), config);
        }
        // generation_config.json likewise
        ObjectNode g = (ObjectNode) JSON.readTree(generation);
        g.put("eos_token_id", 99999);
        Files.writeString(dir.resolve(GenerationConfig.FILE), g.toString());
        assertThatThrownBy(() -> CausalLm.load(dir.toString(), null, Device.CPU))
                .hasMessageContaining(dir.resolve(GenerationConfig.FILE) + ": eos_token_id 99999")
                .hasMessageContaining("ids run from 0 to " + (vocab - 1));
        // null and -1 mean none; the last id of the vocabulary is an id
        g.putNull("eos_token_id");
        g.put("pad_token_id", -1);
        g.put("bos_token_id", vocab - 1);
        Files.writeString(dir.resolve(GenerationConfig.FILE), g.toString());
        try (CausalLm lm = CausalLm.load(dir.toString(), null, Device.CPU)) {
            assertThat(lm.model().config().vocabSize()).isEqualTo(vocab);
        }
    }

    private static com.fasterxml.jackson.databind.JsonNode readJson(String text) {
        try {
            return JSON.readTree(text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aWeightStoredAsIntegersIsRefusedNamingFileTensorAndBothDtypes(@TempDir Path tmp) throws Exception {
        ModelConfig c = TinyConfigs.of("qwen2", false, "float32");
        String name = "model.layers.0.mlp.down_proj.weight";
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 3); Scope s = Scope.open()) {
            Map<String, Tensor> w = new LinkedHashMap<>(m.namedParameters());
            Tensor original = w.get(name);
            w.put(name, Tensor.zerosOf(DType.I32, Device.CPU, original.shape())); // the same bytes per element as F32
            Safetensors.saveModelDir(w, tmp, 1L << 30);
            assertThatThrownBy(() -> DecoderLm.load(tmp, c, DType.F32, Device.CPU))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(tmp.resolve("model.safetensors") + ": tensor '" + name + "' is stored as I32")
                    .hasMessageContaining("(F32 here");
            assertThatThrownBy(() -> m.loadParameters(tmp)).hasMessageContaining("'" + name + "' is stored as I32");
            // a float16 file converts to the float32 model (a widening the loader has always done)
            w.put(name, original.to(DType.F16));
            Safetensors.saveModelDir(w, tmp, 1L << 30);
            try (DecoderLm back = DecoderLm.load(tmp, c, DType.F32, Device.CPU)) {
                assertThat(back.namedParameters().get(name).toFloatArray())
                        .containsExactly(original.to(DType.F16).to(DType.F32).toFloatArray());
            }
        }
    }
}
