package comlrl.generation;

import java.util.List;

/**
 * The Hugging Face logits processors beyond temperature, top-k and top-p that a model's
 * {@code generation_config.json} may switch on, with transformers' values that switch each one off.
 * {@link Sampler} applies them in {@code generate}'s order:
 * <pre>
 *   repetition_penalty → no_repeat_ngram_size → bad_words_ids → min_length → min_new_tokens
 *   → forced_bos_token_id → forced_eos_token_id → remove_invalid_values → suppress_tokens
 *   → begin_suppress_tokens
 *   (sampling only:) temperature → top_k → top_p → min_p → typical_p → epsilon_cutoff → eta_cutoff
 * </pre>
 * The processors change which token is chosen, never the log-probabilities recorded for training
 * (those of the unprocessed temperature-1 policy).
 *
 * @param repetitionPenalty θ: a score s of a token already in the sequence (prompt included) becomes
 *        s/θ when s &gt; 0, s·θ otherwise; 1 disables; &gt; 0
 * @param noRepeatNgramSize n: a token that would repeat an n-gram of the sequence is banned; 0 disables
 * @param badWordsIds token sequences never to produce (the last token of each is banned when the
 *        sequence ends with the others); end-of-sequence ids alone are ignored, as in transformers
 * @param minLength end-of-sequence ids are banned while the (padded) sequence is shorter; 0 disables
 * @param minNewTokens end-of-sequence ids are banned while fewer tokens were generated; 0 disables
 * @param forcedBosTokenId the only token allowed when the sequence has length 1, or null
 * @param forcedEosTokenId the only token(s) allowed at the last step ({@code max_length − 1}), or null
 * @param removeInvalidValues NaN scores become 0 and ±inf the float range's ends
 * @param suppressTokens ids never produced
 * @param beginSuppressTokens ids not produced as the first new token
 * @param minP keep tokens with probability ≥ minP · (largest probability); null disables
 * @param typicalP locally typical sampling mass; 1 disables
 * @param epsilonCutoff keep tokens with probability ≥ ε; 0 disables
 * @param etaCutoff keep tokens with probability ≥ min(η, √η·e^{−entropy}); 0 disables
 */
