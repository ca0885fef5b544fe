package comlrl.model;

import comlrl.model.io.ModelDirs;
import comlrl.model.io.Safetensors;
import comlrl.tensor.DType;
import comlrl.tensor.Engine;
import comlrl.tensor.GradMode;
import comlrl.tensor.PackedWeight;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A decoder-only transformer language model (Qwen2/2.5, Llama 2/3, Qwen3, Mistral) over libtorch
 * ops, following Hugging Face {@code transformers}' modeling code operation by operation.
 *
 * <p>The model is immutable apart from its parameters (which optimizers update in place); all
 * per-sequence state lives in a {@link KvCache}, so one model serves many rollouts. Owns its
 * parameters: close it.
 */
public final class DecoderLm implements AutoCloseable {

    // ---------------------------------------------------------------- Hugging Face weight names
    static final String EMBED = "model.embed_tokens.weight";
    static final String FINAL_NORM = "model.norm.weight";
    static final String LM_HEAD = "lm_head.weight";

    static String layer(int i, String rest) {
        return "model.layers." + i + "." + rest;
    }

    /** Per-layer tensors; names relative to {@code model.layers.i.}. Biases null when absent. */
    private record Layer(Tensor inputNorm, Tensor qWeight, Tensor qBias, Tensor kWeight, Tensor kBias,
            Tensor vWeight, Tensor vBias, Tensor oWeight, Tensor oBias, Tensor qNorm, Tensor kNorm,
            Tensor postNorm, Tensor gateWeight, Tensor gateBias, Tensor upWeight, Tensor upBias,
            Tensor downWeight, Tensor downBias) {
    }

    /** What one forward pass returns; tensors belong to the caller's {@link Scope}. */
    public record Output(Tensor logits, Tensor hidden) {
    }

    private final ModelConfig config;
    private final Device device;
    private final Map<String, Tensor> parameters; // HF name -> parameter, in HF registration order
    private final Layer[] layers;
    private final Tensor embed;
    private final Tensor finalNorm;
    private final Tensor lmHead;
    private final Tensor inverseFrequencies; // [D/2] float32
    /** An agent's LoRA adapter over shared base weights ({@link #withAdapter}), or null for the base itself. */
    private final LoraAdapter adapter;
    /** The host copies of the teams' adapters, kept between generations ({@link LoraBatch}). */
    private final IntArrays hostArrays = new IntArrays();
    /** Several agents' adapters over rows grouped by agent ({@link #withAdapters}), owned by this view; or null. */
    private final LoraBatch batch;
    /** The model whose weights a view shares (its decode weights too); null for a model itself. */
    private final DecoderLm root;
    /** Whether this is a view sharing another model's weights (it closes only what is its own). */
    private final boolean view;
    private Tensor cosTable;                 // [N, D] cos(pos * inv_freq) for positions 0..N-1, model dtype
    private Tensor sinTable;                 // [N, D] cat(-sin, sin)(pos * inv_freq): signed for rotate

    /**
     * This model with {@code adapter} on its projections: a view that shares every base weight
     * (nothing is copied) and adds {@code s·B·A·x} to each adapted projection; its
     * {@link #parameters()} are the adapter's alone, so an optimizer over them leaves the base
     * frozen. Closing the view frees only its own caches; the base and the adapter stay open.
     */
    public DecoderLm withAdapter(LoraAdapter adapter) {
        if (view) {
            throw new IllegalArgumentException("this model is already an adapter view; put the adapter on the base");
        }
        return new DecoderLm(this, java.util.Objects.requireNonNull(adapter, "adapter"), null);
    }

    /**
     * This model with several agents' adapters at once, for one batched forward (a team's rollouts):
     * the rows of each call are grouped by agent, {@code counts[g]} shares of them for
     * {@code adapters.get(g)} ({@link LoraBatch}); the base's products run once for all rows. An
     * inference view: it holds a snapshot of the adapters (make one per generation) and no gradient
     * flows through it. Closing it frees the snapshot; the base and the adapters stay open.
     */
    public DecoderLm withAdapters(List<LoraAdapter> adapters, int[] counts) {
        if (view) {
            throw new IllegalArgumentException("this model is already an adapter view; put the adapters on the base");
        }
        return new DecoderLm(this, null, new LoraBatch(adapters, counts, hostArrays));
    }

    /** The row groups' adapters of a {@link #withAdapters} view, or null. */
    LoraBatch adapterBatch() {
        return batch;
    }

    /** The model whose weights this view shares (the frozen base of a LoRA agent), or this model itself. */
    public DecoderLm base() {
        return root == null ? this : root;
    }

