package comlrl.generation;

import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.model.io.ModelDirs;
import comlrl.model.io.ModelSources;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A causal language model as users know it from Hugging Face: weights, tokenizer and generation
 * config loaded from one model directory (or hub id), saved back in the same layout.
 * Owns the model's native memory and the tokenizer: close it.
 */
public final class CausalLm implements AutoCloseable {
    /** Shards written by {@link #save(Path)} are at most this large (as transformers' default). */
    public static final long MAX_SHARD_BYTES = 5L * 1000 * 1000 * 1000;

    private final String source;
    private final DecoderLm model;
    private final Tokenizer tokenizer;
    private final GenerationConfig generationConfig;
    /** Whether closing this closes the tokenizer (a LoRA agent's view shares its base's). */
    private final boolean ownsTokenizer;
    /** A LoRA agent: save the adapter folded into a full model instead of a PEFT adapter directory. */
    private final boolean saveMerged;
    /** Whether closing this closes the model (not for {@link #withTokenizer}, which shares it). */
    private final boolean ownsModel;

    public CausalLm(String source, DecoderLm model, Tokenizer tokenizer, GenerationConfig generationConfig) {
        this(source, model, tokenizer, generationConfig, true, false, true);
    }

    private CausalLm(String source, DecoderLm model, Tokenizer tokenizer, GenerationConfig generationConfig,
            boolean ownsTokenizer, boolean saveMerged, boolean ownsModel) {
        this.source = source;
        this.model = model;
        this.tokenizer = tokenizer;
        this.generationConfig = generationConfig;
        this.ownsTokenizer = ownsTokenizer;
        this.saveMerged = saveMerged;
        this.ownsModel = ownsModel;
    }

    /**
     * This model with {@code other} as its tokenizer (an agent given its own tokenizer): it shares the
     * model and keeps how it saves (a LoRA agent stays one); closing it closes neither.
     */
    public CausalLm withTokenizer(Tokenizer other) {
        return new CausalLm(source, model, other, generationConfig, false, saveMerged, false);
    }

    /**
     * A LoRA agent on this model: {@code adapter} over this model's frozen weights
     * ({@link DecoderLm#withAdapter}), sharing its tokenizer and generation config. {@link #save}
     * writes it as a PEFT adapter directory (with the tokenizer), or with {@code saveMerged} as a full
     * model with the adapter folded in. Closing it closes only the view; this model and the adapter
     * stay open.
     */
    public CausalLm withAdapter(comlrl.model.LoraAdapter adapter, boolean saveMerged) {
        return new CausalLm(source, model.withAdapter(adapter), tokenizer, generationConfig, false, saveMerged, true);
    }

    /**
     * What a PEFT adapter of this model names as {@code base_model_name_or_path}: the hub id or
     * directory it was loaded from; for a built-in model, the local directory it was written to (so
     * that Python's peft finds it).
     */
    public String baseModelNameOrPath() {
        return BuiltinModels.isBuiltin(source) && tokenizer.directory() != null
                ? tokenizer.directory().toAbsolutePath().toString() : source;
    }

    /**
     * Loads a model directory, a hub id (resolved through the Hugging Face cache) or a built-in
     * model ({@code builtin:tiny}, see {@link BuiltinModels}). The special-token ids of config.json
     * and generation_config.json must lie in {@code [0, vocab_size)} (or be null / -1 for none);
     * they are checked before the weights load.
     *
     * @param dtype weights' dtype, or null for the config's {@code torch_dtype}
     */
    public static CausalLm load(String source, DType dtype, Device device) {
        Engine.checkDevice(device);
        Path dir = BuiltinModels.isBuiltin(source) ? BuiltinModels.ensure(source) : ModelSources.resolve(source);
        ModelConfig config = ModelConfig.load(dir);
        Tokenizer tokenizer = Tokenizer.load(dir);
        try {
            requireVocabularyFits(tokenizer, config, dir);
            GenerationConfig gen = GenerationConfig.load(dir);
            ModelConfig.checkSpecialTokenIds(gen.raw(), dir.resolve(GenerationConfig.FILE).toString(), config.vocabSize());
            DecoderLm model = DecoderLm.load(dir, config, dtype == null ? config.dtype() : dtype, device);
            return new CausalLm(source, model, tokenizer, gen);
        } catch (RuntimeException e) {
            tokenizer.close();
            throw e;
        }
    }

