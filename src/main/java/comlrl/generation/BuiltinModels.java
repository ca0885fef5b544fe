package comlrl.generation;

import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.model.ModelPresets;
import comlrl.model.SequenceClassifier;
import comlrl.model.io.ModelDirs;
import comlrl.model.io.StaleTemps;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tokenizer.TinyTokenizerFactory;
import comlrl.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Built-in random-weight models that need no download: {@code builtin:tiny}, {@code builtin:small},
 * optionally with a family, e.g. {@code builtin:tiny-llama}. They are written once into
 * {@code $COMLRL_HOME/builtin/} (default {@code ~/.cache/comlrl}) with a fixed seed, so every run
 * starts from the same weights.
 */
public final class BuiltinModels {
    public static final String PREFIX = "builtin:";

    private BuiltinModels() {
    }

    public static boolean isBuiltin(String source) {
        return source != null && source.startsWith(PREFIX);
    }

    /**
     * The directory of built-in model {@code source}, writing it first when absent (a write that fails
     * leaves nothing behind; what writers killed mid-write left in the cache is removed first).
     */
    public static Path ensure(String source) {
        return ensure(source, home());
    }

    /** {@link #ensure(String)} with the cache under {@code home}. */
    static Path ensure(String source, Path home) {
        String name = source.substring(PREFIX.length()).toLowerCase(Locale.ROOT);
        String[] parts = name.split("-", 2);
        String preset = parts[0];
        String arch = parts.length > 1 ? parts[1] : "qwen2";
        Path dir = home.resolve("builtin").resolve(preset + "-" + arch + "-seed0");
        // what writers killed mid-write left (dead process ids only): built-in models, their configs
        StaleTemps.cleanQuietly(dir.getParent(), null);
        if (Files.isRegularFile(dir.resolve("model.safetensors"))) {
            StaleTemps.cleanQuietly(dir, "config.json");
            refreshConfig(dir);
            return dir;
        }
        Path tmp = dir.resolveSibling(StaleTemps.tmpName(dir.getFileName().toString()));
        try {
            write(arch, preset, 0, DType.F32, tmp);
        } catch (RuntimeException | Error e) {
            ModelDirs.deleteRecursively(tmp); // a half-written model is never read: leave none behind
            throw e;
        }
        try {
            Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            if (!Files.isRegularFile(dir.resolve("model.safetensors"))) {
                throw new UncheckedIOException("Cannot create built-in model " + dir + ": " + e.getMessage(), e);
            }
            ModelDirs.deleteRecursively(tmp); // another process won the race: ours is not needed
        }
        return dir;
    }

    /** Writes a random-weight model of {@code preset} in family {@code arch} with the tiny tokenizer. */
    /**
     * Rewrites the {@code config.json} of a built-in written by an earlier version that kept
     * {@code -1} for a missing special id (transformers and peft warn on it; we write {@code null}
     * now); the weights and every other value stay as they are.
     */
    static void refreshConfig(Path dir) {
        Path file = dir.resolve("config.json");
        try {
            String text = Files.readString(file);
            if (text.matches("(?s).*\"(bos|pad|eos)_token_id\"\\s*:\\s*-1\\b.*")) {
                String fresh = comlrl.model.ModelConfig.load(dir).toJson();
                Path tmp = dir.resolve(StaleTemps.tmpName("config.json"));
                Files.writeString(tmp, fresh);
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            // a read-only cache keeps working as it is
        }
    }

    public static int write(String arch, String preset, long seed, DType dtype, Path out) {
        int vocab = TinyTokenizerFactory.write(out);
        try (Tokenizer tokenizer = Tokenizer.load(out)) {
            long eos = tokenizer.eosTokenId();
            ModelConfig config = ModelPresets.config(arch, preset, vocab, -1, eos, dtype.torchName());
            try (CausalLm lm = new CausalLm(out.toString(), DecoderLm.random(config, dtype, Device.CPU, seed),
                    Tokenizer.load(out), GenerationConfig.of(-1, eos, tokenizer.padTokenId()))) {
                lm.save(out);
            }
        }
        return vocab;
    }

    /**
     * Writes a random-weight sequence-classification model ({@code <Family>ForSequenceClassification},
     * {@code numLabels} labels, {@code pad_token_id} the tiny tokenizer's pad) of {@code preset} in
     * family {@code arch}, with the tiny tokenizer, as transformers' {@code save_pretrained} lays it
     * out ({@code config.json}, {@code model.safetensors} with {@code model.*} and {@code score.weight},
     * tokenizer files).
     */
    public static int writeSequenceClassifier(String arch, String preset, int numLabels, long seed, DType dtype,
            Path out) {
        int vocab = TinyTokenizerFactory.write(out);
        try (Tokenizer tokenizer = Tokenizer.load(out)) {
            ModelConfig causal = ModelPresets.config(arch, preset, vocab, -1, tokenizer.eosTokenId(), dtype.torchName());
            ModelConfig config = SequenceClassifier.classifierConfig(causal, numLabels, tokenizer.padTokenId());
            try (SequenceClassifier model = SequenceClassifier.random(config, dtype, Device.CPU, seed)) {
                ModelDirs.replace(out, fresh -> {
                    model.writeFiles(fresh, CausalLm.MAX_SHARD_BYTES);
                    tokenizer.save(fresh);
                });
            }
        }
        return vocab;
    }

    /** {@code $COMLRL_HOME} (default {@code ~/.cache/comlrl}): built-in models and helper files. */
    public static Path home() {
        String h = System.getenv("COMLRL_HOME");
        return h != null && !h.isBlank() ? Path.of(h) : Path.of(System.getProperty("user.home"), ".cache", "comlrl");
    }
}
