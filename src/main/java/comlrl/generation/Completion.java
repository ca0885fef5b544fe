package comlrl.generation;

/**
 * One generated completion.
 *
 * @param promptIds the prompt's token ids (no padding)
 * @param tokenIds generated ids, ending with the EOS token when {@code finishReason == EOS}; no padding
 * @param text the generated ids decoded with special tokens skipped
 * @param logprobs log-probability of each generated token under the model at temperature 1, before
 *        top-k/top-p truncation (same length as {@code tokenIds})
 * @param finishReason why generation stopped
 */
public record Completion(long[] promptIds, long[] tokenIds, String text, double[] logprobs,
        FinishReason finishReason) {

    public int length() {
        return tokenIds.length;
    }

    /** Sum of the per-token log-probabilities. */
    public double logprobSum() {
        double s = 0;
        for (double l : logprobs) {
            s += l;
        }
        return s;
    }
}
