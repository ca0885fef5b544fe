package comlrl.generation;

import comlrl.model.DecoderLm;
import comlrl.model.KvCache;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.PackedWeight;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * Autoregressive sampling with a preallocated KV cache, in inference mode.
 *
 * <p>Each prompt is prefilled once; its cache rows are then copied for the G samples of its group,
 * and all B·G sequences decode together, one forward per new token. A sequence that produced an
 * end-of-sequence id is finished: it receives the pad id from then on (as Hugging Face does) and
 * those positions are not part of its completion. A sequence whose decoded completion comes to
 * contain one of its stop strings ({@link SamplingConfig#stopStrings()}) ends with the token that
 * completed the match ({@link StopStrings}). Token ids and log-probabilities stay on the device until
 * the end: the only host transfer inside the loop, every {@value #FINISH_CHECK_EVERY} steps, is the
 * "all finished?" flag, or, when a sequence has stop strings, in its place the ids generated since
 * the last check (the stop strings are searched in decoded text, on the host).
 */
public final class Generator {
    private final DecoderLm model;
    private final Set<Long> eosIds;
    private final long padId;
    private final Function<long[], String> decoder;

    /**
     * @param eosIds ids that end a sequence (generation_config's eos ids and the tokenizer's eos)
     * @param padId id given to finished sequences
     * @param decoder ids → text with special tokens skipped
     */
    public Generator(DecoderLm model, Set<Long> eosIds, long padId, Function<long[], String> decoder) {
        if (eosIds.isEmpty()) {
            throw new IllegalArgumentException("Generation needs at least one end-of-sequence id");
        }
        this.model = model;
        this.eosIds = Set.copyOf(eosIds);
        this.padId = padId;
        this.decoder = decoder;
    }

    /**
     * Samples {@code config.numReturnSequences()} completions for each prompt; repeatable for a
     * seed. Sequence j of prompt i draws from the stream {@link #rowSeed(long, int, int)}.
     *
     * @return one list per prompt, G completions each, in sampling order
     */
    public List<List<Completion>> generate(List<long[]> prompts, SamplingConfig config, long seed) {
        int g = config.numReturnSequences();
        long[] seeds = new long[prompts.size() * g];
        for (int i = 0; i < prompts.size(); i++) {
            for (int j = 0; j < g; j++) {
                seeds[i * g + j] = rowSeed(seed, i, j);
            }
        }
        return generate(prompts, config, seeds);
    }

    /**
     * The seed of sequence {@code j} of prompt {@code i} in a call with {@code seed} (SplitMix64
     * mixing, so neighbouring rows get unrelated streams).
     */
    public static long rowSeed(long seed, int prompt, int sample) {
        long z = seed + 0x9E3779B97F4A7C15L * (1 + ((long) prompt << 20) + sample);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Samples with an explicit seed per sequence ({@code rowSeeds[i * G + j]} for sequence j of
     * prompt i): each sequence's tokens depend only on the model, its prompt and its seed, not on
     * the other sequences in the batch.
     */
    public List<List<Completion>> generate(List<long[]> prompts, SamplingConfig config, long[] rowSeeds) {
        int rows = prompts.size() * config.numReturnSequences();
        return generate(prompts, config, rowSeeds, java.util.Collections.nCopies(rows, config.stopStrings()));
    }

    /**
     * {@link #generate(List, SamplingConfig, long[])} with row r's stop strings at {@code rowStops.get(r)}
     * in place of {@code config}'s (a team's agents may each have their own): a row ends where it would
     * alone with those stop strings, and the stop strings change nothing else.
     */
    List<List<Completion>> generate(List<long[]> prompts, SamplingConfig config, long[] rowSeeds,
            List<List<String>> rowStops) {
        int b = prompts.size();
        int g = config.numReturnSequences();
        int rows = b * g;
        if (rowSeeds.length != rows || rowStops.size() != rows) {
            throw new IllegalArgumentException(rowSeeds.length + " row seeds and " + rowStops.size()
                    + " rows' stop strings for " + rows + " sequences");
        }
        checkContext(prompts, config.maxNewTokens());
        List<Rng> rngs = new ArrayList<>();
        if (!config.greedy()) {
            for (long s : rowSeeds) {
                rngs.add(new Rng(s));
            }
        }
        try {
            return generateRows(prompts, config, rngs, new StopStrings(rowStops, eosIds, decoder, config.maxNewTokens()));
        } finally {
            rngs.forEach(Rng::close);
        }
    }

    /**
     * Fails before anything is allocated when the longest prompt plus {@code maxNewTokens} does not
     * fit the model's context ({@code max_position_embeddings}).
     */
    private void checkContext(List<long[]> prompts, int maxNewTokens) {
        int longest = 0;
        for (long[] p : prompts) {
            longest = Math.max(longest, p.length);
        }
        long context = model.config().maxPositionEmbeddings();
        if ((long) longest + maxNewTokens > context) {
            throw new IllegalArgumentException("A prompt of " + longest + " tokens plus max_new_tokens " + maxNewTokens
                    + " exceeds the model's context of " + context + " positions (max_position_embeddings in config.json): "
                    + "lower max_new_tokens or shorten the prompt");
        }
    }

    private List<List<Completion>> generateRows(List<long[]> prompts, SamplingConfig config, List<Rng> rng,
            StopStrings ends) {
        int b = prompts.size();
        int g = config.numReturnSequences();
        int rows = b * g;
        Device device = model.device();
        DecodeResult result;
        long start = System.nanoTime();
        long prefillDone;
        try (Scope scope = Scope.open(); GradMode mode = GradMode.inference()) {
            PaddedBatch batch = PaddedBatch.leftPadded(prompts, padId, device);
            int p = (int) batch.length();
            int capacity = p + config.maxNewTokens();
            long[] expand = new long[rows]; // row i*G+j reads prompt i
            for (int i = 0; i < rows; i++) {
                expand[i] = i / g;
            }
            Tensor index = Tensor.ofLongs(expand, device);
            // a long decode of few rows streams oneDNN-packed weights (packing costs about 13 steps' gain;
            // the model keeps them for the next calls until its weights change); the prefill runs on them too
            DecoderLm.DecodeWeights packed = rows <= PACKED_MAX_ROWS && config.maxNewTokens() >= PACKED_MIN_STEPS
                    ? model.decodeWeights(rows) : null;
            // prefill each prompt once; with G > 1 its cache rows are then copied for the G samples
            try (KvCache prefill = KvCache.allocate(model.config(), b, g == 1 ? capacity : p, model.dtype(), device)) {
                Tensor logits = model.forward(batch.ids(), batch.positions(), batch.mask(), prefill, p - 1, packed)
                        .logits().squeeze(1).indexSelect(0, index).toFloat();                   // [B*G, V]
                Tensor mask = batch.mask() == null ? null : batch.mask().indexSelect(0, index);  // [B*G, P]
                Tensor lastPos = batch.positions().narrow(1, p - 1, 1).indexSelect(0, index);    // [B*G, 1]
                // the G rows of each prompt share its prefill: copying its cache rows is part of the prefill's time
                KvCache rowsCache = g == 1 ? null : prefill.selectRows(expand, capacity);
                prefillDone = System.nanoTime();
                try (rowsCache) {
                    List<long[]> rowPrompts = new ArrayList<>();
                    for (int i = 0; i < rows; i++) {
                        rowPrompts.add(prompts.get(i / g));
                    }
                    result = decode(g == 1 ? prefill : rowsCache, logits, mask, lastPos, rowPrompts, config, rng, packed,
                            ends);
                }
            }
        }
        lastStats = new Stats(prefillDone - start, System.nanoTime() - prefillDone, result.steps, rows, result.hostSyncs);
        return assemble(prompts, g, result.tokens, result.logprobs, result.steps, ends);
    }

    /**
     * Timings of the last {@link #generate} call on this generator.
     *
     * @param prefillNanos prompt forward (and the copy of its cache rows, and the packing of the weights
     *        decoding and the prefill run on when the model had no current packed copy), wall time
     * @param decodeNanos token-by-token decoding including the final host transfers
     * @param steps decode steps (new tokens of the longest sequence)
     * @param sequences rows decoded together (B·G)
     * @param hostSyncs device→host transfers during decoding
     */
    public record Stats(long prefillNanos, long decodeNanos, int steps, int sequences, int hostSyncs) {
        /** Device→host syncs per generated token of one sequence. */
        public double syncsPerToken() {
            return steps == 0 ? 0 : (double) hostSyncs / steps;
        }
    }

    private volatile Stats lastStats;

    /** Timings of the last generation, or null before the first. */
    public Stats lastStats() {
        return lastStats;
    }

    private record DecodeResult(long[] tokens, double[] logprobs, int steps, int hostSyncs) {
    }

    /**
     * Decoding packs its weights for oneDNN for up to this many rows (sequences), every model alike (a
     * full agent repacks after each update, a frozen shared base once per run)... Measured at the 0.5B
     * shape on 2 threads of a Xeon with AMX, one full agent decoding 32 tokens, repacking included
     * (decoding ms per step, plain against packed): float32 12 rows 261 / 151, 32 rows 311 / 222,
     * 64 rows 443 / 354; bfloat16 12 rows 88 / 67, 64 rows 167 / 156; a LoRA team of 3 × 8 rows
     * float32 327 / 196, bfloat16 118 / 107. The limit was 8 rows (16 for a shared base) before.
     */
    static final int PACKED_MAX_ROWS = (int) PackedWeight.MAX_ROWS;
    /** ... when it may run this many steps or more (packing a model costs about 13 steps' saving). */
    static final int PACKED_MIN_STEPS = 24;

    /** Sequences check the "all finished" flag (one host transfer; the new ids with stop strings) every this many steps. */
    static final int FINISH_CHECK_EVERY = 4;

    private DecodeResult decode(KvCache cache, Tensor firstLogits, Tensor firstMask, Tensor firstPos,
            List<long[]> rowPrompts, SamplingConfig config, List<Rng> rng, DecoderLm.DecodeWeights packed,
            StopStrings ends) {
        Device device = model.device();
        int rows = rowPrompts.size();
        int maxNew = config.maxNewTokens();
        long[] eosArray = eosIds.stream().mapToLong(Long::longValue).toArray();
        Tensor eos = Tensor.ofLongs(eosArray, device).view(1, -1);
        Tensor pad = Tensor.fullOf(padId, DType.I64, device, rows);
        // the attention mask of every step is a prefix of [prompt mask | ones for the new tokens]
        Tensor fullMask = firstMask == null ? null
                : Tensor.cat(List.of(firstMask, Tensor.fullOf(1, DType.I64, device, rows, maxNew)), 1);
        long promptColumns = firstMask == null ? 0 : firstMask.size(1);
        // loop-carried state, each kept across step scopes and closed when replaced
        Tensor logits = firstLogits.keep();                                  // [R, V] float32
        Tensor pos = firstPos.keep();                                        // [R, 1]
        Tensor finished = Tensor.zerosOf(DType.BOOL, device, rows).keep();   // [R]
        List<Tensor> tokenSteps = new ArrayList<>();   // T x [R]
        List<Tensor> logprobSteps = new ArrayList<>(); // T x [R]
        int syncs = 0;
        try (Sampler sampler = new Sampler(config, rng, logits.size(1), eosIds, rowPrompts, device)) {
            for (int t = 0; t < maxNew; t++) {
                try (Scope step = Scope.open()) {
                    Tensor next = pad.where(finished, sampler.choose(logits, t)); // [R]
                    Tensor column = next.unsqueeze(1);                             // [R, 1]
                    sampler.observe(next);
                    // log π(y_t) at temperature 1 = logit(y_t) − logsumexp(logits)
                    Tensor logp = logits.gather(1, column).squeeze(1).sub(logits.logsumexp(-1));
                    tokenSteps.add(next.keep());
                    logprobSteps.add(logp.keep());
                    Tensor ended = eosArray.length == 1 ? next.eq((double) eosArray[0])
                            : column.eq(eos).sum(1, false).gt(0);
                    finished = replace(finished, finished.logicalOr(ended));
                    if (t == maxNew - 1) {
                        break;
                    }
                    if (t % FINISH_CHECK_EVERY == FINISH_CHECK_EVERY - 1) {
                        syncs++; // the only transfer inside the loop: the all-finished flag, or the ids since the last check
                        if (ends.searchesText() ? ends.advance(Tensor.stack(tokenSteps.subList(ends.seen(), t + 1), 1)
                                .toLongArray(), ends.seen(), t + 1 - ends.seen())                   // [R, t+1-seen]
                                : finished.allTrue()) {
                            break;
                        }
                    }
                    pos = replace(pos, pos.add(1));
                    Tensor mask = fullMask == null ? null : fullMask.narrow(1, 0, promptColumns + t + 1);
                    logits = replace(logits, model.forward(column, pos, mask, cache, 0, packed).logits().squeeze(1).toFloat());
                }
            }
            try (Scope s = Scope.open()) {
                long[] tok = Tensor.stack(tokenSteps, 1).toLongArray();      // [R, T]
                double[] lp = Tensor.stack(logprobSteps, 1).toDoubleArray(); // [R, T]
                return new DecodeResult(tok, lp, tokenSteps.size(), syncs + 2);
            }
        } finally {
            tokenSteps.forEach(Tensor::close);
            logprobSteps.forEach(Tensor::close);
            logits.close();
            pos.close();
            finished.close();
        }
    }

    private static Tensor replace(Tensor old, Tensor fresh) {
        fresh.keep();
        old.close();
        return fresh;
    }

    /** The completions: row r keeps its first {@link StopStrings#length} ids ({@code tokens}: [R, steps]). */
    private List<List<Completion>> assemble(List<long[]> prompts, int g, long[] tokens, double[] logprobs, int steps,
            StopStrings ends) {
        ends.advance(tokens, 0, steps); // the steps after the loop's last check
        List<List<Completion>> out = new ArrayList<>();
        for (int i = 0; i < prompts.size(); i++) {
            List<Completion> group = new ArrayList<>();
            for (int j = 0; j < g; j++) {
                int row = i * g + j;
                int len = ends.length(row, steps);
                FinishReason reason = ends.reason(row);
                long[] ids = Arrays.copyOfRange(tokens, row * steps, row * steps + len);
                double[] lp = Arrays.copyOfRange(logprobs, row * steps, row * steps + len);
                for (int t = 0; t < len; t++) {
                    if (!Double.isFinite(lp[t])) {
                        throw new IllegalStateException("The model's next-token scores are not finite (log-probability "
                                + lp[t] + " for token " + ids[t] + " at step " + t + " of sequence " + j + " of prompt "
                                + i + "): its weights hold NaN/Inf or the computation overflowed; check the model files "
                                + "(or load it in float32)");
                    }
                }
                group.add(new Completion(prompts.get(i).clone(), ids, decoder.apply(ids), lp, reason));
            }
            out.add(group);
        }
        return out;
    }
}
