package comlrl.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** Small configs of each supported family for tests. */
public final class TinyConfigs {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TinyConfigs() {
    }

    /** A tiny config of {@code type} with GQA (4 query heads, 2 KV heads). */
    public static ModelConfig of(String type, boolean tied, String dtype) {
        return ModelConfig.fromJson(json(type, tied, dtype), "test config");
    }

    /**
     * {@link #of} with hidden size 512, MLP width 1024 and a vocabulary of 1024: the MLP and the LM
     * head have 2^19 or more elements, so few-row products without autograd run on oneDNN.
     */
    public static ModelConfig wide(String type, boolean tied) {
        return wide(type, tied, "float32");
    }

    /** {@link #wide(String, boolean)} in {@code dtype}. */
    public static ModelConfig wide(String type, boolean tied, String dtype) {
        ObjectNode n = json(type, tied, dtype);
        n.put("vocab_size", 1024);
        n.put("hidden_size", 512);
        n.put("intermediate_size", 1024);
        if (type.equals("qwen3")) {
            n.put("head_dim", 160);
        }
        return ModelConfig.fromJson(n, "wide test config");
    }

    private static ObjectNode json(String type, boolean tied, String dtype) {
        ObjectNode n = JSON.createObjectNode();
        n.put("model_type", type);
        n.put("vocab_size", 64);
        n.put("hidden_size", 32);
        n.put("intermediate_size", 48);
        n.put("num_hidden_layers", 2);
        n.put("num_attention_heads", 4);
        n.put("num_key_value_heads", 2);
        n.put("rms_norm_eps", 1e-6);
        n.put("rope_theta", 10000.0);
        n.put("max_position_embeddings", 128);
        n.put("tie_word_embeddings", tied);
        n.put("torch_dtype", dtype);
        n.put("hidden_act", "silu");
        n.put("eos_token_id", 2);
        n.put("bos_token_id", 1);
        if (type.equals("qwen3")) {
            n.put("head_dim", 16); // != hidden / heads, as in real Qwen3
        }
        if (type.equals("llama")) {
            ObjectNode rs = n.putObject("rope_scaling");
            rs.put("rope_type", "llama3");
            rs.put("factor", 8.0);
            rs.put("low_freq_factor", 1.0);
            rs.put("high_freq_factor", 4.0);
            rs.put("original_max_position_embeddings", 64);
        }
        return n;
    }
}