public record LogitsProcessing(double repetitionPenalty, int noRepeatNgramSize, List<List<Long>> badWordsIds,
        int minLength, int minNewTokens, Long forcedBosTokenId, List<Long> forcedEosTokenId,
        boolean removeInvalidValues, List<Long> suppressTokens, List<Long> beginSuppressTokens, Double minP,
        double typicalP, double epsilonCutoff, double etaCutoff) {

    /** Everything off: only temperature, top-k and top-p act. */
    public static final LogitsProcessing NONE = builder().build();

    public LogitsProcessing {
        badWordsIds = badWordsIds == null ? List.of() : badWordsIds.stream().map(List::copyOf).toList();
        forcedEosTokenId = forcedEosTokenId == null ? List.of() : List.copyOf(forcedEosTokenId);
        suppressTokens = suppressTokens == null ? List.of() : List.copyOf(suppressTokens);
        beginSuppressTokens = beginSuppressTokens == null ? List.of() : List.copyOf(beginSuppressTokens);
        check(repetitionPenalty > 0 && Double.isFinite(repetitionPenalty),
                "repetition_penalty must be a finite number > 0 (1.0 disables it), got " + repetitionPenalty);
        check(noRepeatNgramSize >= 0, "no_repeat_ngram_size must be >= 0 (0 disables it), got " + noRepeatNgramSize);
        check(minLength >= 0, "min_length must be >= 0, got " + minLength);
        check(minNewTokens >= 0, "min_new_tokens must be >= 0, got " + minNewTokens);
        check(minP == null || (minP >= 0 && minP <= 1), "min_p must be in [0, 1], got " + minP);
        check(typicalP > 0 && typicalP <= 1, "typical_p must be in (0, 1] (1 disables it), got " + typicalP);
        check(epsilonCutoff >= 0 && epsilonCutoff < 1, "epsilon_cutoff must be in [0, 1) (0 disables it), got " + epsilonCutoff);
        check(etaCutoff >= 0 && etaCutoff < 1, "eta_cutoff must be in [0, 1) (0 disables it), got " + etaCutoff);
        for (List<Long> word : badWordsIds) {
            check(!word.isEmpty(), "bad_words_ids must hold non-empty lists of token ids, got an empty one");
        }
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Whether every processor is off. */
    public boolean isNone() {
        return equals(NONE);
    }

    boolean usesRepetitionPenalty() {
        return repetitionPenalty != 1.0;
    }

    /** Whether a processor needs the token sequence itself (not only the step). */
    boolean needsSequence() {
        return noRepeatNgramSize > 0 || badWordsIds.stream().anyMatch(w -> w.size() > 1);
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.repetitionPenalty = repetitionPenalty;
        b.noRepeatNgramSize = noRepeatNgramSize;
        b.badWordsIds = badWordsIds;
        b.minLength = minLength;
        b.minNewTokens = minNewTokens;
        b.forcedBosTokenId = forcedBosTokenId;
        b.forcedEosTokenId = forcedEosTokenId;
        b.removeInvalidValues = removeInvalidValues;
        b.suppressTokens = suppressTokens;
        b.beginSuppressTokens = beginSuppressTokens;
        b.minP = minP;
        b.typicalP = typicalP;
        b.epsilonCutoff = epsilonCutoff;
        b.etaCutoff = etaCutoff;
        return b;
    }

    /** Builds a {@link LogitsProcessing}; every setting starts switched off. */
    public static final class Builder {
        private double repetitionPenalty = 1.0;
        private int noRepeatNgramSize;
        private List<List<Long>> badWordsIds = List.of();
        private int minLength;
        private int minNewTokens;
        private Long forcedBosTokenId;
        private List<Long> forcedEosTokenId = List.of();
        private boolean removeInvalidValues;
        private List<Long> suppressTokens = List.of();
        private List<Long> beginSuppressTokens = List.of();
        private Double minP;
        private double typicalP = 1.0;
        private double epsilonCutoff;
        private double etaCutoff;

        private Builder() {
        }

        public Builder repetitionPenalty(double v) {
            repetitionPenalty = v;
            return this;
        }

        public Builder noRepeatNgramSize(int v) {
            noRepeatNgramSize = v;
            return this;
        }

        public Builder badWordsIds(List<List<Long>> v) {
            badWordsIds = v;
            return this;
        }

        public Builder minLength(int v) {
            minLength = v;
            return this;
        }

        public Builder minNewTokens(int v) {
            minNewTokens = v;
            return this;
        }

        public Builder forcedBosTokenId(Long v) {
            forcedBosTokenId = v;
            return this;
        }

        public Builder forcedEosTokenId(List<Long> v) {
            forcedEosTokenId = v;
            return this;
        }

        public Builder removeInvalidValues(boolean v) {
            removeInvalidValues = v;
            return this;
        }

        public Builder suppressTokens(List<Long> v) {
            suppressTokens = v;
            return this;
        }

        public Builder beginSuppressTokens(List<Long> v) {
            beginSuppressTokens = v;
            return this;
        }

        public Builder minP(Double v) {
            minP = v;
            return this;
        }

        public Builder typicalP(double v) {
            typicalP = v;
            return this;
        }

        public Builder epsilonCutoff(double v) {
            epsilonCutoff = v;
            return this;
        }

        public Builder etaCutoff(double v) {
            etaCutoff = v;
            return this;
        }

        public LogitsProcessing build() {
            return new LogitsProcessing(repetitionPenalty, noRepeatNgramSize, badWordsIds, minLength, minNewTokens,
                    forcedBosTokenId, forcedEosTokenId, removeInvalidValues, suppressTokens, beginSuppressTokens, minP,
                    typicalP, epsilonCutoff, etaCutoff);
        }
    }
}
