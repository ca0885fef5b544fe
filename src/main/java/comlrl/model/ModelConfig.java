package comlrl.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.tensor.DType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The decoder architecture read from a Hugging Face {@code config.json}. The raw JSON is kept so
 * that a saved model carries every field it was loaded with.
 *
 * @param modelType qwen2, llama, qwen3 or mistral
 * @param vocabSize V
 * @param hiddenSize E
 * @param intermediateSize MLP width
 * @param numLayers L
 * @param numHeads H (query heads)
 * @param numKvHeads K (key/value heads; H % K == 0)
 * @param headDim D ({@code head_dim}, default E / H)
 * @param rmsNormEps epsilon of every RMSNorm
 * @param ropeTheta rotary base
 * @param ropeScaling frequency scaling (default none)
 * @param maxPositionEmbeddings context length the model was made for
 * @param tieWordEmbeddings the LM head reuses the embedding matrix
 * @param qkvBias q/k/v projections have biases (Qwen2 always; Llama/Qwen3 with {@code attention_bias})
 * @param outputBias o_proj has a bias (Llama/Qwen3 with {@code attention_bias})
 * @param mlpBias MLP projections have biases (Llama {@code mlp_bias})
 * @param qkNorm per-head RMSNorm on queries and keys before rotary (Qwen3)
 * @param dtype weights' dtype ({@code torch_dtype} or {@code dtype}; float32 when absent)
 * @param eosTokenIds end-of-sequence ids (may be several)
 * @param bosTokenId beginning-of-sequence id or -1
 * @param padTokenId padding id or -1
 * @param raw the JSON this config was read from
 */