    /**
     * Every id the tokenizer can produce (its highest id + 1, added tokens included) must index a
     * row of the embedding ({@code vocab_size} rows); more rows than ids is normal (transformers
     * pads the embedding to a multiple of 64 or 128).
     */
    public static void requireVocabularyFits(Tokenizer tokenizer, ModelConfig config, Path dir) {
        if (tokenizer.vocabSize() > config.vocabSize()) {
            throw new IllegalArgumentException(dir + ": the tokenizer has " + tokenizer.vocabSize() + " token ids "
                    + "(0.." + (tokenizer.vocabSize() - 1) + ", added tokens included) but config.json's vocab_size "
                    + "gives the embedding only " + config.vocabSize() + " rows, so ids " + config.vocabSize()
                    + " and above would index past it. Use the tokenizer that belongs to this model, or resize the "
                    + "embeddings (transformers: model.resize_token_embeddings(len(tokenizer))) and save it again.");
        }
    }

    /** Where this model was loaded from (a path or hub id), for provenance. */
    public String source() {
        return source;
    }

    public DecoderLm model() {
        return model;
    }

    public Tokenizer tokenizer() {
        return tokenizer;
    }

    public GenerationConfig generationConfig() {
        return generationConfig;
    }

    /**
     * Ids that end generation, as Hugging Face's {@code generate} picks them: generation_config's
     * {@code eos_token_id} (one id or a list), else config.json's, else the tokenizer's eos.
     */
    public Set<Long> eosIds() {
        Set<Long> ids = new LinkedHashSet<>(generationConfig.eosTokenIds());
        if (ids.isEmpty()) {
            ids.addAll(model.config().eosTokenIds());
        }
        if (ids.isEmpty()) {
            ids.add(tokenizer.eosTokenId());
        }
        return ids;
    }

    /** The pad id (the tokenizer's pad, which is its eos when the model defines none). */
    public long padId() {
        return tokenizer.padTokenId();
    }

    public Generator generator() {
        return new Generator(model, eosIds(), padId(), ids -> tokenizer.decode(ids, true));
    }

    /** Token ids of {@code text} with the tokenizer's default special tokens (as {@code tokenizer(text)}). */
    public long[] encode(String text) {
        return tokenizer.encode(text, true);
    }

    /** Samples completions for text prompts. */
    public List<List<Completion>> generate(List<String> prompts, SamplingConfig config, long seed) {
        return generator().generate(prompts.stream().map(this::encode).toList(), config, seed);
    }

    /**
     * Writes a Hugging Face model directory: {@code config.json}, safetensors weights (tied head
     * omitted), tokenizer files and {@code generation_config.json}; for a LoRA agent
     * ({@link #withAdapter}) its PEFT adapter directory ({@code adapter_config.json},
     * {@code adapter_model.safetensors}) and the tokenizer files, or the merged full model. The whole directory is written
     * aside and swapped into place ({@link ModelDirs#replace}), so a failure (a full disk) leaves a
     * previous model at {@code dir} whole; saving into the directory the model was loaded from is safe.
     *
     * @throws java.io.UncheckedIOException naming the directory and the cause when writing fails
     */
    public void save(Path dir) {
        if (model.adapter() != null && !saveMerged) {
            ModelDirs.replace(dir, fresh -> {
                model.adapter().writePeftFiles(fresh, baseModelNameOrPath());
                tokenizer.save(fresh);
            });
            return;
        }
        ModelDirs.replace(dir, fresh -> {
            if (model.adapter() != null) {
                try (DecoderLm merged = model.mergeAdapter()) {
                    merged.writeFiles(fresh, MAX_SHARD_BYTES);
                }
            } else {
                model.writeFiles(fresh, MAX_SHARD_BYTES);
            }
            tokenizer.save(fresh);
            generationConfig.save(fresh);
        });
    }

    @Override
    public void close() {
        if (ownsModel) {
            model.close();
        }
        if (ownsTokenizer) {
            tokenizer.close();
        }
    }
}
