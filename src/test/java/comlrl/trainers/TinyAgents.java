package comlrl.trainers;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.generation.CausalLm;
import comlrl.generation.GenerationConfig;
import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tokenizer.TinyTokenizerFactory;
import comlrl.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Random-weight agent directories for trainer tests, written as {@code bin/comlrl init-model} does
 * (tiny tokenizer + config + random weights + {@code CausalLm.save}), but smaller than the "tiny"
 * preset so a training step takes milliseconds: E=32, L=2, H=4, K=2, MLP 64, V=515 (the tiny
 * tokenizer's vocabulary).
 */
public final class TinyAgents {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TinyAgents() {
    }

    /** Writes a model directory into {@code dir} with weights from {@code seed}; returns {@code dir}. */
    public static Path create(Path dir, long seed) {
        return create(dir, seed, List.of());
    }

    /**
     * As {@link #create(Path, long)}, with {@code extraEosIds} added to {@code generation_config.json}'s
     * {@code eos_token_id}: sampling one of them ends a completion, so completions of one group get
     * different lengths (and scoring them together needs padding).
     */
    public static Path create(Path dir, long seed, List<Long> extraEosIds) {
        return write(dir, seed, extraEosIds, false, false);
    }

    /**
     * As {@link #create(Path, long)}, wide enough (E = 512, MLP 1024) for its projections and head to be
     * packed for decoding ({@link comlrl.model.DecoderLm#decodeWeights}); a step still takes milliseconds.
     */
    public static Path createWide(Path dir, long seed) {
        return write(dir, seed, List.of(), false, true);
    }

    /**
     * As {@link #create(Path, long, List)}, a Llama agent (no q/k/v biases, Llama's rope base) whose
     * vocabulary is the tiny tokenizer's padded with {@value #LLAMA_PADDING} unused rows, as real
     * checkpoints pad theirs: next to a {@link #create} agent, the other family and another
     * vocabulary size (a heterogeneous team).
     */
    public static Path createLlama(Path dir, long seed, List<Long> extraEosIds) {
        return write(dir, seed, extraEosIds, true, false);
    }

    /**
     * A heterogeneous team in {@code dir}: a {@link #create} (Qwen2) agent and a {@link #createLlama}
     * agent, weights from {@code seed} and {@code seed + 1}, where every printable ASCII byte also
     * ends a completion (completions of different lengths, so the rewards tell candidates apart).
     */
    public static List<Path> qwenAndLlama(Path dir, long seed) {
        List<Long> printable = java.util.stream.LongStream.rangeClosed(33, 126).boxed().toList();
        return List.of(create(dir.resolve("qwen"), seed, printable), createLlama(dir.resolve("llama"), seed + 1, printable));
    }

    /**
     * Two {@link #create} agents in {@code dir} ({@code agent} and {@code other}), weights from {@code seed}
     * and {@code seed + 1}, where every printable ASCII byte also ends a completion.
     */
    public static List<Path> pair(Path dir, long seed) {
        List<Long> printable = java.util.stream.LongStream.rangeClosed(33, 126).boxed().toList();
        return List.of(create(dir.resolve("agent"), seed, printable), create(dir.resolve("other"), seed + 1, printable));
    }

    /** Embedding rows of a {@link #createLlama} agent beyond the tokenizer's ids. */
    public static final int LLAMA_PADDING = 61;

    private static Path write(Path dir, long seed, List<Long> extraEosIds, boolean llama, boolean wide) {
        TinyTokenizerFactory.write(dir);
        try (Tokenizer tokenizer = Tokenizer.load(dir)) {
            long eos = tokenizer.eosTokenId();
            ObjectNode json = configJson(eos);
            if (wide) {
                json.put("hidden_size", 512);
                json.put("intermediate_size", 1024);
            }
            if (llama) {
                json.put("model_type", "llama");
                json.putArray("architectures").add("LlamaForCausalLM");
                json.put("vocab_size", TinyTokenizerFactory.VOCAB_SIZE + LLAMA_PADDING);
                json.put("rope_theta", 500000.0);
                json.put("attention_bias", false);
            }
            ModelConfig config = ModelConfig.fromJson(json, "tiny test agent");
            List<Long> eosIds = new ArrayList<>();
            eosIds.add(eos);
            eosIds.addAll(extraEosIds);
            ObjectNode raw = JSON.createObjectNode();
            ArrayNode ids = raw.putArray("eos_token_id");
            eosIds.forEach(ids::add);
            raw.put("pad_token_id", tokenizer.padTokenId());
            GenerationConfig generation = new GenerationConfig(eosIds, tokenizer.padTokenId(), -1, raw);
            try (CausalLm lm = new CausalLm(dir.toString(), DecoderLm.random(config, DType.F32, Device.CPU, seed),
                    Tokenizer.load(dir), generation)) {
                lm.save(dir);
            }
        }
        return dir;
    }

    /** Loads an agent directory on the CPU in float32. */
    public static CausalLm load(Path dir) {
        return CausalLm.load(dir.toString(), DType.F32, Device.CPU);
    }

    private static ObjectNode configJson(long eos) {
        ObjectNode n = JSON.createObjectNode();
        n.put("model_type", "qwen2");
        n.putArray("architectures").add("Qwen2ForCausalLM");
        n.put("vocab_size", TinyTokenizerFactory.VOCAB_SIZE);
        n.put("hidden_size", 32);
        n.put("intermediate_size", 64);
        n.put("num_hidden_layers", 2);
        n.put("num_attention_heads", 4);
        n.put("num_key_value_heads", 2);
        n.put("hidden_act", "silu");
        n.put("max_position_embeddings", 512);
        n.put("rms_norm_eps", 1e-6);
        n.put("rope_theta", 10000.0);
        n.put("tie_word_embeddings", false);
        n.put("torch_dtype", "float32");
        n.put("eos_token_id", eos);
        return n;
    }
}
