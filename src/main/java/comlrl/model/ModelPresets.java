package comlrl.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Locale;

/**
 * Named model shapes for random-weight models ({@code init-model}, benchmarks, tests).
 *
 * <ul>
 *   <li>{@code tiny}: E=64, L=2, H=4, K=2, MLP 128 — trains in seconds on a laptop CPU</li>
 *   <li>{@code small}: E=256, L=4, H=8, K=2, MLP 704</li>
 *   <li>{@code qwen2.5-0.5b}: the real Qwen2.5-0.5B shape (E=896, L=24, H=14, K=2, MLP 4864,
 *       V=151936, tied embeddings)</li>
 *   <li>{@code qwen2.5-1.5b}: Qwen2.5-1.5B (E=1536, L=28, H=12, K=2, MLP 8960, V=151936, tied)</li>
 *   <li>{@code qwen2.5-coder-3b}: Qwen2.5-Coder-3B (E=2048, L=36, H=16, K=2, MLP 11008, V=151936,
 *       tied)</li>
 * </ul>
 * The Qwen shapes keep their own vocabulary size and tie the embeddings, as the released models do.
 */
public final class ModelPresets {
    public static final List<String> NAMES = List.of("tiny", "small", "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-coder-3b");
    public static final List<String> ARCHS = List.of("qwen2", "llama", "qwen3", "mistral");
    private static final ObjectMapper JSON = new ObjectMapper();

    private ModelPresets() {
    }

    /**
     * The config of preset {@code preset} in family {@code arch} with {@code vocabSize} tokens
     * (ignored by the Qwen shapes, which have their own vocabulary size) and the given special ids
     * ({@code bosId} negative for none).
     */
    public static ModelConfig config(String arch, String preset, int vocabSize, long bosId, long eosId, String dtype) {
        String a = arch.toLowerCase(Locale.ROOT);
        if (!ARCHS.contains(a)) {
            throw new IllegalArgumentException("Unknown --arch '" + arch + "'; use one of " + ARCHS);
        }
        ObjectNode n = JSON.createObjectNode();
        n.put("model_type", a);
        n.putArray("architectures").add(switch (a) {
            case "qwen2" -> "Qwen2ForCausalLM";
            case "llama" -> "LlamaForCausalLM";
            case "qwen3" -> "Qwen3ForCausalLM";
            default -> "MistralForCausalLM";
        });
        int hidden;
        int layers;
        int heads;
        int kv;
        int inter;
        boolean tied;
        switch (preset.toLowerCase(Locale.ROOT)) {
            case "tiny" -> { hidden = 64; layers = 2; heads = 4; kv = 2; inter = 128; tied = false; }
            case "small" -> { hidden = 256; layers = 4; heads = 8; kv = 2; inter = 704; tied = false; }
            case "qwen2.5-0.5b" -> {
                hidden = 896; layers = 24; heads = 14; kv = 2; inter = 4864; tied = true; vocabSize = 151936;
            }
            case "qwen2.5-1.5b" -> {
                hidden = 1536; layers = 28; heads = 12; kv = 2; inter = 8960; tied = true; vocabSize = 151936;
            }
            case "qwen2.5-coder-3b" -> {
                hidden = 2048; layers = 36; heads = 16; kv = 2; inter = 11008; tied = true; vocabSize = 151936;
            }
            default -> throw new IllegalArgumentException("Unknown --preset '" + preset + "'; use one of " + NAMES);
        }
        n.put("vocab_size", vocabSize);
        n.put("hidden_size", hidden);
        n.put("intermediate_size", inter);
        n.put("num_hidden_layers", layers);
        n.put("num_attention_heads", heads);
        n.put("num_key_value_heads", kv);
        if (a.equals("qwen3")) {
            n.put("head_dim", hidden / heads);
        }
        n.put("hidden_act", "silu");
        n.put("max_position_embeddings", 4096);
        n.put("rms_norm_eps", 1e-6);
        n.put("rope_theta", a.equals("llama") ? 500000.0 : 1000000.0);
        n.put("tie_word_embeddings", tied);
        if (a.equals("llama") || a.equals("qwen3")) {
            n.put("attention_bias", false); // Qwen2 (biases always) and Mistral (never) have no such field
        }
        n.put("initializer_range", 0.02);
        n.put("use_cache", true);
        n.put("torch_dtype", dtype);
        if (bosId >= 0) {
            n.put("bos_token_id", bosId);
        } else {
            n.putNull("bos_token_id"); // none: transformers expects null, not -1
        }
        n.put("eos_token_id", eosId);
        return ModelConfig.fromJson(n, "preset " + preset);
    }
}
