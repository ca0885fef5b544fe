package comlrl.generation;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Token choice from next-token logits, on the device, for one generation call, as transformers'
 * {@code generate} makes it. Scores s start as the float32 logits; the {@link LogitsProcessing}
 * processors run first (in greedy decoding too), then, when sampling, the warpers:
 * <pre>
 * repetition θ:   s[v] ← s[v]/θ if s[v] &gt; 0 else s[v]·θ,   for v in the sequence so far (prompt included)
 * no-repeat n:    s[v] ← −inf  if (last n−1 tokens, v) is an n-gram of the sequence
 * bad words:      s[w_m] ← −inf if the sequence ends with w_1..w_{m−1}
 * min length:     s[eos] ← −inf while P + t &lt; min_length  (P: padded prompt length, t: tokens so far)
 * min new tokens: s[eos] ← −inf while t &lt; min_new_tokens
 * forced bos/eos: s ← −inf except bos at length 1 / except eos at t = max_new_tokens − 1
 * invalid values: NaN → 0, ±inf → ±float max
 * suppress:       s[v] ← −inf for suppressed v (at t = 0 only for begin_suppress_tokens)
 * greedy:         y = argmax(s)
 * sampling:       s ← s / temperature
 *                 top-k: s[v] = −inf where s[v] &lt; (k-th largest of s)
 *                 top-p: sort s ascending (ties in vocabulary order), c = cumsum(softmax(sorted));
 *                        drop tokens with c ≤ 1 − p
 *                 min-p: drop v with p_v &lt; min_p · max p          (p = softmax(s))
 *                 typical: keep the tokens whose −log p_v is closest to the entropy H, up to mass τ
 *                 ε-cutoff: drop p_v &lt; ε;  η-cutoff: drop p_v &lt; min(η, √η·e^{−H})
 *                 (the most likely token is always kept)
 *                 p = softmax(s);  c_v = Σ_{w ≤ v} p_w  (float64);  u ~ U[0, 1)
 *                 y = min { v : c_v &gt; u · c_{V−1} }          (inverse CDF: y ~ Categorical(p); p_v = 0 is never drawn)
 * </pre>
 * Row r's uniform comes from its own generator, one per step, so a row's samples do not depend on
 * which other rows share the batch. Owns its token history: close it.
 */
final class Sampler implements AutoCloseable {
    private final SamplingConfig config;
    private final LogitsProcessing processing;
    private final List<Rng> rowRngs;
    private final long vocab;
    private final int promptLength;
    private final long[] eosIds;
    private Tensor seen;       // [R, P + max_new_tokens] int64: the ids the repetition penalty lowers (seenIds), or null
    private Tensor unseenRows; // [R, 1] bool: rows without a token yet, before the first step; null when there are none
    private Tensor sequence; // [R, P + max_new_tokens] int64: prompt (pads as distinct negatives) and new tokens, or null
    private Tensor staticBan; // [1, V] bool: suppressed and single-token bad words, or null
    private Tensor beginBan;  // [1, V] bool, or null
    private Tensor eosMask;   // [1, V] bool, or null
    private final List<Tensor[]> badWords = new ArrayList<>(); // {prefix [1, m−1], one-hot of w_m [1, V]}
    private int length; // tokens in `sequence` so far (P + t)

    /** A sampler with temperature, top-k and top-p only (no processor that needs the sequence). */
    Sampler(SamplingConfig config, List<Rng> rowRngs, long vocab) {
        this(config, rowRngs, vocab, Set.of(), null, Device.CPU);
    }

