package comlrl.generation;

import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.model.io.ModelSources;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Files;
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

    public CausalLm(String source, DecoderLm model, Tokenizer tokenizer, GenerationConfig generationConfig) {
        this.source = source;
        this.model = model;
        this.tokenizer = tokenizer;
        this.generationConfig = generationConfig;
    }

    /**
     * Loads a model directory, a hub id (resolved through the Hugging Face cache) or a built-in
     * model ({@code builtin:tiny}, see {@link BuiltinModels}).
     *
     * @param dtype weights' dtype, or null for the config's {@code torch_dtype}
     */
    public static CausalLm load(String source, DType dtype, Device device) {
        Engine.checkDevice(device);
        Path dir = BuiltinModels.isBuiltin(source) ? BuiltinModels.ensure(source) : ModelSources.resolve(source);
        ModelConfig config = ModelConfig.load(dir);
        Tokenizer tokenizer = Tokenizer.load(dir);
        GenerationConfig gen = GenerationConfig.load(dir);
        DecoderLm model = DecoderLm.load(dir, config, dtype == null ? config.dtype() : dtype, device);
        return new CausalLm(source, model, tokenizer, gen);
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
     * omitted), tokenizer files and {@code generation_config.json}.
     */
    public void save(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalStateException("Cannot create " + dir + ": " + e.getMessage(), e);
        }
        model.save(dir, MAX_SHARD_BYTES);
        tokenizer.save(dir);
        generationConfig.save(dir);
    }

    @Override
    public void close() {
        model.close();
        tokenizer.close();
    }
}
