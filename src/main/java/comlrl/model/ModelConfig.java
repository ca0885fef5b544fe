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
 * @param bosTokenId beginning-of-sequence id or -1 (none; written as {@code null})
 * @param padTokenId padding id or -1 (none; written as {@code null})
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

    /** Tensors or models with more elements than this (about 10^12) are refused as not real. */
    public static final long MAX_ELEMENTS = 1L << 40;

    /**
     * Checks every size before anything is allocated: all sizes positive, H a multiple of K,
     * D even (rotary halves), and no tensor or model above {@link #MAX_ELEMENTS} elements.
     */
    public ModelConfig {
        positive("vocab_size", vocabSize);
        positive("hidden_size", hiddenSize);
        positive("intermediate_size", intermediateSize);
        positive("num_hidden_layers", numLayers);
        positive("num_attention_heads", numHeads);
        positive("num_key_value_heads", numKvHeads);
        positive("head_dim", headDim);
        positive("max_position_embeddings", maxPositionEmbeddings);
        if (numHeads % numKvHeads != 0) {
            throw new IllegalArgumentException("num_attention_heads (" + numHeads
                    + ") must be a multiple of num_key_value_heads (" + numKvHeads + ")");
        }
        if (headDim % 2 != 0) {
            throw new IllegalArgumentException("head_dim " + headDim + " must be even (rotary embeddings rotate "
                    + "halves of each head)");
        }
        if (!(rmsNormEps > 0) || !Double.isFinite(rmsNormEps)) {
            throw new IllegalArgumentException("rms_norm_eps must be a positive number, got " + rmsNormEps);
        }
        if (!(ropeTheta > 0) || !Double.isFinite(ropeTheta)) {
            throw new IllegalArgumentException("rope_theta must be a positive number, got " + ropeTheta);
        }
        double perLayer = (double) numHeads * headDim * hiddenSize * 2 + (double) numKvHeads * headDim * hiddenSize * 2
                + 3.0 * intermediateSize * hiddenSize;
        double total = (double) vocabSize * hiddenSize * (tieWordEmbeddings ? 1 : 2) + perLayer * numLayers;
        double largest = Math.max((double) vocabSize * hiddenSize,
                Math.max((double) intermediateSize * hiddenSize, (double) numHeads * headDim * hiddenSize));
        if (largest > MAX_ELEMENTS || total > MAX_ELEMENTS) {
            throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, "these sizes describe a model of "
                    + "%.3g parameters (largest tensor %.3g elements), beyond any real model (limit %d): check "
                    + "vocab_size (%d), hidden_size (%d), intermediate_size (%d), num_hidden_layers (%d), "
                    + "num_attention_heads (%d) and head_dim (%d)", total, largest, MAX_ELEMENTS, vocabSize, hiddenSize,
                    intermediateSize, numLayers, numHeads, headDim));
        }
        eosTokenIds = List.copyOf(eosTokenIds);
    }

    private static void positive(String key, long value) {
        if (value < 1) {
            throw new IllegalArgumentException(key + " must be at least 1, got " + value);
        }
    }

    /**
     * Number of parameters {@link DecoderLm} allocates for this config (the tied head counted
     * once): {@code V·E·(tied ? 1 : 2) + E + L·(2·H·D·E + 2·K·D·E + 3·I·E + 2·E + biases + norms)}.
     */
    public long parameterCount() {
        long e = hiddenSize;
        long q = (long) numHeads * headDim;
        long kv = (long) numKvHeads * headDim;
        long perLayer = 2 * q * e + 2 * kv * e + 3L * intermediateSize * e + 2 * e;
        if (qkvBias) {
            perLayer += q + 2 * kv;
        }
        if (outputBias) {
            perLayer += e;
        }
        if (mlpBias) {
            perLayer += 2L * intermediateSize + e;
        }
        if (qkNorm) {
            perLayer += 2L * headDim;
        }
        return (long) vocabSize * e * (tieWordEmbeddings ? 1 : 2) + e + perLayer * numLayers;
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
        if (heads < 1) {
            throw new IllegalArgumentException(source + ": num_attention_heads must be at least 1, got " + heads);
        }
        int kvHeads = optionalInt(json, "num_key_value_heads", heads, source);
        boolean headDimGiven = json.has("head_dim") && !json.get("head_dim").isNull();
        if (!headDimGiven && hidden % heads != 0) {
            throw new IllegalArgumentException(source + ": hidden_size (" + hidden + ") is not a multiple of "
                    + "num_attention_heads (" + heads + "); fix the sizes or give head_dim explicitly");
        }
        int headDim = headDimGiven ? optionalInt(json, "head_dim", 0, source) : hidden / heads;
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
        ModelConfig config;
        try {
            config = new ModelConfig(type,
                    requiredInt(json, "vocab_size", source),
                    hidden,
                    requiredInt(json, "intermediate_size", source),
                    requiredInt(json, "num_hidden_layers", source),
                    heads, kvHeads, headDim,
                    json.path("rms_norm_eps").asDouble(1e-6),
                    ropeTheta(json),
                    ropeScaling(json, source),
                    optionalInt(json, "max_position_embeddings", 2048, source),
                    json.path("tie_word_embeddings").asBoolean(false),
                    qkvBias, outputBias, mlpBias, type.equals("qwen3"), dtype,
                    ids(json.get("eos_token_id")),
                    json.path("bos_token_id").isIntegralNumber() ? json.get("bos_token_id").asLong() : -1,
                    json.path("pad_token_id").isIntegralNumber() ? json.get("pad_token_id").asLong() : -1,
                    json.deepCopy());
        } catch (IllegalArgumentException e) {
            if (e.getMessage() != null && e.getMessage().startsWith(source)) {
                throw e;
            }
            throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
        }
        checkSpecialTokenIds(json, source, config.vocabSize());
        return config;
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

    /**
     * The config as pretty JSON, for {@code config.json}: the raw fields as loaded, except that
     * negative special-token ids (our "none") are written as {@code null}, as transformers expects,
     * and a Qwen2 config carries no {@code attention_bias} (Qwen2's q/k/v projections always have
     * biases and its o_proj never has one, whatever that field says).
     */
    public String toJson() {
        ObjectNode out = raw.deepCopy();
        for (String key : List.of("bos_token_id", "pad_token_id", "eos_token_id")) {
            JsonNode id = out.get(key);
            if (id != null && id.isIntegralNumber() && id.asLong() < 0) {
                out.putNull(key);
            } else if (id != null && id.isArray()) {
                var kept = out.putArray(key);
                id.forEach(x -> {
                    if (!(x.isIntegralNumber() && x.asLong() < 0)) {
                        kept.add(x);
                    }
                });
            }
        }
        if (modelType.equals("qwen2")) {
            out.remove("attention_bias");
        }
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out) + "\n";
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

    /** The special-token keys of config.json and generation_config.json that {@link #checkSpecialTokenIds} checks. */
    public static final List<String> SPECIAL_TOKEN_KEYS = List.of("bos_token_id", "eos_token_id", "pad_token_id");

    /**
     * Fails, naming {@code source}, the key, the id and the vocabulary size, when one of
     * {@link #SPECIAL_TOKEN_KEYS} in {@code json} (one id or a list) is not an integer in
     * {@code [0, vocabSize)}: such an id would index past the embedding, or never match a sampled
     * token. {@code null} (or absent) means none, and so does {@code -1}, which older configs (and
     * earlier versions of this library) wrote for none.
     */
    public static void checkSpecialTokenIds(JsonNode json, String source, int vocabSize) {
        for (String key : SPECIAL_TOKEN_KEYS) {
            JsonNode v = json.get(key);
            if (v == null || v.isNull()) {
                continue;
            }
            for (JsonNode id : v.isArray() ? v : List.of(v)) {
                if (id.isIntegralNumber() && id.canConvertToLong() && id.asLong() == -1) {
                    continue; // none, as older configs wrote it
                }
                if (!id.isIntegralNumber() || !id.canConvertToLong() || id.asLong() < 0 || id.asLong() >= vocabSize) {
                    throw new IllegalArgumentException(source + ": " + key + " " + v + " is not a token id of this "
                            + "model: ids run from 0 to " + (vocabSize - 1) + " (vocab_size " + vocabSize + "); use the "
                            + "id of the token in the model's tokenizer, or null for none");
                }
            }
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
        return intValue(n, key, source);
    }

    private static int optionalInt(JsonNode json, String key, int fallback, String source) {
        JsonNode n = json.get(key);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.isIntegralNumber()) {
            throw new IllegalArgumentException(source + ": '" + key + "' must be an integer, got " + n);
        }
        return intValue(n, key, source);
    }

    private static int intValue(JsonNode n, String key, String source) {
        if (!n.canConvertToInt()) {
            throw new IllegalArgumentException(source + ": '" + key + "' = " + n + " is far beyond any real model "
                    + "(at most " + Integer.MAX_VALUE + ")");
        }
        return n.asInt();
    }

    private static String sortedSupported() {
        return String.join(", ", new java.util.TreeSet<>(SUPPORTED));
    }
}
