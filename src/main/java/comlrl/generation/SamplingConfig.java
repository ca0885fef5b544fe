package comlrl.generation;

import java.util.List;

/**
 * How tokens are chosen, applied in Hugging Face's order: the {@link LogitsProcessing} processors,
 * then (sampling only) temperature, top-k, top-p and the other warpers, then a draw from the
 * renormalised distribution (or the arg-max when greedy). These are the values used as they are;
 * {@link GenerationSettings} resolves them the way transformers' {@code generate} does (call
 * arguments, then the model's generation config, then transformers' defaults).
 *
 * @param temperature logits are divided by it; > 0 (ignored when greedy)
 * @param topK keep only the k most likely tokens; null or 0 disables
 * @param topP keep the smallest set of most likely tokens whose probability reaches p; null or 1 disables
 * @param greedy always take the most likely token
 * @param maxNewTokens generation length cap; >= 1
 * @param numReturnSequences samples per prompt (the G of a group), generated in one batch; >= 1
 * @param processing the other logits processors ({@link LogitsProcessing#NONE}: none)
 * @param stopStrings a sequence ends once its decoded completion contains one of these (transformers'
 *        {@code stop_strings}; {@link StopStrings}); empty: none. They never change which token is
 *        chosen, only where a completion ends ({@link FinishReason#STOP})
 */
public record SamplingConfig(double temperature, Integer topK, Double topP, boolean greedy, int maxNewTokens,
        int numReturnSequences, LogitsProcessing processing, List<String> stopStrings) {

    /** No stop strings. */
    public SamplingConfig(double temperature, Integer topK, Double topP, boolean greedy, int maxNewTokens,
            int numReturnSequences, LogitsProcessing processing) {
        this(temperature, topK, topP, greedy, maxNewTokens, numReturnSequences, processing, List.of());
    }

    /** Only temperature, top-k and top-p: no other logits processor. */
    public SamplingConfig(double temperature, Integer topK, Double topP, boolean greedy, int maxNewTokens,
            int numReturnSequences) {
        this(temperature, topK, topP, greedy, maxNewTokens, numReturnSequences, LogitsProcessing.NONE);
    }

    public SamplingConfig {
        if (processing == null) {
            processing = LogitsProcessing.NONE;
        }
        stopStrings = stopStrings == null ? List.of() : List.copyOf(stopStrings); // refuses null entries
        for (String stop : stopStrings) {
            if (stop.isEmpty()) {
                throw new IllegalArgumentException("stop_strings must hold non-empty strings, got " + stopStrings);
            }
        }
        if (!greedy && !(temperature > 0)) {
            throw new IllegalArgumentException("temperature must be > 0 for sampling, got " + temperature
                    + " (use greedy decoding instead of temperature 0)");
        }
        if (topK != null && topK < 0) {
            throw new IllegalArgumentException("top_k must be >= 0 (0 or null disables), got " + topK);
        }
        if (topP != null && !(topP > 0 && topP <= 1)) {
            throw new IllegalArgumentException("top_p must be in (0, 1], got " + topP);
        }
        if (maxNewTokens < 1) {
            throw new IllegalArgumentException("max_new_tokens must be >= 1, got " + maxNewTokens);
        }
        if (numReturnSequences < 1) {
            throw new IllegalArgumentException("num_return_sequences must be >= 1, got " + numReturnSequences);
        }
    }

    public static SamplingConfig greedy(int maxNewTokens) {
        return new SamplingConfig(1.0, null, null, true, maxNewTokens, 1);
    }

    public static SamplingConfig sample(double temperature, Integer topK, Double topP, int maxNewTokens,
            int numReturnSequences) {
        return new SamplingConfig(temperature, topK, topP, false, maxNewTokens, numReturnSequences);
    }

    public SamplingConfig withNumReturnSequences(int n) {
        return new SamplingConfig(temperature, topK, topP, greedy, maxNewTokens, n, processing, stopStrings);
    }

    public SamplingConfig withProcessing(LogitsProcessing p) {
        return new SamplingConfig(temperature, topK, topP, greedy, maxNewTokens, numReturnSequences, p, stopStrings);
    }

    /** The same settings ending sequences at {@code stops} (null or empty: no stop strings). */
    public SamplingConfig withStopStrings(List<String> stops) {
        return new SamplingConfig(temperature, topK, topP, greedy, maxNewTokens, numReturnSequences, processing, stops);
    }

    boolean usesTopK() {
        return topK != null && topK > 0;
    }

    boolean usesTopP() {
        return topP != null && topP < 1.0;
    }
}