    /**
     * For an adapter view: a standalone model with the adapter folded in ({@code W' = W + s·B·A} on
     * every adapted projection), which saves as a full Hugging Face model; the base and the
     * adapter are unchanged.
     */
    public DecoderLm mergeAdapter() {
        if (adapter == null) {
            throw new IllegalStateException("this model has no adapter to merge (see withAdapter)");
        }
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Map<String, Tensor> merged = new java.util.LinkedHashMap<>();
            parameters.forEach((name, w) -> merged.put(name, w.detach()));
            for (int layer = 0; layer < config.numLayers(); layer++) {
                for (String p : adapter.config().targetModules()) {
                    String name = layer(layer, (List.of("q_proj", "k_proj", "v_proj", "o_proj").contains(p)
                            ? "self_attn." : "mlp.") + p + ".weight");
                    merged.put(name, adapter.merged(merged.get(name), layer, p));
                }
            }
            return fromWeights(config, merged, dtype(), device, "merged adapter", true, lmHead != null);
        }
    }

    /** The adapter of a {@link #withAdapter} view, or null. */
    public LoraAdapter adapter() {
        return adapter;
    }

    private DecoderLm(DecoderLm base, LoraAdapter adapter, LoraBatch batch) {
        this.root = base;
        this.batch = batch;
        this.config = base.config;
        this.device = base.device;
        this.parameters = base.parameters;
        this.layers = base.layers;
        this.embed = base.embed;
        this.finalNorm = base.finalNorm;
        this.lmHead = base.lmHead;
        this.inverseFrequencies = base.inverseFrequencies;
        this.adapter = adapter;
        this.view = true;
    }

    private DecoderLm(ModelConfig config, Device device, Map<String, Tensor> parameters, boolean withLmHead) {
        this.adapter = null;
        this.batch = null;
        this.root = null;
        this.view = false;
        this.config = config;
        this.device = device;
        this.parameters = parameters;
        this.layers = new Layer[config.numLayers()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = new Layer(
                    parameters.get(layer(i, "input_layernorm.weight")),
                    parameters.get(layer(i, "self_attn.q_proj.weight")),
                    parameters.get(layer(i, "self_attn.q_proj.bias")),
                    parameters.get(layer(i, "self_attn.k_proj.weight")),
                    parameters.get(layer(i, "self_attn.k_proj.bias")),
                    parameters.get(layer(i, "self_attn.v_proj.weight")),
                    parameters.get(layer(i, "self_attn.v_proj.bias")),
                    parameters.get(layer(i, "self_attn.o_proj.weight")),
                    parameters.get(layer(i, "self_attn.o_proj.bias")),
                    parameters.get(layer(i, "self_attn.q_norm.weight")),
                    parameters.get(layer(i, "self_attn.k_norm.weight")),
                    parameters.get(layer(i, "post_attention_layernorm.weight")),
                    parameters.get(layer(i, "mlp.gate_proj.weight")),
                    parameters.get(layer(i, "mlp.gate_proj.bias")),
                    parameters.get(layer(i, "mlp.up_proj.weight")),
                    parameters.get(layer(i, "mlp.up_proj.bias")),
                    parameters.get(layer(i, "mlp.down_proj.weight")),
                    parameters.get(layer(i, "mlp.down_proj.bias")));
        }
        this.embed = parameters.get(EMBED);
        this.finalNorm = parameters.get(FINAL_NORM);
        this.lmHead = !withLmHead ? null : config.tieWordEmbeddings() ? embed : parameters.get(LM_HEAD);
        this.inverseFrequencies = Tensor.ofFloats(
                config.ropeScaling().inverseFrequencies(config.headDim(), config.ropeTheta()), device).keep();
    }

    /**
     * Every parameter name and shape this config needs, in Hugging Face's registration order
     * ({@code lm_head.weight} only when embeddings are untied).
     */
    public static Map<String, long[]> expectedShapes(ModelConfig c) {
        return expectedShapes(c, true);
    }

    /**
     * As {@link #expectedShapes(ModelConfig)}; without {@code lmHead} the decoder alone (the
     * {@code model.*} tensors), as a sequence-classification checkpoint holds it.
     */
    static Map<String, long[]> expectedShapes(ModelConfig c, boolean lmHead) {
        Map<String, long[]> s = new LinkedHashMap<>();
        long e = c.hiddenSize();
        long q = (long) c.numHeads() * c.headDim();
        long kv = (long) c.numKvHeads() * c.headDim();
        long inter = c.intermediateSize();
        s.put(EMBED, new long[] {c.vocabSize(), e});
        for (int i = 0; i < c.numLayers(); i++) {
            s.put(layer(i, "self_attn.q_proj.weight"), new long[] {q, e});
            if (c.qkvBias()) {
                s.put(layer(i, "self_attn.q_proj.bias"), new long[] {q});
            }
            s.put(layer(i, "self_attn.k_proj.weight"), new long[] {kv, e});
            if (c.qkvBias()) {
                s.put(layer(i, "self_attn.k_proj.bias"), new long[] {kv});
            }
            s.put(layer(i, "self_attn.v_proj.weight"), new long[] {kv, e});
            if (c.qkvBias()) {
                s.put(layer(i, "self_attn.v_proj.bias"), new long[] {kv});
            }
            s.put(layer(i, "self_attn.o_proj.weight"), new long[] {e, q});
            if (c.outputBias()) {
                s.put(layer(i, "self_attn.o_proj.bias"), new long[] {e});
            }
            if (c.qkNorm()) {
                s.put(layer(i, "self_attn.q_norm.weight"), new long[] {c.headDim()});
                s.put(layer(i, "self_attn.k_norm.weight"), new long[] {c.headDim()});
            }
            s.put(layer(i, "mlp.gate_proj.weight"), new long[] {inter, e});
            if (c.mlpBias()) {
                s.put(layer(i, "mlp.gate_proj.bias"), new long[] {inter});
            }
            s.put(layer(i, "mlp.up_proj.weight"), new long[] {inter, e});
            if (c.mlpBias()) {
                s.put(layer(i, "mlp.up_proj.bias"), new long[] {inter});
            }
            s.put(layer(i, "mlp.down_proj.weight"), new long[] {e, inter});
            if (c.mlpBias()) {
                s.put(layer(i, "mlp.down_proj.bias"), new long[] {e});
            }
            s.put(layer(i, "input_layernorm.weight"), new long[] {e});
            s.put(layer(i, "post_attention_layernorm.weight"), new long[] {e});
        }
        s.put(FINAL_NORM, new long[] {e});
        if (lmHead && !c.tieWordEmbeddings()) {
            s.put(LM_HEAD, new long[] {c.vocabSize(), e});
        }
        return s;
    }

    /**
     * Builds a model from named weights (moved to {@code device}, cast to {@code dtype}); fails
     * naming any missing tensor or wrong shape. {@code source} names the origin in messages.
     */
    public static DecoderLm fromWeights(ModelConfig config, Map<String, Tensor> weights, DType dtype,
            Device device, String source) {
        return fromWeights(config, weights, dtype, device, source, true, true);
    }

    /**
     * As {@link #fromWeights(ModelConfig, Map, DType, Device, String)}; with {@code copy} false a
     * weight already of {@code dtype} on {@code device} becomes the parameter itself (sharing its
     * storage), for callers that drop the weights right after; without {@code lmHead} the decoder
     * alone (no {@code lm_head.weight}; its forward gives hidden states only).
     */
    static DecoderLm fromWeights(ModelConfig config, Map<String, Tensor> weights, DType dtype,
            Device device, String source, boolean copy, boolean lmHead) {
        Map<String, long[]> expected = expectedShapes(config, lmHead);
        Map<String, Tensor> params = new LinkedHashMap<>();
        try (Scope s = Scope.open()) {
            for (Map.Entry<String, long[]> e : expected.entrySet()) {
                Tensor w = weights.get(e.getKey());
                if (w == null) {
                    throw new IllegalArgumentException(source + ": missing tensor '" + e.getKey()
                            + "' with shape " + Arrays.toString(e.getValue()) + " (model_type "
                            + config.modelType() + ")");
                }
                if (!Arrays.equals(w.shape(), e.getValue())) {
                    throw new IllegalArgumentException(source + ": tensor '" + e.getKey() + "' has shape "
                            + Arrays.toString(w.shape()) + " but config.json implies " + Arrays.toString(e.getValue()));
                }
                Tensor p = w.to(dtype).to(device);
                if (p == w && copy) {
                    p = w.cloneTensor();
                }
                params.put(e.getKey(), p.contiguous().detach().requiresGrad(true).keep());
            }
        }
        return new DecoderLm(config.withDtype(dtype), device, params, lmHead);
    }

    /**
     * Loads {@code model.safetensors} (or its shards) from a model directory. Fails, naming the
     * tensor and its file, when a required tensor is missing or misshapen, when the checkpoint holds
     * tensors this config does not use (a config that does not describe the checkpoint), when a
     * weight holds NaN or infinity, or when the model cannot fit in this machine's memory.
     */
    public static DecoderLm load(Path dir, ModelConfig config, DType dtype, Device device) {
        requireMemory(config, dtype, device, dir.toString());
        try (Safetensors.LoadedWeights raw = Safetensors.loadModelWeights(dir)) {
            checkWeights(config, raw, dir, true, java.util.Set.of(), dtype == null ? config.dtype() : dtype);
            return fromWeights(config, raw.tensors(), dtype, device, dir.toString(), false, true);
        }
    }

    /**
     * The decoder without an LM head (the {@code model.*} tensors) from weights already read from
     * {@code dir}, for models whose head is another tensor ({@code headTensors}, e.g. a
     * sequence-classification {@code score.weight}), which the caller takes from {@code raw} itself.
     * Checks as {@link #load} does; {@code raw} stays the caller's to close. Its {@code forward}
     * computes hidden states only ({@code logitsFrom} must be S).
     */
    static DecoderLm loadWithoutLmHead(Path dir, ModelConfig config, Safetensors.LoadedWeights raw,
            java.util.Set<String> headTensors, DType dtype, Device device) {
        requireMemory(config, dtype, device, dir.toString());
        checkWeights(config, raw, dir, false, headTensors, dtype);
        return fromWeights(config, raw.tensors(), dtype, device, dir.toString(), false, false);
    }

    /**
     * Tensor names a checkpoint may hold without the config using them: the LM head of a tied
     * model (transformers ties it to the embedding) and rotary buffers older transformers saved.
     */
    private static boolean ignorable(ModelConfig config, String name) {
        return (config.tieWordEmbeddings() && name.equals(LM_HEAD)) || name.endsWith(".rotary_emb.inv_freq");
    }

    /**
     * Unused tensors, integer dtypes and non-finite values, each named with its file;
     * {@code headTensors} are used by the caller (checked too). Floating-point weights of any
     * dtype are converted to {@code dtype}, the model's (float16 to float32, or float32 to bfloat16
     * when the user asks for it); an integer tensor in place of a weight is refused.
     */
    private static void checkWeights(ModelConfig config, Safetensors.LoadedWeights raw, Path dir, boolean lmHead,
            java.util.Set<String> headTensors, DType dtype) {
        Map<String, long[]> expected = new LinkedHashMap<>(expectedShapes(config, lmHead));
        headTensors.forEach(name -> expected.put(name, null));
        List<String> unused = new ArrayList<>();
        for (String name : raw.tensors().keySet()) {
            if (!expected.containsKey(name) && !ignorable(config, name)) {
                unused.add(name);
            }
        }
        if (!unused.isEmpty()) {
            throw new IllegalArgumentException(unusedMessage(config, unused, raw, dir));
        }
        for (String name : expected.keySet()) {
            Tensor t = raw.tensors().get(name);
            if (t != null) {
                requireFloatingPoint(raw.file(name), name, t.dtype(), dtype);
            }
        }
        try (Scope s = Scope.open()) {
            for (String name : expected.keySet()) {
                Tensor t = raw.tensors().get(name);
                if (t != null && !t.allFinite()) {
                    throw new IllegalArgumentException(raw.file(name) + ": tensor '" + name + "' holds NaN or infinite "
                            + "values, so every output would be NaN: the checkpoint is corrupt or training diverged; "
                            + "use an earlier checkpoint or re-download the model");
                }
            }
        }
    }

    /**
     * Fails, naming the file, the tensor and both dtypes, when a weight is stored in an integer
     * dtype: its bytes are not the weight's values whatever the conversion.
     */
    static void requireFloatingPoint(Path file, String name, DType stored, DType model) {
        if (!stored.isFloatingPoint()) {
            throw new IllegalArgumentException(file + ": tensor '" + name + "' is stored as "
                    + stored.safetensorsName() + ", an integer type, but it is a weight of the model ("
                    + model.safetensorsName() + " here; floating-point weights of any dtype are converted): the "
                    + "checkpoint is damaged or was written wrongly; re-download or re-save it");
        }
    }

    private static String unusedMessage(ModelConfig config, List<String> unused, Safetensors.LoadedWeights raw,
            Path dir) {
        java.util.Set<Path> files = new java.util.LinkedHashSet<>();
        unused.forEach(n -> files.add(raw.file(n)));
        String where = files.size() == 1 ? files.iterator().next().getFileName().toString()
                : "the shards of " + dir;
        StringBuilder m = new StringBuilder(dir + ": " + where + " holds " + unused.size() + " tensor"
                + (unused.size() == 1 ? "" : "s") + " this config does not use, e.g. "
                + String.join(", ", unused.subList(0, Math.min(3, unused.size()))) + " — ");
        int maxLayer = -1;
        boolean biases = false;
        boolean norms = false;
        for (String n : unused) {
            if (n.startsWith("model.layers.")) {
                String rest = n.substring("model.layers.".length());
                int dot = rest.indexOf('.');
                try {
                    int layer = Integer.parseInt(dot < 0 ? rest : rest.substring(0, dot));
                    if (layer >= config.numLayers()) {
                        maxLayer = Math.max(maxLayer, layer);
                        continue;
                    }
                } catch (NumberFormatException e) {
                    // not a numbered layer
                }
            }
            biases |= n.endsWith(".bias");
            norms |= n.endsWith("q_norm.weight") || n.endsWith("k_norm.weight");
        }
        if (maxLayer >= 0) {
            m.append("config.json's num_hidden_layers says ").append(config.numLayers())
                    .append(" but the checkpoint has layers up to ").append(maxLayer);
        } else if (biases) {
            m.append("config.json (model_type ").append(config.modelType()).append(", attention_bias/mlp_bias) "
                    + "declares no such biases");
        } else if (norms) {
            m.append("q/k norms belong to Qwen3 but config.json's model_type is ").append(config.modelType());
        } else if (unused.contains(SequenceClassifier.SCORE)) {
            m.append("it is a sequence-classification model (").append(SequenceClassifier.SCORE)
                    .append("; architectures ").append(config.raw().path("architectures"))
                    .append(") with no LM head to generate with; load it as a reward model (reward: {type: "
                            + "reward_model, model: ").append(dir).append("}) instead");
            return m.toString();
        } else if (unused.contains(LM_HEAD)) {
            m.append("config.json's tie_word_embeddings is ").append(config.tieWordEmbeddings());
        } else {
            m.append("config.json (model_type ").append(config.modelType()).append(") does not describe this "
                    + "checkpoint");
        }
        return m.append("; use the config.json that belongs to these weights").toString();
    }

    /** Fails before allocating when the parameters alone exceed this machine's physical memory. */
    private static void requireMemory(ModelConfig config, DType dtype, Device device, String source) {
        if (device.isCuda()) {
            return; // device memory is reported by the allocator itself
        }
        long bytes = config.parameterCount() * dtype.byteSize();
        long physical = physicalMemory();
        if (physical > 0 && bytes > physical) {
            throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, "%s: this model has %,d "
                    + "parameters, %.1f GB in %s, more than this machine's %.1f GB of memory; use a smaller model, "
                    + "a 16-bit dtype or a GPU", source, config.parameterCount(), bytes / 1e9, dtype.torchName(),
                    physical / 1e9));
        }
    }

    private static long physicalMemory() {
        try {
            var os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
                return sun.getTotalMemorySize();
            }
        } catch (RuntimeException | LinkageError e) {
            // unknown: no check
        }
        return -1;
    }

    /**
     * A model with random weights initialised as Hugging Face's {@code _init_weights}: linear and
     * embedding weights ~ N(0, 0.02), biases 0, norm weights 1.
     */
    public static DecoderLm random(ModelConfig config, DType dtype, Device device, long seed) {
        return random(config, dtype, device, seed, true);
    }

    /** As {@link #random(ModelConfig, DType, Device, long)}; without {@code lmHead} the decoder alone. */
    static DecoderLm random(ModelConfig config, DType dtype, Device device, long seed, boolean lmHead) {
        requireMemory(config, dtype, device, "random init");
        Map<String, Tensor> weights = new LinkedHashMap<>();
        try (Rng rng = new Rng(seed)) {
            for (Map.Entry<String, long[]> e : expectedShapes(config, lmHead).entrySet()) {
                String name = e.getKey();
                Tensor t;
                if (name.endsWith("norm.weight")) {
                    t = Tensor.fullOf(1.0, DType.F32, Device.CPU, e.getValue());
                } else if (name.endsWith(".bias")) {
                    t = Tensor.zerosOf(DType.F32, Device.CPU, e.getValue());
                } else {
                    t = Tensor.randn(rng, 0.02, DType.F32, Device.CPU, e.getValue());
                }
                if (dtype != DType.F32) { // round each weight as it is drawn: no float32 copy of the whole model
                    Tensor rounded = t.to(dtype);
                    t.close();
                    t = rounded;
                }
                weights.put(name, t);
            }
            // the drawn weights become the parameters (no second copy): a 3B model fits twice in no 24 GiB
            return fromWeights(config, weights, dtype, device, "random init", false, lmHead);
        } finally {
            weights.values().forEach(Tensor::close);
        }
    }

    public ModelConfig config() {
        return config;
    }

    public Device device() {
        return device;
    }

    public DType dtype() {
        return config.dtype();
    }

    /**
     * Trainable parameters by Hugging Face name, in registration order (tied head not repeated); of
     * an adapter view, the adapter's by PEFT's names ({@link LoraAdapter#peftStateDict()}).
     */
    public Map<String, Tensor> namedParameters() {
        return adapter != null ? adapter.peftStateDict() : batch != null ? Map.of()
                : java.util.Collections.unmodifiableMap(parameters);
    }

    /** What trains: every weight, or for an adapter view the adapter's A and B only. */
    public List<Tensor> parameters() {
        return adapter != null ? adapter.parameters() : batch != null ? new ArrayList<>()
                : new ArrayList<>(parameters.values());
    }

    /**
     * Saves {@code config.json} and the safetensors weights (tied head omitted, as HF does) as the
     * directory {@code dir}, atomically ({@link ModelDirs#replace}): a failure such as a full disk
     * leaves an existing {@code dir} as it was.
     *
     * @throws java.io.UncheckedIOException naming the directory and the cause when writing fails
     */
    public void save(Path dir, long maxShardBytes) {
        if (view) {
            throw new UnsupportedOperationException("a LoRA adapter view is saved as its adapter, not as a full model");
        }
        ModelDirs.replace(dir, fresh -> writeFiles(fresh, maxShardBytes));
    }

    /**
     * Writes {@code config.json} and the weights into {@code dir}, file by file, without the
     * directory-level atomicity of {@link #save}; for assembling a larger directory (with a
     * tokenizer) inside {@link ModelDirs#replace}.
     */
    public void writeFiles(Path dir, long maxShardBytes) {
        Safetensors.writeSmallFile(dir.resolve("config.json"), config.toJson());
        try (Scope s = Scope.open()) {
            Map<String, Tensor> detached = new LinkedHashMap<>();
            parameters.forEach((k, v) -> detached.put(k, v.detach()));
            Safetensors.saveModelDir(detached, dir, maxShardBytes);
        }
    }

    /**
     * Overwrites this model's parameters with the weights saved in {@code dir} (same config),
     * bit for bit when the dtypes agree; used to resume from a checkpoint.
     */
    public void loadParameters(Path dir) {
        try (Safetensors.LoadedWeights saved = Safetensors.loadModelWeights(dir);
                Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            checkWeights(config, saved, dir, lmHead != null, java.util.Set.of(), dtype());
            for (Map.Entry<String, Tensor> e : parameters.entrySet()) {
                Tensor src = saved.tensors().get(e.getKey());
                if (src == null || !Arrays.equals(src.shape(), e.getValue().shape())) {
                    throw new IllegalArgumentException(dir + ": checkpoint tensor '" + e.getKey() + "' is "
                            + (src == null ? "missing" : "of shape " + Arrays.toString(src.shape()))
                            + "; expected " + Arrays.toString(e.getValue().shape()));
                }
                e.getValue().copy_(src);
            }
        }
    }

    /**
     * A frozen copy of this model (same weights, no gradients), e.g. a reference policy; of an adapter
     * view, a standalone copy with the adapter folded in.
     */
    public DecoderLm frozenCopy(Device target) {
        if (adapter != null) {
            try (DecoderLm merged = mergeAdapter()) {
                return merged.frozenCopy(target);
            }
        }
        if (batch != null) {
            throw new UnsupportedOperationException("a multi-adapter view has no single set of weights to copy");
        }
        DecoderLm copy;
        try (Scope s = Scope.open()) {
            Map<String, Tensor> detached = new LinkedHashMap<>();
            parameters.forEach((k, v) -> detached.put(k, v.detach()));
            copy = fromWeights(config, detached, dtype(), target, "copy", true, lmHead != null);
        }
        copy.parameters.values().forEach(p -> p.requiresGrad(false));
        return copy;
    }

    /**
     * The forward pass.
     *
     * @param inputIds int64 {@code [B, S]}
     * @param positionIds int64 {@code [B, S]} (HF: {@code cumsum(mask) - 1}, pads at 1)
     * @param attentionMask int64/bool {@code [B, past + S]} with 1 for real tokens, or null when no
     *        sequence is padded
     * @param cache the cache to read past keys/values from and append to, or null
     * @param logitsFrom compute logits for positions {@code [logitsFrom, S)} only; {@code S} for none
     * @return logits {@code [B, S - logitsFrom, V]} in the model dtype (null when none) and the
     *         final-normed hidden states {@code [B, S, E]}
     */
    public Output forward(Tensor inputIds, Tensor positionIds, Tensor attentionMask, KvCache cache, long logitsFrom) {
        return forward(inputIds, positionIds, attentionMask, cache, logitsFrom, null);
    }

    /**
     * The forward pass with {@code packed} weights (from {@link #packForDecoding(long)}, or null)
     * for the projections whose row count they were packed for. Same values up to float rounding.
     */
    public Output forward(Tensor inputIds, Tensor positionIds, Tensor attentionMask, KvCache cache, long logitsFrom,
            DecodeWeights packed) {
        if (packed != null && inputIds.dim() == 2 && inputIds.size(1) > 1) {
            if (!packed.serves(inputIds.numel())) {
                packed = null; // a prefill whose row count the packed layers would leave to the plain product
            } else {
                packed.prefills.incrementAndGet();
            }
        }
        try (Engine.BlasSection blas = passSection(inputIds.numel(), packed)) {
            return forwardLayers(inputIds, positionIds, attentionMask, cache, logitsFrom, packed);
        }
    }

    /**
     * The threads of a forward of {@code tokens} positions (see {@link #forward}), or null. Many rows
     * on plain float32 weights: a BLAS section, OpenBLAS's products doing the work. A few rows go to
     * oneDNN on libtorch's threads, and so do packed weights whatever the rows (a LoRA team's 12-row
     * decoding step in a BLAS section ran its packed products on one thread, 282 ms per step at the
     * 0.5B shape against 180 ms outside one); a float32 pass of many rows on packed weights (a
     * prefill) leaves OpenBLAS the float32 work that 16-bit passes leave it, attention's blocks inside
     * libtorch's parallel loop, so it runs OpenBLAS on one thread as they do ({@link #oneBlasThread()}).
     */
    Engine.BlasSection passSection(long tokens, DecodeWeights packed) {
        if (tokens > BLAS_ROWS && blasSections()) {
            return packed == null ? Engine.blasSection() : Engine.singleThreadBlas();
        }
        return oneBlasThread();
    }

    /** The section of a backward pass: a BLAS section in float32 on the CPU, else {@link #oneBlasThread()}. */
    Engine.BlasSection backwardSection() {
        return blasSections() ? Engine.blasSection() : oneBlasThread();
    }

    /**
     * A pass of 16-bit weights on the CPU, whose products run in oneDNN on libtorch's threads, runs
     * OpenBLAS on one thread ({@link Engine#singleThreadBlas()}); null otherwise (float32 and float64
     * passes may do their base products in OpenBLAS). OpenBLAS does only float32 work in such a pass,
     * some of it from inside libtorch's parallel loops: attention, computed in float32 ({@link
     * Tensor#attention}), runs its blocks' products there, and an OpenBLAS of several threads then
     * starts its own beside the spinning OpenMP workers. At the 0.5B shape in bf16, one agent with a
     * 512-token prompt and G = 8 (2 threads), a prefill took 23.1 s and a scoring pass 59.0 s so, and
     * 0.51 s and 2.43 s on one OpenBLAS thread; one layer's attention of 512 positions, 867 ms forward
     * and 1413 ms backward against 6.3 and 14.3 ms. A pass of few tokens is no exception: 16 positions
     * over a cache of 520 (a turn appended to a conversation) took 43 and 87 ms a layer against 0.33
     * and 0.93. LoRA's small float32 products gain too: a bf16 LoRA team's prefill at the 0.5B shape
     * took 103–109 ms per agent, 85–87 ms on one thread. OpenBLAS stays on one thread between such
     * passes ({@link Engine#singleThreadBlas()}), so a decoding step pays no switch.
     */
    private Engine.BlasSection oneBlasThread() {
        return !device.isCuda() && (dtype() == DType.BF16 || dtype() == DType.F16) ? Engine.singleThreadBlas() : null;
    }

    /** Forwards of more rows than this are BLAS sections ({@link Engine#blasSection()}). */
    static final long BLAS_ROWS = 8;

    /**
     * Whether many-row passes run as BLAS sections: float32 on the CPU, where OpenBLAS does the
     * products. bf16/f16 products run in oneDNN on libtorch's own threads, which a section would
     * leave one of (a 0.5B bf16 scoring step measured 2.8x slower inside one).
     */
    private boolean blasSections() {
        return !device.isCuda() && dtype() == DType.F32;
    }

    /**
     * The forward pass of rows that continue {@code prefix} ({@link Prefix}; gradients flow when they are
     * on), whose {@code attentionMask} covers their prefix's positions too: logits for the rows' positions
     * {@code [logitsFrom, S)}, hidden states of the rows' positions.
     */
    public Output forward(Prefix prefix, Tensor inputIds, Tensor positionIds, Tensor attentionMask, long logitsFrom) {
        Joint joint = joint(prefix, inputIds, positionIds, attentionMask, 0);
        try (Engine.BlasSection blas = passSection(joint.ids.numel(), null)) {
            Context ctx = joint.context(this, 0);
            Tensor x = Tensor.embedding(embed, joint.ids);
            for (int i = 0; i < layers.length; i++) {
                x = scopedLayer(i, x, ctx);
            }
            return head(joint.rowsOf(x), logitsFrom, joint.rows);
        }
    }

    private Output forwardLayers(Tensor inputIds, Tensor positionIds, Tensor attentionMask, KvCache cache,
            long logitsFrom, DecodeWeights packed) {
        Context ctx = context(inputIds, positionIds, attentionMask, cache, packed, 0);
        Tensor x = Tensor.embedding(embed, inputIds); // [B, S, E]
        for (int i = 0; i < layers.length; i++) {
            x = scopedLayer(i, x, ctx);
        }
        if (cache != null) {
            cache.advance((int) ctx.s);
        }
        return head(x, logitsFrom, ctx);
    }

    /** What every layer of one forward shares: shapes, mask, rotary tables, cache, frozen weights. */
    private record Context(long b, long s, Tensor mask4d, boolean causal, Tensor cos, Tensor sin, KvCache cache,
            DecodeWeights packed, LoraAdapter adapter, LoraBatch batch, long dropoutSeed, Joint joint) {
        /**
         * {@code x @ Wᵀ + b} for projection {@code which} (q, k, v, o, gate, up, down) of layer
         * {@code layer}, packed when it can be, plus the adapter's {@code s·B·A·dropout(x)} (or the row
         * groups' adapters') when it adapts it.
         */
        Tensor project(Tensor x, Tensor weight, Tensor bias, int layer, int which, Rng dropout) {
            return adapted(product(x, weight, bias, layer, which), x, layer, which, dropout);
        }

        /** {@code x @ Wᵀ + b} of projection {@code which} of layer {@code layer}, packed when it can be. */
        private Tensor product(Tensor x, Tensor weight, Tensor bias, int layer, int which) {
            PackedWeight p = packed == null ? null : packed.single(layer, which);
            return p == null ? x.linear(weight, bias) : p.apply(x, weight, bias);
        }

        /**
         * Projections {@code which} of one input {@code x} (q, k, v or gate, up) with their weights and
         * biases: one product of their stacked packed weight (slot {@code slot}) when this pass decodes
         * with packed weights for x's rows, else one by one; each plus its adapter's delta, in order.
         */
        Tensor[] projectStacked(Tensor x, Tensor[] weights, Tensor[] biases, int layer, int slot, int[] which,
                Rng dropout) {
            PackedWeight p = packed == null ? null : packed.layers[layer][slot];
            Tensor[] base = p != null && p.fits(x) ? p.applyStacked(x) : null;
            Tensor[] y = new Tensor[which.length];
            if (adapter == null && batch != null) {
                for (int k = 0; k < which.length; k++) {
                    y[k] = base == null ? product(x, weights[k], biases[k], layer, which[k]) : base[k];
                }
                return batch.added(x, layer, which, y); // the row groups' adapters take x once for all of them
            }
            for (int k = 0; k < which.length; k++) {
                y[k] = base == null ? project(x, weights[k], biases[k], layer, which[k], dropout)
                        : adapted(base[k], x, layer, which[k], dropout);
            }
            return y;
        }

        /** {@code y} plus the adapter's (or the row groups' adapters') addition for projection {@code which} of x. */
        private Tensor adapted(Tensor y, Tensor x, int layer, int which, Rng dropout) {
            if (adapter == null && batch != null) {
                return batch.added(x, layer, new int[] {which}, new Tensor[] {y})[0];
            }
            return adapter == null ? y : adapter.added(y, x, layer, LoraConfig.PROJECTIONS.get(which), dropout);
        }

        /**
         * Layer {@code layer}'s dropout stream, or null without dropout: seeded by the pass's seed and
         * the layer, so a checkpointed recomputation of the layer draws the same masks.
         */
        Rng dropout(int layer) {
            return dropoutSeed == 0 ? null : new Rng(dropoutSeed ^ (0x9E3779B97F4A7C15L * (layer + 1)));
        }
    }

    private Context context(Tensor inputIds, Tensor positionIds, Tensor attentionMask, KvCache cache,
            DecodeWeights packed, long dropoutSeed) {
        return context(inputIds, positionIds, attentionMask, cache, packed, dropoutSeed, cache == null ? 0 : cache.length());
    }

    /** With {@code past} positions (a cache's, or a prefix's) before the rows' own: the mask covers them too. */
    private Context context(Tensor inputIds, Tensor positionIds, Tensor attentionMask, KvCache cache,
            DecodeWeights packed, long dropoutSeed, int past) {
        long b = inputIds.size(0);
        long s = inputIds.size(1);
        int window = config.slidingWindow();
        if (window > 0 && past + s > window) {
            throw new IllegalArgumentException("A sequence of " + (past + s) + " positions exceeds this model's "
                    + "sliding_window of " + window + ": only full attention is implemented; keep prompt + "
                    + "max_new_tokens within " + window);
        }
        // mask: null + causal flag when nothing is padded, else boolean [B, 1, S, past+S]
        Tensor mask4d = null;
        boolean causal = false;
        if (attentionMask != null) {
            mask4d = buildMask(attentionMask, past, s);
        } else if (past == 0) {
            causal = s > 1;
        } else if (s > 1) {
            mask4d = causalMask(past, s).unsqueeze(0).unsqueeze(0);
        }
        // rotary: cos/sin of pos * inv_freq, looked up per position                           [B, 1, S, D]
        Tensor[] tables = rotaryTables(past + s);
        Tensor cos = Tensor.embedding(tables[0], positionIds).unsqueeze(1);
        Tensor sin = Tensor.embedding(tables[1], positionIds).unsqueeze(1);
        return new Context(b, s, mask4d, causal, cos, sin, cache, packed, adapter, batch, dropoutSeed, null);
    }

    /**
     * {@link #layer(int, Tensor, Context)} in a scope of its own ({@link Scope#inner}): its output
     * stays, its intermediates go when it returns (those a backward needs live on in the output's
     * graph). Without it every intermediate of every layer would live until the caller's scope closes:
     * a Qwen2.5-1.5B LoRA agent's scoring pass of 4 × 96 tokens on a bf16 base grew the process by
     * ~6.5 GB (2.4 GB with it), and a checkpointed one, whose first pass runs without a graph, by
     * ~10 GB (1.4 GB with it).
     */
    private Tensor scopedLayer(int i, Tensor x, Context c) {
        return Scope.inner(() -> layer(i, x, c));
    }

    /** The projections (indices of {@link LoraConfig#PROJECTIONS}) that read one input: q, k, v and gate, up. */
    private static final int[] QKV = {0, 1, 2};
    private static final int[] GATE_UP = {4, 5};

    /** Decoder layer {@code i}: {@code x [B, S, E]} → {@code [B, S, E]}. */
    private Tensor layer(int i, Tensor x, Context c) {
        Rng dropout = c.dropout(i);
        try {
            return layer(i, x, c, dropout);
        } finally {
            if (dropout != null) {
                dropout.close();
            }
        }
    }

    private Tensor layer(int i, Tensor x, Context c, Rng dropout) {
        Layer l = layers[i];
        long s = c.s;
        long width = (long) config.numHeads() * config.headDim();
        double eps = config.rmsNormEps();
        // self-attention block: x + o_proj(attn(rope(q), rope(k), v))
        Tensor hn = x.rmsNorm(l.inputNorm, eps);
        Tensor[] qkv = c.projectStacked(hn, new Tensor[] {l.qWeight, l.kWeight, l.vWeight},
                new Tensor[] {l.qBias, l.kBias, l.vBias}, i, DecodeWeights.QKV, QKV, dropout);
        Tensor attn;
        if (c.joint == null) {
            attn = attention(l, i, qkv, c, null, null);                          // [B, S, H·D]
        } else { // the prefixes' positions, then the rows', each row after its prefix's keys and values
            Joint j = c.joint;
            long first = j.prefixPositions();
            Tensor[] kv = new Tensor[2];
            Tensor ap = attention(l, i, narrowed(qkv, 0, first), j.prefix, kv, null);
            Tensor ar = attention(l, i, narrowed(qkv, first, s - first), j.rows, null,
                    new Tensor[] {kv[0].indexSelect(0, j.rowPrefix), kv[1].indexSelect(0, j.rowPrefix)});
            attn = Tensor.cat(List.of(ap.reshape(1, first, width), ar.reshape(1, s - first, width)), 1);
        }
        x = x.add(c.project(attn, l.oWeight, l.oBias, i, 3, dropout));
        // MLP block: x + down(silu(gate(x)) * up(x))
        Tensor hm = x.rmsNorm(l.postNorm, eps);
        Tensor[] gateUp = c.projectStacked(hm, new Tensor[] {l.gateWeight, l.upWeight},
                new Tensor[] {l.gateBias, l.upBias}, i, DecodeWeights.GATE_UP, GATE_UP, dropout);
        Tensor gated = gateUp[0].silu().mul(gateUp[1]);
        return x.add(c.project(gated, l.downWeight, l.downBias, i, 6, dropout));
    }

    /**
     * Self-attention of layer {@code i} from its q, k, v projections ({@code [B, S, ·]} as context
     * {@code c} shapes them): rotary positions, the KV cache, and the keys and values {@code before}
     * ({@code [B, K, P, D]}, or null) ahead of the rows' own; the rows' keys and values go to
     * {@code kvOut} when it is not null. Returns {@code [B, S, H·D]}.
     */
    private Tensor attention(Layer l, int i, Tensor[] qkv, Context c, Tensor[] kvOut, Tensor[] before) {
        long b = c.b;
        long s = c.s;
        int h = config.numHeads();
        int kvh = config.numKvHeads();
        int d = config.headDim();
        Tensor q = qkv[0].view(b, s, h, d);                   // [B, S, H, D]
        Tensor k = qkv[1].view(b, s, kvh, d);                 // [B, S, K, D]
        Tensor v = qkv[2].view(b, s, kvh, d).transpose(1, 2); // [B, K, S, D]
        if (l.qNorm != null) { // Qwen3: q_norm/k_norm over head_dim before rotary
            q = q.rmsNorm(l.qNorm, config.rmsNormEps());
            k = k.rmsNorm(l.kNorm, config.rmsNormEps());
        }
        q = rotate(q.transpose(1, 2), c.cos, c.sin); // [B, H, S, D]
        k = rotate(k.transpose(1, 2), c.cos, c.sin); // [B, K, S, D]
        if (c.cache != null) {
            Tensor[] kv = c.cache.append(i, k, v); // [B, K, past+S, D]
            k = kv[0];
            v = kv[1];
        }
        if (kvOut != null) {
            kvOut[0] = k;
            kvOut[1] = v;
        }
        if (before != null) {
            k = Tensor.cat(List.of(before[0], k), 2); // [B, K, P+S, D]
            v = Tensor.cat(List.of(before[1], v), 2);
        }
        Tensor attn = Tensor.attention(q, k, v, c.mask4d, c.causal, 1.0 / Math.sqrt(d), kvh != h); // [B, H, S, D]
        return attn.transpose(1, 2).reshape(b, s, (long) h * d);
    }

    /** Positions {@code [from, from + n)} of each of {@code xs} ({@code [1, M, ·]}). */
    private static Tensor[] narrowed(Tensor[] xs, long from, long n) {
        Tensor[] out = new Tensor[xs.length];
        for (int k = 0; k < xs.length; k++) {
            out[k] = xs[k].narrow(1, from, n);
        }
        return out;
    }

    /** Final norm and LM head (for positions {@code [logitsFrom, S)}). */
    private Output head(Tensor x, long logitsFrom, Context c) {
        Tensor hidden = x.rmsNorm(finalNorm, config.rmsNormEps()); // [B, S, E]
        Tensor logits = null;
        if (logitsFrom < c.s) {
            requireHead();
            Tensor tail = logitsFrom == 0 ? hidden : hidden.narrow(1, logitsFrom, c.s - logitsFrom);
            // a prefill's last positions, up to BLAS_ROWS of them, take the plain head as stored (oneDNN
            // streams it for few contiguous rows, as fast as packed; see Tensor.linear): checking another
            // row count against the packed copy would pack a temporary copy of the head (544 MB in
            // float32 at the 0.5B shape), and OpenBLAS, on one thread in such a pass, would repack it
            long rows = tail.numel() / tail.size(-1);
            boolean packedHead = c.packed != null && c.packed.head != null
                    && (c.s == 1 || rows == c.packed.head.rows() || rows > BLAS_ROWS);
            logits = packedHead ? c.packed.head.apply(tail, lmHead, null)
                    : (c.packed != null ? tail.contiguous() : tail).linear(lmHead, null); // [B, S - logitsFrom, V]
        }
        return new Output(logits, hidden);
    }

    /**
     * Backpropagates {@code loss(forward(...))} into the parameters' gradients (adding to them).
     *
     * <p>The embedding's gradient is added row by row: the lookup runs on the detached table, and
     * after the backward pass the gradient of each looked-up row is added to the table's gradient
     * ({@code grad[ids[j]] += ∂L/∂x_0[j]}, {@code index_add}). The same sum as autograd's embedding
     * backward, without its dense {@code [V, E]} zero tensor and the extra accumulation (1.6 GB of
     * memory traffic per step for a tied 150k-token vocabulary).
     *
     * <p>With {@code checkpointing}, layer-wise recomputation: a first pass without gradients keeps
     * only each layer's input {@code h_l}; the head's loss is backpropagated to {@code ∂L/∂h_L}, and
     * for l = L−1..0 layer l is recomputed from {@code h_l} with gradients and backpropagated with the
     * incoming {@code ∂L/∂h_{l+1}}, yielding {@code ∂L/∂h_l}. Parameter gradients accumulate exactly
     * as in one backward through the whole graph, while at most one layer's activations are alive.
     *
     * @param loss maps the forward's output (logits for {@code [logitsFrom, S)}) to a scalar
     * @return the loss value (nothing is backpropagated when it is not finite)
     */
    public double backward(Tensor inputIds, Tensor positionIds, Tensor attentionMask, long logitsFrom,
            java.util.function.Function<Output, Tensor> loss, boolean checkpointing) {
        return backward(inputIds, positionIds, attentionMask, null, logitsFrom, loss, checkpointing);
    }

    /** {@link #backward(Tensor, Tensor, Tensor, long, java.util.function.Function, boolean)} of rows that continue {@code prefix} (or null). */
    public double backward(Tensor inputIds, Tensor positionIds, Tensor attentionMask, Prefix prefix, long logitsFrom,
            java.util.function.Function<Output, Tensor> loss, boolean checkpointing) {
        return backward(inputIds, positionIds, attentionMask, prefix, (top, c) -> loss.apply(head(top, logitsFrom, c)),
                Tensor::backward, checkpointing);
    }

    /**
     * What a scoring pass gives a loss: {@code tokenLogprobs [B, T]} float32, {@code log p(targets[b, t])}
     * at position {@code from + t}, and the final-normed hidden states {@code [B, S, E]}.
     */
    public record Scored(Tensor tokenLogprobs, Tensor hidden) {
    }

    /**
     * Whether {@link #tokenLogprobs} and the {@link Scored} backward apply: 16-bit weights, whose
     * float32 log-softmax over {@code [B, T, V]} through autograd costs more than the head's products,
     * and float32 weights on the CPU with a vocabulary of {@link #HEAD_SCORING_MIN_VOCAB} or more,
     * where the {@code [B, T, V]} logits, their log-softmax and its gradient are each an allocation
     * above glibc's mmap threshold for a scoring batch of a thousand tokens, served with fresh pages
     * every pass (0.5B shape, 4 × 96 tokens: 233 MB each; a LoRA agent of a 3-agent team scored in
     * 4.4–4.9 s through the head's chunks against 5.9–6.3 s through autograd). Smaller float32
     * vocabularies (the built-in tiny models) and float32 on a GPU score through
     * {@link Output#logits()} and autograd.
     */
    public boolean scoresTokensInHead() {
        return dtype() == DType.BF16 || dtype() == DType.F16
                || (dtype() == DType.F32 && !device.isCuda() && config.vocabSize() >= HEAD_SCORING_MIN_VOCAB);
    }

    /** Float32 vocabularies from this size on score in the head's chunks: 1,024 tokens' logits are then 32 MiB. */
    static final int HEAD_SCORING_MIN_VOCAB = 8192;

    /**
     * {@code log p(targets[b, t] | position from + t)}, {@code [B, T]} float32, from the final hidden
     * states {@code [B, S, E]} of a forward ({@link Output#hidden()}): {@code l[y] − logsumexp(l)} over
     * the float32 values of the 16-bit logits, computed in chunks of rows ({@link TokenHead});
     * differentiable through autograd when gradients are on. The value {@link #backward(Tensor, Tensor,
     * Tensor, long, Tensor, java.util.function.Function, boolean)} gives its loss, bit for bit.
     */
    public Tensor tokenLogprobs(Tensor hidden, long from, Tensor targets) {
        requireHead();
        long t = targets.size(1);
        return TokenHead.of(lmHead, hidden.narrow(1, from, t), targets).logprobs().view(targets.size(0), t);
    }

    private void requireHead() {
        if (lmHead == null) {
            throw new IllegalStateException("this decoder was loaded without an LM head (the backbone of a "
                    + "sequence-classification model): it computes hidden states only; pass logitsFrom = S");
        }
    }

    /**
     * As {@link #backward(Tensor, Tensor, Tensor, long, java.util.function.Function, boolean)} for a
     * loss of the {@link #tokenLogprobs} of {@code targets} ({@code [B, T]}, predicted at positions
     * {@code [from, from + T)}) and of the hidden states. The loss is evaluated on detached copies;
     * its gradient {@code g = ∂L/∂logp} then goes through the head without autograd
     * ({@link TokenHead#backward}: float32 per chunk of rows, W's gradient added in place into a
     * buffer kept across steps), and {@code ∂L/∂hidden} (the head's plus the loss's own) through the
     * final norm and the layers. Gradients are those of autograd through {@link #tokenLogprobs} up to
     * float32 rounding before each 16-bit rounding.
     */
    public double backward(Tensor inputIds, Tensor positionIds, Tensor attentionMask, long from, Tensor targets,
            java.util.function.Function<Scored, Tensor> loss, boolean checkpointing) {
        return backward(inputIds, positionIds, attentionMask, null, from, targets, loss, checkpointing);
    }

    /**
     * {@link #backward(Tensor, Tensor, Tensor, long, Tensor, java.util.function.Function, boolean)} of rows
     * that continue {@code prefix} (or null).
     */
    public double backward(Tensor inputIds, Tensor positionIds, Tensor attentionMask, Prefix prefix, long from,
            Tensor targets, java.util.function.Function<Scored, Tensor> loss, boolean checkpointing) {
        requireHead();
        long b = targets.size(0);
        long t = targets.size(1);
        Tensor[] graph = new Tensor[3]; // hidden (with its graph), its detached copy, the detached logp
        TokenHead[] head = new TokenHead[1];
        return backward(inputIds, positionIds, attentionMask, prefix, (top, c) -> {
            graph[0] = top.rmsNorm(finalNorm, config.rmsNormEps());                   // [B, S, E]
            try (GradMode g = GradMode.noGrad()) {
                head[0] = TokenHead.of(lmHead, graph[0].narrow(1, from, t), targets,
                        TokenHead.chunkRows(lmHead.size(0)), headLogitsBuffer(b * t));
            }
            graph[1] = graph[0].detach().requiresGrad(true);
            graph[2] = head[0].logprobs().view(b, t).detach().requiresGrad(true);
            return loss.apply(new Scored(graph[2], graph[1]));
        }, value -> {
            value.backward();
            Tensor upstream = graph[1].grad();                                        // ∂L/∂hidden from the loss
            Tensor g = graph[2].grad();                                               // ∂L/∂logp
            if (g != null) {
                Tensor rows = head[0].backward(g, this::headGradBuffer).view(b, t, config.hiddenSize());
                try (GradMode off = GradMode.noGrad()) {
                    if (upstream == null) {
                        upstream = Tensor.zerosOf(dtype(), device, graph[0].shape());
                    }
                    upstream.narrow(1, from, t).add_(rows, 1);
                }
            }
            if (upstream != null) {
                graph[0].backward(upstream);
            }
        }, checkpointing);
    }

    /**
     * The head weight's gradient storage, reused across steps (a tied 150k × 896 bf16 one is 272 MB,
     * fresh from the kernel at every step otherwise); a new one when the last is still referred to (a
     * caller kept a view of an earlier step's gradient, or a tensor sharing its memory, past
     * {@code zeroGrad}), whose values this backward must not overwrite.
     */
    private Tensor headGradBuffer() {
        headGrad = reusable(headGrad, lmHead.numel());
        if (headGrad == null) {
            try (GradMode g = GradMode.noGrad()) {
                headGrad = Tensor.emptyOf(lmHead.dtype(), device, lmHead.shape()).keep();
            }
        }
        return headGrad;
    }

    private Tensor headGrad;

    /**
     * {@code [m, V]} of the model dtype for a training pass's logits ({@link TokenHead}), from storage
     * kept across passes and grown when a pass needs more: the 0.5B shape's 128 completion rows are
     * 38.9 MB of bf16, above the size glibc keeps (32 MiB), so a fresh tensor faulted ~9,000 pages in
     * per scoring pass. A new storage when the kept one is still referred to (another pass on this
     * model, or a tensor a caller kept), whose values this pass must not overwrite. Null (a fresh
     * tensor for this pass alone) above {@link #KEPT_LOGITS_BYTES}: long completions' logits are not
     * held through the generations between passes.
     */
    synchronized Tensor headLogitsBuffer(long m) {
        long n = m * lmHead.size(0);
        if (n * lmHead.dtype().byteSize() > KEPT_LOGITS_BYTES) {
            return null;
        }
        headLogits = reusable(headLogits, n);
        if (headLogits == null) {
            try (GradMode g = GradMode.noGrad()) {
                headLogits = Tensor.emptyOf(lmHead.dtype(), device, n).keep();
            }
        }
        return headLogits.narrow(0, 0, n).view(m, lmHead.size(0));
    }

    private Tensor headLogits;

    /** The largest logits storage a model keeps across training passes ({@link #headLogitsBuffer}). */
    static final long KEPT_LOGITS_BYTES = 256L << 20;

    /**
     * {@code kept} when it may be written again: nothing else refers to it and it holds at least
     * {@code n} elements; else null, after closing this model's reference to it.
     */
    private static Tensor reusable(Tensor kept, long n) {
        if (kept != null && (kept.isShared() || kept.numel() < n)) {
            kept.close();
            return null;
        }
        return kept;
    }

    private double backward(Tensor inputIds, Tensor positionIds, Tensor attentionMask, Prefix prefix,
            java.util.function.BiFunction<Tensor, Context, Tensor> loss, java.util.function.Consumer<Tensor> backprop,
            boolean checkpointing) {
        if (batch != null) {
            throw new UnsupportedOperationException("a multi-adapter view is for inference; train each agent's own view");
        }
        if (root == null) {
            releaseDecodeWeights(); // a view trains its adapter only: the shared base's packed weights stay valid
        }
        try (Engine.BlasSection blas = backwardSection()) {
            return backwardLayers(inputIds, positionIds, attentionMask, prefix, loss, backprop, checkpointing);
        }
    }

    /**
     * {@code loss} maps the last layer's output to the loss; {@code backprop} backpropagates the loss
     * into its graph. With a {@code prefix}, its positions run in the same pass ({@link Prefix}) and
     * the loss sees the rows' positions.
     */
    private double backwardLayers(Tensor inputIds, Tensor positionIds, Tensor attentionMask, Prefix prefix,
            java.util.function.BiFunction<Tensor, Context, Tensor> loss, java.util.function.Consumer<Tensor> backprop,
            boolean checkpointing) {
        // a LoRA agent's training pass draws dropout masks (PEFT's lora_dropout in train mode)
        long dropoutSeed = adapter != null && adapter.config().dropout() > 0 ? adapter.nextDropoutSeed() | 1 : 0;
        if (prefix != null && dropoutSeed != 0) {
            throw new IllegalStateException("a shared prefix would share its dropout masks between the rows that "
                    + "continue it: score rows with dropout without one (sharesPrefixes())");
        }
        Joint joint = prefix == null ? null : joint(prefix, inputIds, positionIds, attentionMask, dropoutSeed);
        Context ctx = joint != null ? joint.context(this, dropoutSeed)
                : context(inputIds, positionIds, attentionMask, null, null, dropoutSeed);
        Context rowsCtx = joint != null ? joint.rows : ctx; // what the loss's head sees
        Tensor ids = joint != null ? joint.ids : inputIds;
        Tensor x0 = Tensor.embedding(embed.detach(), ids).requiresGrad(true); // [B, S, E] (or [1, M, E]), a leaf
        Tensor upstream; // ∂L/∂x_0
        if (!checkpointing) {
            Tensor x = x0;
            for (int i = 0; i < layers.length; i++) {
                x = scopedLayer(i, x, ctx);
            }
            Tensor value = loss.apply(joint != null ? joint.rowsOf(x) : x, rowsCtx);
            double result = value.item();
            if (!Double.isFinite(result)) {
                return result; // no gradient from a non-finite loss
            }
            backprop.accept(value);
            addEmbeddingGradient(ids, x0.grad());
            return result;
        }
        List<Tensor> inputs = new ArrayList<>(); // h_0 .. h_L, without graphs
        try (GradMode g = GradMode.noGrad()) {
            Tensor x = x0;
            for (int i = 0; i < layers.length; i++) {
                inputs.add(x);
                x = scopedLayer(i, x, ctx);
            }
            inputs.add(x);
        }
        Tensor last = inputs.get(layers.length);
        Tensor top = (joint != null ? joint.rowsOf(last) : last).detach().requiresGrad(true);
        Tensor value = loss.apply(top, rowsCtx);
        double result = value.item();
        if (!Double.isFinite(result)) {
            return result;
        }
        backprop.accept(value);
        upstream = top.grad(); // ∂L/∂h_L
        if (joint != null && upstream != null) { // the prefix positions' part is 0: the loss reads the rows
            try (GradMode g = GradMode.noGrad()) {
                Tensor all = Tensor.zerosOf(upstream.dtype(), device, last.shape());
                joint.rowsOf(all).copy_(upstream);
                upstream = all;
            }
        }
        for (int i = layers.length - 1; i >= 0; i--) {
            int layer = i;
            Tensor incoming = upstream;
            upstream = Scope.inner(() -> { // the recomputed activations go with the layer's backward
                Tensor in = inputs.get(layer).detach().requiresGrad(true);
                layer(layer, in, ctx).backward(incoming);
                return in.grad(); // ∂L/∂h_i
            });
        }
        addEmbeddingGradient(ids, upstream);
        return result;
    }

    /**
     * Rows that continue shared prefixes: a scoring pass over {@code [B, S]} rows whose positions follow
     * one of U prefixes each, computed once per prefix. One pass runs the U·P prefix positions and the
     * B·S rows' positions together ({@link Joint}): every product sees them all as one batch; attention
     * runs per part, the prefixes' causal, each row's over its prefix's keys and values ({@code rows})
     * and then its own, as a decoding step attends to a KV cache. Every value is that of the rows with
     * their prefixes written out (up to float rounding: other batch shapes, and a prefix's gradient
     * summed over its rows by {@code index_select}'s backward); the rows' attention mask covers the
     * prefix too ({@code [B, P + S]}) and their positions continue their prefix's.
     *
     * @param ids the distinct prefixes {@code [U, P]}, left-padded
     * @param positions their positions {@code [U, P]}
     * @param mask 1 at their tokens, 0 at padding {@code [U, P]}
     * @param rows int64 {@code [B]}: the prefix each row continues
     */
    public record Prefix(Tensor ids, Tensor positions, Tensor mask, Tensor rows) {
    }

    /**
     * One pass over the U·P positions of {@link Prefix} and the B·S positions of its rows, as one row of
     * M = U·P + B·S positions ({@code ids} {@code [1, M]}): the prefixes' part shaped by {@code prefix}
     * ({@code [U, P]}, causal), the rows' by {@code rows} ({@code [B, S]} after P positions of the prefix
     * of each, {@code rowPrefix}).
     */
    private record Joint(Tensor ids, Context prefix, Context rows, Tensor rowPrefix) {
        /** The pass's context: every position one batch of M rows, attention per part. */
        Context context(DecoderLm m, long dropoutSeed) {
            return new Context(1, ids.size(1), null, false, null, null, null, null, m.adapter, m.batch, dropoutSeed,
                    this);
        }

        /** U·P: the pass's first positions, the prefixes'. */
        long prefixPositions() {
            return prefix.b * prefix.s;
        }

        /** The rows' positions {@code [B, S, ·]} of the pass's {@code [1, M, ·]}. */
        Tensor rowsOf(Tensor x) {
            return x.narrow(1, prefixPositions(), rows.b * rows.s).view(rows.b, rows.s, x.size(2));
        }
    }

    private Joint joint(Prefix prefix, Tensor inputIds, Tensor positionIds, Tensor attentionMask, long dropoutSeed) {
        Context p = context(prefix.ids(), prefix.positions(), prefix.mask(), null, null, dropoutSeed, 0);
        Context r = context(inputIds, positionIds, attentionMask, null, null, dropoutSeed, (int) prefix.ids().size(1));
        Tensor ids = Tensor.cat(List.of(prefix.ids().reshape(1, -1), inputIds.reshape(1, -1)), 1); // [1, M]
        return new Joint(ids, p, r, prefix.rows());
    }

    /**
     * Whether a training pass of this model may score rows with a shared {@link Prefix}: not with
     * LoRA dropout, whose masks the rows would share on their prefix, and not through a multi-adapter view.
     */
    public boolean sharesPrefixes() {
        return batch == null && (adapter == null || adapter.config().dropout() == 0);
    }

    /** {@code embed.grad[ids[j]] += rows[j]} for the {@code [B, S]} ids and their {@code [B, S, E]} gradients. */
    private void addEmbeddingGradient(Tensor inputIds, Tensor rows) {
        if (rows == null || !embed.requiresGrad()) {
            return;
        }
        try (GradMode g = GradMode.noGrad()) {
            embed.addRowsToGrad(inputIds.reshape(-1), rows.reshape(-1, config.hiddenSize()));
        }
    }

    /** The packed weights made by {@link #decodeWeights} (null for a view, or none made). */
    private DecodeWeights decodeSet;

    /**
     * The projection and head weights packed by oneDNN for forwards of few rows (token-by-token
     * decoding), or null where packing does not apply (see {@link PackedWeight#of}). One set, made
     * for {@code rows} rows and serving other row counts as {@link PackedWeight#fits} says; kept by the
     * model and reused while no weight changed (each weight's version counter is compared), repacked
     * otherwise. A training {@link #backward} releases it (it would be stale after the update, and
     * hold memory during it), and so does {@link #releaseDecodeWeights} (the trainers call it after each
     * generation of a full agent that samples beside others, so that N copies are never held at once).
     */
    public DecodeWeights decodeWeights(long rows) {
        return root != null ? root.decodeWeights(rows) : packedFor(rows);
    }

    /**
     * The base's packed weights: the current set whatever the row count (the agents of a shared base
     * may decode different row counts side by side through it), replaced when a weight changed.
     */
    private synchronized DecodeWeights packedFor(long rows) {
        if (decodeSet != null && decodeSet.current()) {
            return decodeSet;
        }
        releaseDecodeWeights(); // stale: only this model's own thread trains it, and a shared base is frozen
        decodeSet = packForDecoding(rows);
        return decodeSet;
    }

    /** Whether this model holds packed weights of {@link #decodeWeights} (a view never does: its base holds them). */
    public synchronized boolean holdsDecodeWeights() {
        return decodeSet != null;
    }

    /** Frees the packed weights of {@link #decodeWeights}, if any (a view's belong to its base). */
    public synchronized void releaseDecodeWeights() {
        if (decodeSet != null) {
            decodeSet.close();
            decodeSet = null;
        }
    }

    private DecodeWeights packForDecoding(long rows) {
        PackedWeight head = lmHead == null ? null : PackedWeight.of(lmHead, rows);
        if (head == null) {
            return null; // no oneDNN, another dtype, a GPU, or a small model: nothing gains
        }
        PackedWeight[][] packed = new PackedWeight[layers.length][];
        List<Tensor> sources = new ArrayList<>(List.of(lmHead));
        try {
            for (int i = 0; i < layers.length; i++) {
                Layer l = layers[i];
                packed[i] = new PackedWeight[] {
                    PackedWeight.stacked(List.of(l.qWeight, l.kWeight, l.vWeight), Arrays.asList(l.qBias, l.kBias, l.vBias),
                            rows),
                    PackedWeight.of(l.oWeight, rows),
                    PackedWeight.stacked(List.of(l.gateWeight, l.upWeight), Arrays.asList(l.gateBias, l.upBias), rows),
                    PackedWeight.of(l.downWeight, rows)};
                for (Tensor w : Arrays.asList(l.qWeight, l.kWeight, l.vWeight, l.oWeight, l.gateWeight, l.upWeight,
                        l.downWeight, l.qBias, l.kBias, l.vBias, l.oBias, l.gateBias, l.upBias, l.downBias)) {
                    if (w != null) {
                        sources.add(w);
                    }
                }
            }
        } catch (RuntimeException e) {
            new DecodeWeights(packed, head, List.of()).close();
            throw e;
        }
        return new DecodeWeights(packed, head, sources);
    }

    /**
     * Packed weights for decoding (see {@link #decodeWeights(long)}): per layer q, k, v stacked, o, gate
     * and up stacked, down; and the head.
     */
    public static final class DecodeWeights {
        static final int QKV = 0;
        static final int O = 1;
        static final int GATE_UP = 2;
        static final int DOWN = 3;
        private final PackedWeight[][] layers; // [layer][QKV, O, GATE_UP, DOWN], entries null where weights stay plain
        private final PackedWeight head;
        private final List<Tensor> sources;    // the weights and biases packed
        private final long[] versions;         // their version counters when packed
        /** How many forwards of more than one position per row (prefills) ran on these weights (tests). */
        final java.util.concurrent.atomic.AtomicInteger prefills = new java.util.concurrent.atomic.AtomicInteger();

        private DecodeWeights(PackedWeight[][] layers, PackedWeight head, List<Tensor> sources) {
            this.layers = layers;
            this.head = head;
            this.sources = sources;
            this.versions = sources.stream().mapToLong(Tensor::version).toArray();
        }

        /** The packed weight of projection {@code which} of layer {@code layer} when it is packed alone (o, down). */
        PackedWeight single(int layer, int which) {
            return which == 3 ? layers[layer][O] : which == 6 ? layers[layer][DOWN] : null;
        }

        /**
         * Whether every projection is packed and serves products of {@code rows} rows ({@link
         * PackedWeight#serves}): else a pass of that many rows takes the plain weights, as a BLAS section
         * where that applies (a float32 projection left plain in a pass on packed weights would run on
         * one OpenBLAS thread).
         */
        boolean serves(long rows) {
            for (PackedWeight[] layer : layers) {
                for (PackedWeight w : layer) {
                    if (w == null || !w.serves(rows)) {
                        return false;
                    }
                }
            }
            return true;
        }

        /** Whether no packed weight changed since packing. */
        boolean current() {
            for (int i = 0; i < versions.length; i++) {
                if (sources.get(i).version() != versions[i]) {
                    return false;
                }
            }
            return true;
        }

        /** Frees the packed copies (only the model that made them does). */
        private void close() {
            for (PackedWeight[] layer : layers) {
                if (layer != null) {
                    for (PackedWeight w : layer) {
                        if (w != null) {
                            w.close();
                        }
                    }
                }
            }
            head.close();
        }
    }

    /**
     * {@code q * cos + rotate_half(q) * sin}, rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2]),
     * computed as {@code q * cos + roll(q, D/2) * sin±} with the signed table {@code sin± =
     * cat(-sin[..., :D/2], sin[..., D/2:])} ({@link #rotaryTables}): the same products, the sign moved
     * from one factor to the other (exact), in four elementwise operations (a 0.5B bfloat16 decoding
     * step spent 5.5 ms in the {@code [D, D]} signed-permutation product this replaced).
     */
    private static Tensor rotate(Tensor x, Tensor cos, Tensor signedSin) {
        return x.mul(cos).add(x.roll(x.size(-1) / 2, -1).mul(signedSin));
    }

    /**
     * Rotary tables {@code [N, D]} covering positions {@code 0..N-1}, N >= {@code needed} (grown by
     * doubling): {@code freqs = float32(pos) * inv_freq; emb = cat(freqs, freqs);} cos/sin of emb
     * computed in float32 and cast to the model dtype, as Hugging Face computes them per call; the sin
     * table's first half negated, for {@link #rotate}. Padding positions are 1, so every position id
     * is below N.
     */
    private synchronized Tensor[] rotaryTables(long needed) {
        if (cosTable == null || cosTable.size(0) < needed) {
            long n = Math.max(64, Long.highestOneBit(Math.max(needed, 1) - 1) << 1);
            try (Scope s = Scope.open()) {
                Tensor freqs = Tensor.arangeOf(n, device).toFloat().unsqueeze(-1).mul(inverseFrequencies.view(1, -1));
                Tensor emb = Tensor.cat(List.of(freqs, freqs), -1); // [N, D] float32
                Tensor newCos = emb.cos().to(dtype()).keep();
                Tensor sin = freqs.sin();
                Tensor newSin = Tensor.cat(List.of(sin.neg(), sin), -1).to(dtype()).keep();
                if (cosTable != null) {
                    cosTable.close();
                    sinTable.close();
                }
                cosTable = newCos;
                sinTable = newSin;
            }
        }
        return new Tensor[] {cosTable, sinTable};
    }

    /** {@code [S, past+S]}: query i (absolute past+i) may see key j iff j <= past+i. */
    private Tensor causalMask(int past, long s) {
        Tensor[] idx = keyAndQueryIndices(past, s);
        return idx[0].lt(idx[1].add(1));
    }

    /** Key positions {@code [1, past+S]} and absolute query positions {@code [S, 1]}. */
    private Tensor[] keyAndQueryIndices(int past, long s) {
        long total = past + s;
        return new Tensor[] {Tensor.arangeOf(total, device).view(1, total), Tensor.arangeOf(s, device).add(past).view(s, 1)};
    }

    /**
     * Boolean {@code [B, 1, S, past+S]}: causal and key not padding; each query may always see
     * itself, so rows of padding queries are never empty (their outputs are unused but stay finite).
     */
    private Tensor buildMask(Tensor attentionMask, int past, long s) {
        long total = past + s;
        if (attentionMask.size(1) != total) {
            throw new IllegalArgumentException("attention mask covers " + attentionMask.size(1)
                    + " positions but past + current = " + total);
        }
        Tensor[] idx = keyAndQueryIndices(past, s);
        Tensor causal = idx[0].lt(idx[1].add(1)).unsqueeze(0).unsqueeze(0);  // [1, 1, S, T]
        Tensor self = idx[0].eq(idx[1]).unsqueeze(0).unsqueeze(0);          // [1, 1, S, T]
        Tensor keyValid = attentionMask.ne(0).unsqueeze(1).unsqueeze(1);     // [B, 1, 1, T]
        return causal.logicalAnd(keyValid).logicalOr(self);
    }

    @Override
    public void close() {
        if (batch != null) {
            batch.close();
        }
        if (!view) {
            releaseDecodeWeights();
            parameters.values().forEach(Tensor::close);
            inverseFrequencies.close();
        }
        if (headGrad != null) {
            headGrad.close();
        }
        if (headLogits != null) {
            headLogits.close();
        }
        if (cosTable != null) {
            cosTable.close();
            sinTable.close();
        }
    }
}