public record ModelConfig(String modelType, int vocabSize, int hiddenSize, int intermediateSize,
        int numLayers, int numHeads, int numKvHeads, int headDim, double rmsNormEps, double ropeTheta,
        RopeScaling ropeScaling, int maxPositionEmbeddings, boolean tieWordEmbeddings, boolean qkvBias,
        boolean outputBias, boolean mlpBias, boolean qkNorm, DType dtype, List<Long> eosTokenIds,
        long bosTokenId, long padTokenId, ObjectNode raw) {

    /** The {@code model_type}s we implement. */
    public static final Set<String> SUPPORTED = Set.of("qwen2", "llama", "qwen3", "mistral");

    private static final ObjectMapper JSON = new ObjectMapper();

    public ModelConfig {
        if (numHeads % numKvHeads != 0) {
            throw new IllegalArgumentException("num_attention_heads (" + numHeads
                    + ") must be a multiple of num_key_value_heads (" + numKvHeads + ")");
        }
        eosTokenIds = List.copyOf(eosTokenIds);
    }

    /** Reads {@code dir/config.json}. */
    public static ModelConfig load(Path dir) {
        Path file = dir.resolve("config.json");
        JsonNode node;
        try {
            node = JSON.readTree(Files.readString(file));
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("No config.json in " + dir
                    + ": a model directory needs Hugging Face's config.json, model.safetensors and "
                    + "tokenizer.json", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("Malformed JSON in " + file + ": " + e.getMessage(), e);
        }
        if (!(node instanceof ObjectNode obj)) {
            throw new IllegalArgumentException(file + " must hold a JSON object");
        }
        return fromJson(obj, file.toString());
    }

    /** Parses a config object; {@code source} names it in error messages. */
    public static ModelConfig fromJson(ObjectNode json, String source) {
        String type = text(json, "model_type", null);
        if (type == null) {
            throw new IllegalArgumentException(source + " has no model_type; supported: " + sortedSupported());
        }
        if (!SUPPORTED.contains(type)) {
            throw new IllegalArgumentException(source + ": model_type '" + type
                    + "' is not supported; supported model types: " + sortedSupported());
        }
        String act = text(json, "hidden_act", "silu");
        if (!act.equals("silu")) {
            throw new IllegalArgumentException(source + ": hidden_act '" + act + "' is not supported (only silu)");
        }
        int hidden = requiredInt(json, "hidden_size", source);
        int heads = requiredInt(json, "num_attention_heads", source);
        int kvHeads = json.has("num_key_value_heads") && !json.get("num_key_value_heads").isNull()
                ? json.get("num_key_value_heads").asInt() : heads;
        int headDim = json.has("head_dim") && !json.get("head_dim").isNull()
                ? json.get("head_dim").asInt() : hidden / heads;
        boolean attentionBias = json.path("attention_bias").asBoolean(false);
        boolean qkvBias = type.equals("qwen2") || ((type.equals("llama") || type.equals("qwen3")) && attentionBias);
        boolean outputBias = (type.equals("llama") || type.equals("qwen3")) && attentionBias;
        boolean mlpBias = type.equals("llama") && json.path("mlp_bias").asBoolean(false);
        String dtypeName = text(json, "torch_dtype", text(json, "dtype", "float32"));
        DType dtype;
        try {
            dtype = DType.fromTorchName(dtypeName);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
        }
        return new ModelConfig(type,
                requiredInt(json, "vocab_size", source),
                hidden,
                requiredInt(json, "intermediate_size", source),
                requiredInt(json, "num_hidden_layers", source),
                heads, kvHeads, headDim,
                json.path("rms_norm_eps").asDouble(1e-6),
                ropeTheta(json),
                ropeScaling(json, source),
                json.path("max_position_embeddings").asInt(2048),
                json.path("tie_word_embeddings").asBoolean(false),
                qkvBias, outputBias, mlpBias, type.equals("qwen3"), dtype,
                ids(json.get("eos_token_id")),
                json.path("bos_token_id").isIntegralNumber() ? json.get("bos_token_id").asLong() : -1,
                json.path("pad_token_id").isIntegralNumber() ? json.get("pad_token_id").asLong() : -1,
                json.deepCopy());
    }

    /**
     * The attention window when the model restricts attention to the last W positions (Mistral's
     * {@code sliding_window}; Qwen2/Qwen3 when {@code use_sliding_window} is true), else 0. Only
     * full attention is implemented, which equals windowed attention while sequences fit the window.
     */
    public int slidingWindow() {
        JsonNode w = raw.get("sliding_window");
        if (w == null || !w.isIntegralNumber()) {
            return 0;
        }
        boolean used = modelType.equals("mistral") || raw.path("use_sliding_window").asBoolean(false);
        return used ? w.asInt() : 0;
    }

    /** A copy whose weights are of {@code newType} (config's {@code torch_dtype} updated). */
    public ModelConfig withDtype(DType newType) {
        ObjectNode r = raw.deepCopy();
        r.put("torch_dtype", newType.torchName());
        if (r.has("dtype")) {
            r.put("dtype", newType.torchName());
        }
        return new ModelConfig(modelType, vocabSize, hiddenSize, intermediateSize, numLayers, numHeads,
                numKvHeads, headDim, rmsNormEps, ropeTheta, ropeScaling, maxPositionEmbeddings,
                tieWordEmbeddings, qkvBias, outputBias, mlpBias, qkNorm, newType, eosTokenIds,
                bosTokenId, padTokenId, r);
    }

    /** The config as pretty JSON, for {@code config.json}. */
    public String toJson() {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(raw) + "\n";
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static double ropeTheta(ObjectNode json) {
        if (json.has("rope_theta")) {
            return json.get("rope_theta").asDouble();
        }
        JsonNode params = json.get("rope_parameters");
        if (params != null && params.has("rope_theta")) {
            return params.get("rope_theta").asDouble();
        }
        return 10000.0;
    }

    private static RopeScaling ropeScaling(ObjectNode json, String source) {
        JsonNode rs = json.get("rope_scaling");
        if (rs == null || rs.isNull()) {
            rs = json.get("rope_parameters");
        }
        if (rs == null || rs.isNull()) {
            return RopeScaling.NONE;
        }
        String type = rs.has("rope_type") ? rs.get("rope_type").asText() : rs.path("type").asText("default");
        switch (type) {
            case "default":
                return RopeScaling.NONE;
            case "linear":
                return new RopeScaling("linear", rs.path("factor").asDouble(1.0), 0, 0, 0);
            case "llama3":
                return new RopeScaling("llama3", rs.path("factor").asDouble(8.0),
                        rs.path("low_freq_factor").asDouble(1.0), rs.path("high_freq_factor").asDouble(4.0),
                        rs.path("original_max_position_embeddings").asInt(8192));
            default:
                throw new IllegalArgumentException(source + ": rope_scaling type '" + type
                        + "' is not supported; supported: default, linear, llama3");
        }
    }

    private static List<Long> ids(JsonNode n) {
        List<Long> out = new ArrayList<>();
        if (n == null || n.isNull()) {
            return out;
        }
        if (n.isArray()) {
            n.forEach(e -> out.add(e.asLong()));
        } else {
            out.add(n.asLong());
        }
        return out;
    }

    private static String text(JsonNode json, String key, String fallback) {
        JsonNode n = json.get(key);
        return n == null || n.isNull() ? fallback : n.asText();
    }

    private static int requiredInt(JsonNode json, String key, String source) {
        JsonNode n = json.get(key);
        if (n == null || !n.isIntegralNumber()) {
            throw new IllegalArgumentException(source + ": missing or non-integer '" + key + "'");
        }
        return n.asInt();
    }

    private static String sortedSupported() {
        return String.join(", ", new java.util.TreeSet<>(SUPPORTED));
    }
}