    /**
     * @param eosIds the end-of-sequence ids (for min_length, min_new_tokens, forced eos, bad words)
     * @param rowPrompts the prompt of each row (no padding), or null when no processor needs them
     */
    Sampler(SamplingConfig config, List<Rng> rowRngs, long vocab, Set<Long> eosIds, List<long[]> rowPrompts,
            Device device) {
        this.config = config;
        this.processing = config.processing();
        this.rowRngs = rowRngs;
        this.vocab = vocab;
        // ids the model cannot produce (outside its vocabulary) never end a sequence and need no mask
        this.eosIds = eosIds.stream().mapToLong(Long::longValue).filter(id -> id >= 0 && id < vocab).toArray();
        int p = 0;
        if (rowPrompts != null) {
            for (long[] r : rowPrompts) {
                p = Math.max(p, r.length);
            }
        }
        this.promptLength = p;
        this.length = p;
        boolean needsPrompts = processing.usesRepetitionPenalty() || processing.needsSequence();
        if (needsPrompts && rowPrompts == null) {
            throw new IllegalStateException("repetition_penalty, no_repeat_ngram_size and bad_words_ids need the prompts");
        }
        try (Scope s = Scope.open()) {
            if (processing.usesRepetitionPenalty()) {
                seen = seenIds(rowPrompts, config.maxNewTokens(), device).keep();
                long[] unseen = rowPrompts.stream().mapToLong(r -> Arrays.stream(r).anyMatch(this::inVocabulary) ? 0 : 1)
                        .toArray();
                if (Arrays.stream(unseen).anyMatch(x -> x == 1)) {
                    unseenRows = Tensor.ofLongs(unseen, device, unseen.length, 1).gt(0.0).keep();
                }
            }
            if (processing.needsSequence()) {
                sequence = promptSequence(rowPrompts, config.maxNewTokens(), device).keep();
            }
            List<Long> banned = new ArrayList<>(processing.suppressTokens());
            for (List<Long> word : processing.badWordsIds()) {
                if (word.size() == 1 && java.util.Arrays.stream(this.eosIds).anyMatch(e -> e == word.get(0))) {
                    continue; // transformers never bans an end-of-sequence id through bad_words_ids
                }
                checkIds("bad_words_ids", word);
                if (word.size() == 1) {
                    banned.add(word.get(0));
                } else {
                    long[] prefix = word.subList(0, word.size() - 1).stream().mapToLong(Long::longValue).toArray();
                    badWords.add(new Tensor[] {Tensor.ofLongs(prefix, device, 1, prefix.length).keep(),
                        mask(List.of(word.get(word.size() - 1)), device).keep()});
                }
            }
            checkIds("suppress_tokens", processing.suppressTokens());
            checkIds("begin_suppress_tokens", processing.beginSuppressTokens());
            checkIds("forced_eos_token_id", processing.forcedEosTokenId());
            if (!banned.isEmpty()) {
                staticBan = mask(banned, device).keep();
            }
            if (!processing.beginSuppressTokens().isEmpty()) {
                beginBan = mask(processing.beginSuppressTokens(), device).keep();
            }
            if (this.eosIds.length > 0) {
                eosMask = mask(java.util.Arrays.stream(this.eosIds).boxed().toList(), device).keep();
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private void checkIds(String name, List<Long> ids) {
        for (long id : ids) {
            if (id < 0 || id >= vocab) {
                throw new IllegalArgumentException(name + " holds token id " + id + ", outside the model's vocabulary of "
                        + vocab + " ids; fix generation_config.json or the generation settings");
            }
        }
    }

    /** {@code [1, V]} bool, true at {@code ids}. */
    private Tensor mask(List<Long> ids, Device device) {
        long[] idx = ids.stream().mapToLong(Long::longValue).toArray();
        return Tensor.zerosOf(DType.BOOL, device, 1, vocab).scatter(1, Tensor.ofLongs(idx, device, 1, idx.length), 1.0);
    }

    private boolean inVocabulary(long id) {
        return id >= 0 && id < vocab;
    }

    /**
     * {@code [R, P + T]}: each row's left-padded prompt, then room for the new tokens. A slot that
     * holds no token of the vocabulary (padding, an id beyond the model's head, the room) holds a
     * stand-in: the row's last prompt token in the vocabulary, so that the penalty applied there is
     * the one that token gets anyway; a row without one holds 0, left alone until its first token
     * ({@link #unseenRows}) becomes its stand-in.
     */
    private Tensor seenIds(List<long[]> rowPrompts, int maxNew, Device device) {
        int rows = rowPrompts.size();
        int width = promptLength + maxNew;
        long[] ids = new long[rows * width];
        for (int r = 0; r < rows; r++) {
            long[] p = rowPrompts.get(r);
            long standIn = 0;
            for (long id : p) {
                standIn = inVocabulary(id) ? id : standIn;
            }
            int offset = promptLength - p.length;
            for (int j = 0; j < width; j++) {
                long id = j >= offset && j < promptLength ? p[j - offset] : -1;
                ids[r * width + j] = inVocabulary(id) ? id : standIn;
            }
        }
        return Tensor.ofLongs(ids, device, rows, width);
    }

    /** {@code [R, P + T]}: left-padded prompts with padding as −1, −2, ... (never equal to a token or each other). */
    private Tensor promptSequence(List<long[]> rowPrompts, int maxNew, Device device) {
        int rows = rowPrompts.size();
        int width = promptLength + maxNew;
        long[] ids = new long[rows * width];
        for (int r = 0; r < rows; r++) {
            long[] p = rowPrompts.get(r);
            int offset = promptLength - p.length;
            for (int j = 0; j < width; j++) {
                ids[r * width + j] = j < offset ? -1 - j : j < promptLength ? p[j - offset] : -1 - j;
            }
        }
        return Tensor.ofLongs(ids, device, rows, width);
    }

    /** The token of each row of {@code logits} {@code [R, V]} (float32) at decoding step {@code step}. */
    Tensor choose(Tensor logits, int step) {
        Tensor scores = process(logits, step);
        if (config.greedy()) {
            return scores.argmax(-1);
        }
        return merged(warp(scores), this::draw);
    }

    /** The scores a token is chosen from: processed, and warped when sampling ({@code [R, V]}). */
    Tensor scores(Tensor logits, int step) {
        Tensor scores = process(logits, step);
        return config.greedy() ? scores : merged(warp(scores), p -> p.full(vocab));
    }

    /**
     * The tokens some rows may still draw: their scores {@code [n, C]} and vocabulary ids
     * {@code [n, C]}, ids null when the scores cover the whole vocabulary in order (C = V); tokens
     * outside the candidates score −inf. {@code rows}: the batch rows these are, in order; null for
     * all of them.
     */
    private record Candidates(Tensor scores, Tensor ids, long[] rows) {
        /** The scores over the whole vocabulary ({@code [n, V]}). */
        Tensor full(long vocab) {
            return ids == null ? scores : Tensor.fullOf(Double.NEGATIVE_INFINITY, DType.F32, scores.device(), scores.size(0),
                    vocab).scatter(1, ids, scores);
        }

        /** Batch row {@code i} of these. */
        int row(int i) {
            return rows == null ? i : (int) rows[i];
        }
    }

    /** Each part's {@code [n, ...]} result of {@code each}, put back at its rows of the batch ({@code [R, ...]}). */
    private static Tensor merged(List<Candidates> parts, java.util.function.Function<Candidates, Tensor> each) {
        if (parts.size() == 1) {
            return each.apply(parts.get(0));
        }
        Tensor out = null;
        for (Candidates p : parts) {
            Tensor part = each.apply(p);
            if (out == null) {
                long[] shape = part.shape();
                shape[0] = parts.stream().mapToLong(c -> c.rows().length).sum();
                out = Tensor.zerosOf(part.dtype(), part.device(), shape);
            }
            out = out.indexCopy(0, Tensor.ofLongs(p.rows(), part.device(), p.rows().length), part);
        }
        return out;
    }

    /** Records the tokens chosen at {@code step} {@code [R]} (after padding of finished rows). */
    void observe(Tensor next) {
        if (seen != null) {
            seen.narrow(1, length, 1).copy_(next.unsqueeze(1));
            if (unseenRows != null) { // a row without a token so far: its first one stands in for its empty slots
                Tensor before = seen.narrow(1, 0, length);
                before.copy_(next.unsqueeze(1).expand(next.size(0), length).where(unseenRows, before));
                unseenRows.close();
                unseenRows = null;
            }
        }
        if (sequence != null) {
            sequence.narrow(1, length, 1).copy_(next.unsqueeze(1));
        }
        length++;
    }

    /** The processors, in transformers' order (they act in greedy decoding too). */
    private Tensor process(Tensor scores, int step) {
        LogitsProcessing p = processing;
        if (p.isNone()) {
            return scores;
        }
        if (seen != null) {
            // θ > 1 lowers every seen token: positive scores shrink, negative ones grow in size. Only the
            // seen tokens' scores are read and written; an id seen twice gets the same value twice.
            Tensor ids = seen.narrow(1, 0, length);
            Tensor old = scores.gather(1, ids);
            Tensor penalized = old.mul(p.repetitionPenalty()).where(old.lt(0.0), old.div(p.repetitionPenalty()));
            scores = scores.scatter(1, ids, unseenRows == null ? penalized : old.where(unseenRows, penalized));
        }
        if (p.noRepeatNgramSize() > 0 && length >= p.noRepeatNgramSize()) {
            scores = scores.maskedFill(repeatedNgramEnds(p.noRepeatNgramSize()), Double.NEGATIVE_INFINITY);
        }
        if (staticBan != null) {
            scores = scores.maskedFill(staticBan, Double.NEGATIVE_INFINITY);
        }
        for (Tensor[] word : badWords) {
            int m = (int) word[0].size(1);
            if (length >= m) {
                Tensor ends = sequence.narrow(1, length - m, m).eq(word[0]).all(1).unsqueeze(1); // [R, 1]
                scores = scores.maskedFill(ends.logicalAnd(word[1]), Double.NEGATIVE_INFINITY);
            }
        }
        if (eosMask != null && (length < p.minLength() || step < p.minNewTokens())) {
            scores = scores.maskedFill(eosMask, Double.NEGATIVE_INFINITY);
        }
        if (p.forcedBosTokenId() != null && length == 1) {
            scores = forced(scores, List.of(p.forcedBosTokenId()));
        }
        if (!p.forcedEosTokenId().isEmpty() && step == config.maxNewTokens() - 1) {
            scores = forced(scores, p.forcedEosTokenId());
        }
        if (p.removeInvalidValues()) {
            scores = scores.nanToNum(0.0);
        }
        if (beginBan != null && step == 0) {
            scores = scores.maskedFill(beginBan, Double.NEGATIVE_INFINITY);
        }
        return scores;
    }

    /** Rows' bans {@code [R, V]}: the token after each earlier occurrence of the last n−1 tokens. */
    private Tensor repeatedNgramEnds(int n) {
        Tensor seq = sequence.narrow(1, 0, length);
        int windows = length - n + 1;
        Tensor matches = Tensor.fullOf(1, DType.BOOL, seq.device(), seq.size(0), windows); // [R, W]
        for (int o = 0; o < n - 1; o++) {
            Tensor prefixToken = seq.narrow(1, windows + o, 1);                           // [R, 1]
            matches = matches.logicalAnd(seq.narrow(1, o, windows).eq(prefixToken));
        }
        Tensor ends = seq.narrow(1, n - 1, windows);                                      // [R, W]
        Tensor valid = matches.logicalAnd(ends.gt(-1.0));
        Tensor spare = Tensor.fullOf(vocab, DType.I64, seq.device(), seq.size(0), windows);
        return Tensor.zerosOf(DType.BOOL, seq.device(), seq.size(0), vocab + 1)
                .scatter(1, ends.where(valid, spare), 1.0).narrow(1, 0, vocab);
    }

    /** Scores −inf except 0 at {@code ids}. */
    private Tensor forced(Tensor scores, List<Long> ids) {
        Tensor allowed = mask(ids, scores.device());
        return Tensor.zerosOf(DType.F32, scores.device(), scores.size(0), vocab)
                .maskedFill(allowed.logicalNot(), Double.NEGATIVE_INFINITY);
    }

    /**
     * Temperature, top-k, top-p, min-p, typical, ε and η (sampling only), in transformers' order.
     * After a top-k the later warpers and the draw see its candidates only ({@link #topK}): every
     * other token has probability exactly 0 in each of them, so they remove the same tokens and
     * draw from the same distribution, up to the order of float sums over the kept tokens. Which
     * candidates a row gets depends on that row alone, so its tokens do not depend on the others.
     */
    private List<Candidates> warp(Tensor logits) {
        Tensor scores = logits;
        if (config.temperature() != 1.0) {
            scores = scores.div(config.temperature());
        }
        if (!config.usesTopK()) {
            return List.of(afterTopK(new Candidates(scores, null, null)));
        }
        return topK(scores, Math.min(config.topK(), scores.size(-1))).stream().map(this::afterTopK).toList();
    }

    /** The warpers after top-k, on candidates. */
    private Candidates afterTopK(Candidates candidates) {
        Tensor scores = candidates.scores();
        if (config.usesTopP()) {
            Tensor[] sorted = scores.sort(-1, false);                     // ascending
            Tensor cumulative = sorted[0].softmax(-1).cumsum(-1);         // [R, V]
            Tensor removeSorted = keepLast(cumulative.le(1.0 - config.topP()));
            scores = scores.maskedFill(removeSorted.scatter(-1, sorted[1], removeSorted), Double.NEGATIVE_INFINITY);
        }
        LogitsProcessing p = processing;
        if (p.minP() != null) {
            Tensor probs = scores.softmax(-1);
            // the most likely token always passes (its probability is the maximum)
            scores = scores.maskedFill(probs.lt(probs.amax(-1, true).mul(p.minP())), Double.NEGATIVE_INFINITY);
        }
        if (p.typicalP() < 1.0) {
            scores = typical(scores, p.typicalP());
        }
        if (p.epsilonCutoff() > 0) {
            Tensor probs = scores.softmax(-1);
            scores = cutBelow(scores, probs.lt(p.epsilonCutoff()));
        }
        if (p.etaCutoff() > 0) {
            Tensor logp = scores.logSoftmax(-1);
            Tensor probs = logp.exp();
            Tensor entropy = logp.mul(probs).nansum(-1, true).neg();                        // [R, 1]
            double eta = p.etaCutoff();
            Tensor cutoff = entropy.neg().exp().mul(Math.sqrt(eta)).clampMax(eta);          // min(η, √η·e^{−H})
            scores = cutBelow(scores, probs.lt(cutoff));
        }
        return new Candidates(scores, candidates.ids(), candidates.rows());
    }

    /** Tie room of a compact top-k: ties with the k-th score up to this many beyond k stay compact. */
    static final long TIE_ROOM = 16;
    /** A top-k is compact when {@code k + TIE_ROOM} is at most the vocabulary over this. */
    static final long COMPACT_SHARE = 8;

    /**
     * Top-k: keeps every token scoring at least the k-th largest score (all of a tie). With k small
     * beside the vocabulary, as candidates: the {@code k + TIE_ROOM} largest scores, those below the
     * k-th set to −inf, in vocabulary order. A sampling step with Qwen2.5's settings (top-k 20, top-p
     * 0.8) then sorts ~36 scores per row instead of the vocabulary's 151,936: 12 rows took 20–25 ms
     * per step so. A row whose tie room runs out (its last score still equals a finite k-th) keeps
     * the whole vocabulary with the others at −inf, apart from the other rows; so do all rows on a
     * GPU, where the whole vocabulary's passes are cheap and the check would cost a device-to-host
     * sync per step.
     */
    private List<Candidates> topK(Tensor scores, long k) {
        long v = scores.size(-1);
        long wide = k + TIE_ROOM;
        if (wide * COMPACT_SHARE > v || scores.device().isCuda()) {
            return List.of(wholeTopK(scores, k, null));
        }
        Tensor[] top = scores.topk(wide);                                                  // descending
        Tensor kth = top[0].narrow(-1, k - 1, 1);                                          // [R, 1]
        long[] beyond = top[0].narrow(-1, wide - 1, 1).ge(kth).logicalAnd(kth.gt(Double.NEGATIVE_INFINITY))
                .squeeze(1).to(DType.I64).toLongArray();
        long[] inRoom = java.util.stream.IntStream.range(0, beyond.length).filter(r -> beyond[r] == 0).asLongStream()
                .toArray();
        if (inRoom.length == beyond.length) {
            return List.of(compact(top[0], top[1], kth, null));
        }
        long[] outRoom = java.util.stream.IntStream.range(0, beyond.length).filter(r -> beyond[r] != 0).asLongStream()
                .toArray();
        List<Candidates> parts = new ArrayList<>();
        if (inRoom.length > 0) {
            Tensor in = Tensor.ofLongs(inRoom, scores.device(), inRoom.length);
            parts.add(compact(top[0].indexSelect(0, in), top[1].indexSelect(0, in), kth.indexSelect(0, in), inRoom));
        }
        parts.add(wholeTopK(scores.indexSelect(0, Tensor.ofLongs(outRoom, scores.device(), outRoom.length)), k, outRoom));
        return parts;
    }

    /** The {@code k + TIE_ROOM} largest scores and their ids, those below the k-th at −inf, in vocabulary order. */
    private static Candidates compact(Tensor values, Tensor ids, Tensor kth, long[] rows) {
        Tensor kept = values.maskedFill(values.lt(kth), Double.NEGATIVE_INFINITY);
        Tensor[] byId = ids.sort(-1, false);                                               // distinct ids, ascending
        return new Candidates(kept.gather(-1, byId[1]), byId[0], rows);
    }

    /** Top-k over the whole vocabulary: every score below the k-th at −inf. */
    private static Candidates wholeTopK(Tensor scores, long k, long[] rows) {
        Tensor kth = scores.topk(k)[0].narrow(-1, k - 1, 1);
        return new Candidates(scores.maskedFill(scores.lt(kth), Double.NEGATIVE_INFINITY), null, rows);
    }

    /** Removes {@code remove} except the most likely token of each row. */
    private static Tensor cutBelow(Tensor scores, Tensor remove) {
        Tensor notTop = scores.lt(scores.amax(-1, true));
        return scores.maskedFill(remove.logicalAnd(notTop), Double.NEGATIVE_INFINITY);
    }

    /**
     * Locally typical sampling: tokens sorted by |−log p_v − H|; keep the closest ones while their
     * cumulative probability stays under τ, plus the one that crosses it (and always the first).
     */
    private static Tensor typical(Tensor scores, double mass) {
        Tensor logp = scores.logSoftmax(-1);
        Tensor entropy = logp.mul(logp.exp()).nansum(-1, true).neg();                     // [R, 1]
        Tensor shifted = logp.neg().sub(entropy).abs();                                   // [R, V]
        Tensor[] sorted = shifted.sort(-1, false);
        Tensor cumulative = scores.gather(-1, sorted[1]).softmax(-1).cumsum(-1);
        long v = scores.size(-1);
        Tensor lastIndex = cumulative.lt(mass).sum(1, false).clampMax(v - 1).unsqueeze(1);  // [R, 1]
        Tensor removeSorted = sorted[0].gt(sorted[0].gather(1, lastIndex));
        Tensor keepFirst = Tensor.cat(List.of(Tensor.zerosOf(DType.BOOL, scores.device(), scores.size(0), 1),
                removeSorted.narrow(-1, 1, v - 1)), -1);
        return scores.maskedFill(keepFirst.scatter(1, sorted[1], keepFirst), Double.NEGATIVE_INFINITY);
    }

    /** {@code remove} (ascending order) with its last column cleared: the most likely token stays. */
    private static Tensor keepLast(Tensor remove) {
        long v = remove.size(-1);
        Tensor keepMostLikely = Tensor.zerosOf(DType.BOOL, remove.device(), remove.size(0), 1);
        return Tensor.cat(List.of(remove.narrow(-1, 0, v - 1), keepMostLikely), -1);
    }

    /**
     * One token per row from {@code softmax(scores)} of the candidates, by inverse CDF with the row's
     * own uniform. u &lt; 1 keeps {@code u · c_last} below {@code c_last}: rounded to nearest,
     * {@code c_last · (1 − 2⁻⁵³)} lies at least half a unit in the last place below it, so some
     * {@code c_v} of a token with nonzero probability exceeds the target (the clamp only guards NaN).
     */
    private Tensor draw(Candidates c) {
        Tensor scores = c.scores();
        long rows = scores.size(0);
        long width = scores.size(1);
        Tensor cdf = scores.softmax(-1).to(DType.F64).cumsum(-1);                      // [R, C]
        Tensor u = Tensor.emptyOf(DType.F64, Device.CPU, rows, 1);
        for (int r = 0; r < rows; r++) {
            u.select(0, r).uniform_(rowRngs.get(c.row(r)));                               // U[0, 1)
        }
        Tensor target = u.to(scores.device()).mul(cdf.narrow(1, width - 1, 1));          // [R, 1]
        Tensor pick = Tensor.searchsortedRight(cdf, target).clampMax(width - 1);           // [R, 1]
        return (c.ids() == null ? pick : c.ids().gather(1, pick)).squeeze(1);            // [R]
    }

    @Override
    public void close() {
        for (Tensor t : new Tensor[] {seen, unseenRows, sequence, staticBan, beginBan, eosMask}) {
            if (t != null) {
                t.close();
            }
        }
        for (Tensor[] w : badWords) {
            w[0].close();
            w[1].close();
        }
    }
}
