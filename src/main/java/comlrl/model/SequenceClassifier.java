package comlrl.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.model.io.ModelDirs;
import comlrl.model.io.Safetensors;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Hugging Face sequence-classification model ({@code Qwen2ForSequenceClassification},
 * {@code LlamaForSequenceClassification}, {@code Qwen3ForSequenceClassification},
 * {@code MistralForSequenceClassification}): the decoder ({@link DecoderLm} without an LM head, its
 * weights named {@code model.*}) and {@code score.weight} {@code [C, E]} (C = {@code num_labels}, no
 * bias), as transformers' {@code GenericForSequenceClassification} computes it:
 * <pre>
 *   h      = decoder(ids, attention_mask)                 // [B, S, E] final-normed hidden states
 *   i_b    = argmax_j ( j * [ids[b, j] != pad_token_id] ) // the last position that is not the pad id (0 if none)
 *   logits = h[b, i_b] @ score.weight^T                   // [B, C]
 * </pre>
 * ({@code pad_token_id} is config.json's; see {@link #poolingPositions}). Left and right padding give
 * the same logits; a pad id at the end of the text itself is skipped, as in transformers. Without a
 * {@code pad_token_id} the last position is used, and only one sequence can be scored per call.
 *
 * <p>Owns the decoder's and the score matrix's native memory: close it.
 */
public final class SequenceClassifier implements AutoCloseable {
    /** The classification head's weight, {@code [num_labels, hidden_size]}. */
    public static final String SCORE = "score.weight";
    /** transformers' {@code num_labels} when config.json names neither {@code id2label} nor {@code num_labels}. */
    public static final int DEFAULT_NUM_LABELS = 2;

    private static final Map<String, String> ARCHITECTURES = Map.of(
            "qwen2", "Qwen2ForSequenceClassification",
            "llama", "LlamaForSequenceClassification",
            "qwen3", "Qwen3ForSequenceClassification",
            "mistral", "MistralForSequenceClassification");

    /**
     * What a checkpoint directory says about itself, read without loading its weights.
     *
     * @param config its config.json
     * @param labels the label names in index order ({@code id2label}, else {@code LABEL_i}); C = size
     */
    public record Description(Path dir, ModelConfig config, List<String> labels) {
        public Description {
            labels = List.copyOf(labels);
        }

        public int numLabels() {
            return labels.size();
        }
    }

    private final DecoderLm decoder;
    private final Tensor score; // [C, E] in the model dtype, on the decoder's device
    private final List<String> labels;

    private SequenceClassifier(DecoderLm decoder, Tensor score, List<String> labels) {
        this.decoder = decoder;
        this.score = score;
        this.labels = List.copyOf(labels);
    }

    // ---------------------------------------------------------------- config

    /**
     * The labels of {@code config} as transformers reads them: {@code id2label} (keys 0..C-1) when
     * present, else {@code LABEL_0..LABEL_{C-1}} for {@code num_labels} (default 2). Fails when
     * {@code id2label}'s keys are not 0..C-1 or {@code num_labels} disagrees with it.
     */
    public static List<String> labels(ModelConfig config, String source) {
        JsonNode id2label = config.raw().get("id2label");
        JsonNode numLabels = config.raw().get("num_labels");
        if (id2label != null && !id2label.isNull()) {
            if (!id2label.isObject() || id2label.isEmpty()) {
                throw new IllegalArgumentException(source + ": id2label must be a non-empty object "
                        + "{\"0\": \"LABEL_0\", ...}, got " + id2label);
            }
            String[] names = new String[id2label.size()];
            id2label.fields().forEachRemaining(f -> {
                int index;
                try {
                    index = Integer.parseInt(f.getKey().trim());
                } catch (NumberFormatException e) {
                    index = -1;
                }
                if (index < 0 || index >= names.length || names[index] != null) {
                    throw new IllegalArgumentException(source + ": id2label's keys must be the label indices 0.."
                            + (names.length - 1) + ", each once; got " + keys(id2label));
                }
                names[index] = f.getValue().asText();
            });
            if (numLabels != null && numLabels.isIntegralNumber() && numLabels.asInt() != names.length) {
                throw new IllegalArgumentException(source + ": num_labels is " + numLabels.asInt() + " but id2label names "
                        + names.length + " labels; remove num_labels or make id2label list every label");
            }
            return List.of(names);
        }
        int count = DEFAULT_NUM_LABELS;
        if (numLabels != null && !numLabels.isNull()) {
            if (!numLabels.isIntegralNumber() || numLabels.asInt() < 1) {
                throw new IllegalArgumentException(source + ": num_labels must be a positive integer, got " + numLabels);
            }
            count = numLabels.asInt();
        }
        List<String> names = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            names.add("LABEL_" + i);
        }
        return names;
    }

    private static List<String> keys(JsonNode object) {
        List<String> keys = new ArrayList<>();
        object.fieldNames().forEachRemaining(keys::add);
        return keys;
    }

    /**
     * {@code causal}'s config made a sequence-classification config, as transformers writes one:
     * {@code architectures: [<Family>ForSequenceClassification]}, {@code id2label}/{@code label2id}
     * for {@code numLabels} labels ({@code LABEL_i}) and {@code pad_token_id} ({@code padTokenId}
     * negative for none, written as null).
     */
    public static ModelConfig classifierConfig(ModelConfig causal, int numLabels, long padTokenId) {
        if (numLabels < 1) {
            throw new IllegalArgumentException("num_labels must be at least 1, got " + numLabels);
        }
        ObjectNode raw = causal.raw().deepCopy();
        raw.putArray("architectures").add(ARCHITECTURES.get(causal.modelType()));
        ObjectNode id2label = raw.putObject("id2label");
        ObjectNode label2id = raw.putObject("label2id");
        for (int i = 0; i < numLabels; i++) {
            id2label.put(Integer.toString(i), "LABEL_" + i);
            label2id.put("LABEL_" + i, i);
        }
        raw.remove("num_labels");
        if (padTokenId >= 0) {
            raw.put("pad_token_id", padTokenId);
        } else {
            raw.putNull("pad_token_id");
        }
        return ModelConfig.fromJson(raw, "sequence-classification config");
    }

    /**
     * Reads and checks {@code dir} without loading its weights: config.json, the labels, and that
     * the checkpoint holds {@code score.weight} of shape {@code [C, hidden_size]} (from the
     * safetensors headers).
     */
    public static Description describe(Path dir) {
        ModelConfig config = ModelConfig.load(dir);
        List<String> labels = labels(config, dir.resolve("config.json").toString());
        Map<String, long[]> shapes = Safetensors.modelTensorShapes(dir);
        checkScoreShape(dir.toString(), config, labels.size(), shapes.get(SCORE));
        return new Description(dir, config, labels);
    }

    private static void checkScoreShape(String source, ModelConfig config, int numLabels, long[] shape) {
        if (shape == null) {
            throw new IllegalArgumentException(source + " is not a sequence-classification model: no " + SCORE
                    + "; its architectures say " + config.raw().path("architectures")
                    + "; use a *ForSequenceClassification checkpoint (e.g. "
                    + ARCHITECTURES.get(config.modelType()) + ")");
        }
        long[] expected = {numLabels, config.hiddenSize()};
        if (!Arrays.equals(shape, expected)) {
            throw new IllegalArgumentException(source + ": " + SCORE + " has shape " + Arrays.toString(shape)
                    + " but config.json implies " + Arrays.toString(expected) + " (" + numLabels + " labels from "
                    + (config.raw().hasNonNull("id2label") ? "id2label" : config.raw().hasNonNull("num_labels")
                            ? "num_labels" : "the default num_labels") + ", hidden_size " + config.hiddenSize()
                    + "); use the config.json that belongs to these weights");
        }
    }

    // ---------------------------------------------------------------- construction

    /**
     * Loads a sequence-classification model directory ({@code config.json} and safetensors weights:
     * {@code model.*} and {@code score.weight}); checks as {@link #describe} and {@link DecoderLm#load} do.
     *
     * @param dtype the weights' dtype, or null for the config's {@code torch_dtype}
     */
    public static SequenceClassifier load(Path dir, DType dtype, Device device) {
        Engine.checkDevice(device);
        Description d = describe(dir);
        DType type = dtype == null ? d.config().dtype() : dtype;
        try (Safetensors.LoadedWeights raw = Safetensors.loadModelWeights(dir)) {
            DecoderLm decoder = DecoderLm.loadWithoutLmHead(dir, d.config(), raw, Set.of(SCORE), type, device);
            try (Scope s = Scope.open()) {
                Tensor score = raw.tensors().get(SCORE).to(type).to(device).contiguous().cloneTensor().keep();
                return new SequenceClassifier(decoder, score, d.labels());
            } catch (RuntimeException e) {
                decoder.close();
                throw e;
            }
        }
    }

    /**
     * A model from named weights ({@code model.*} and {@code score.weight}), moved to {@code device}
     * and cast to {@code dtype}; fails naming a missing or misshapen tensor.
     */
    public static SequenceClassifier fromWeights(ModelConfig config, Map<String, Tensor> weights, DType dtype,
            Device device, String source) {
        List<String> labels = labels(config, source);
        Tensor w = weights.get(SCORE);
        checkScoreShape(source, config, labels.size(), w == null ? null : w.shape());
        Map<String, Tensor> decoderWeights = new LinkedHashMap<>(weights);
        decoderWeights.remove(SCORE);
        DecoderLm decoder = DecoderLm.fromWeights(config, decoderWeights, dtype, device, source, true, false);
        try (Scope s = Scope.open()) {
            return new SequenceClassifier(decoder, w.to(dtype).to(device).contiguous().cloneTensor().keep(), labels);
        } catch (RuntimeException e) {
            decoder.close();
            throw e;
        }
    }

    /**
     * Random weights as transformers' {@code _init_weights}: the decoder as {@link DecoderLm#random},
     * {@code score.weight ~ N(0, 0.02)} (from its own generator, seeded {@code seed + 1}).
     */
    public static SequenceClassifier random(ModelConfig config, DType dtype, Device device, long seed) {
        List<String> labels = labels(config, "random init");
        DecoderLm decoder = DecoderLm.random(config, dtype, device, seed, false);
        try (Rng rng = new Rng(seed + 1); Scope s = Scope.open()) {
            Tensor score = Tensor.randn(rng, 0.02, DType.F32, Device.CPU, labels.size(), config.hiddenSize())
                    .to(dtype).to(device).contiguous().keep();
            return new SequenceClassifier(decoder, score, labels);
        } catch (RuntimeException e) {
            decoder.close();
            throw e;
        }
    }

    // ---------------------------------------------------------------- accessors

    public ModelConfig config() {
        return decoder.config();
    }

    /** The decoder (without an LM head: its forward gives hidden states only). */
    public DecoderLm decoder() {
        return decoder;
    }

    /** {@code score.weight}, {@code [C, E]}. */
    public Tensor scoreWeight() {
        return score;
    }

    public int numLabels() {
        return labels.size();
    }

    /** Label names in index order. */
    public List<String> labels() {
        return labels;
    }

    /** config.json's {@code pad_token_id}, or -1 when it has none. */
    public long padTokenId() {
        return decoder.config().padTokenId();
    }

    public Device device() {
        return decoder.device();
    }

    /** Every parameter by Hugging Face name: the decoder's, then {@code score.weight}. */
    public Map<String, Tensor> namedParameters() {
        Map<String, Tensor> all = new LinkedHashMap<>(decoder.namedParameters());
        all.put(SCORE, score);
        return java.util.Collections.unmodifiableMap(all);
    }

    /**
     * The index of a label given as its index ({@code 0}, {@code "0"}) or its name in
     * {@code id2label}; fails naming the labels this model has.
     */
    public static int labelIndex(Object label, List<String> labels, String source) {
        int index;
        if (label instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
            index = n.intValue();
        } else if (label instanceof String s && s.trim().matches("-?\\d+")) {
            index = Integer.parseInt(s.trim());
        } else if (label instanceof String s && labels.contains(s)) {
            return labels.indexOf(s);
        } else {
            throw new IllegalArgumentException(source + ": label " + label + " is neither a label index nor one of its "
                    + "label names " + labels);
        }
        if (index < 0 || index >= labels.size()) {
            throw new IllegalArgumentException(source + ": label " + index + " is out of range: the model has "
                    + labels.size() + " label" + (labels.size() == 1 ? "" : "s") + " (num_labels " + labels.size()
                    + ": indices 0.." + (labels.size() - 1) + ", " + labels + ")");
        }
        return index;
    }

    // ---------------------------------------------------------------- forward

    /**
     * The position whose logits each row is classified by, as transformers computes it:
     * {@code (arange(S) * (ids != pad)).argmax(-1)}, i.e. the last position whose id is not
     * {@code padTokenId} (0 when every id is the pad id). With no pad id ({@code padTokenId < 0}) the
     * last position S-1, for a single row only: transformers refuses more ("Cannot handle batch sizes
     * > 1 if no padding token is defined.") and so do we.
     *
     * @param ids {@code [B, S]} row-major
     * @return B positions in {@code [0, S)}
     */
    public static long[] poolingPositions(long[] ids, int batch, int length, long padTokenId) {
        if ((long) batch * length != ids.length) {
            throw new IllegalArgumentException(ids.length + " ids do not form a [" + batch + ", " + length + "] batch");
        }
        if (padTokenId < 0) {
            if (batch != 1) {
                throw new IllegalArgumentException("Cannot handle batch sizes > 1 if no padding token is defined. "
                        + "(config.json has no pad_token_id: set one, or score one sequence at a time)");
            }
            return new long[] {length - 1};
        }
        long[] positions = new long[batch];
        for (int b = 0; b < batch; b++) {
            for (int j = length - 1; j > 0; j--) {
                if (ids[b * length + j] != padTokenId) {
                    positions[b] = j;
                    break;
                }
            }
        }
        return positions;
    }

    /**
     * The pooled logits of a batch, as {@code AutoModelForSequenceClassification(input_ids,
     * attention_mask).logits}: positions {@code arange(S)} in every row (transformers' default when no
     * position ids are given; rotary attention depends only on relative positions, so left padding
     * changes nothing), pooled by {@link #poolingPositions}.
     *
     * @param inputIds int64 {@code [B, S]}
     * @param attentionMask {@code [B, S]}, 1 for real tokens, or null when nothing is padded
     * @return {@code [B, C]} in the model dtype, in the caller's {@link Scope}
     */
    public Tensor logits(Tensor inputIds, Tensor attentionMask) {
        long b = inputIds.size(0);
        long s = inputIds.size(1);
        return logits(inputIds, Tensor.arangeOf(s, decoder.device()).view(1, s).expand(b, s), attentionMask);
    }

    /**
     * As {@link #logits(Tensor, Tensor)} with the given position ids, e.g. {@code cumsum(mask) - 1}
     * of a left-padded batch ({@code comlrl.generation.PaddedBatch}), which gives every row the
     * positions it has alone.
     *
     * @param positionIds int64 {@code [B, S]}
     */
    public Tensor logits(Tensor inputIds, Tensor positionIds, Tensor attentionMask) {
        int b = (int) inputIds.size(0);
        int s = (int) inputIds.size(1);
        long[] pooled = poolingPositions(inputIds.toLongArray(), b, s, padTokenId());
        Device device = decoder.device();
        Tensor hidden = decoder.forward(inputIds.to(device), positionIds.to(device),
                attentionMask == null ? null : attentionMask.to(device), null, s).hidden(); // [B, S, E]
        long[] rows = new long[b];
        for (int i = 0; i < b; i++) {
            rows[i] = (long) i * s + pooled[i];
        }
        Tensor last = hidden.reshape((long) b * s, -1).indexSelect(0, Tensor.ofLongs(rows, device)); // [B, E]
        return last.linear(score, null); // [B, C]
    }

    // ---------------------------------------------------------------- saving

    /**
     * Saves {@code config.json} and the safetensors weights ({@code model.*}, {@code score.weight};
     * no LM head) as the directory {@code dir}, atomically ({@link ModelDirs#replace}).
     */
    public void save(Path dir, long maxShardBytes) {
        ModelDirs.replace(dir, fresh -> writeFiles(fresh, maxShardBytes));
    }

    /** Writes {@code config.json} and the weights into {@code dir}, file by file (see {@link #save}). */
    public void writeFiles(Path dir, long maxShardBytes) {
        Safetensors.writeSmallFile(dir.resolve("config.json"), config().toJson());
        try (Scope s = Scope.open()) {
            Map<String, Tensor> detached = new LinkedHashMap<>();
            namedParameters().forEach((k, v) -> detached.put(k, v.detach()));
            Safetensors.saveModelDir(detached, dir, maxShardBytes);
        }
    }

    /**
     * Overwrites every parameter with the tensor of the same name in the model directory {@code dir}
     * (a checkpoint written by {@link #writeFiles}); fails naming a missing or misshapen tensor, or
     * one stored in an integer dtype, before anything is overwritten.
     */
    public void loadParameters(Path dir) {
        try (Safetensors.LoadedWeights saved = Safetensors.loadModelWeights(dir); Scope s = Scope.open();
                comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
            Map<String, Tensor> params = namedParameters();
            for (Map.Entry<String, Tensor> e : params.entrySet()) {
                Tensor src = saved.tensors().get(e.getKey());
                if (src == null || !Arrays.equals(src.shape(), e.getValue().shape())) {
                    throw new IllegalArgumentException(dir + ": checkpoint tensor '" + e.getKey() + "' is "
                            + (src == null ? "missing" : "of shape " + Arrays.toString(src.shape()))
                            + "; expected " + Arrays.toString(e.getValue().shape()));
                }
                DecoderLm.requireFloatingPoint(saved.file(e.getKey()), e.getKey(), src.dtype(), e.getValue().dtype());
            }
            params.forEach((k, v) -> v.copy_(saved.tensors().get(k)));
        }
    }

    @Override
    public void close() {
        decoder.close();
        score.close();
    }

    @Override
    public String toString() {
        return "SequenceClassifier[" + ARCHITECTURES.get(config().modelType()) + ", " + numLabels() + " labels]";
    }
}
