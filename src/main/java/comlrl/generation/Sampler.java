package comlrl.generation;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.List;

/**
 * Token choice from next-token logits, on the device, for one generation call:
 * <pre>
 * greedy:  argmax(logits)
 * else:    s = logits / temperature
 *          top-k: s[v] = -inf where s[v] < (k-th largest of s)
 *          top-p: sort s ascending, c = cumsum(softmax(sorted)); drop tokens with c <= 1 - p
 *                 (the most likely token is always kept)
 *          y = argmax(s + g),  g[v] = −log(E[v]),  E ~ Exp(1)      (Gumbel-max: y ~ Categorical(softmax(s)))
 * </pre>
 * Row r's noise comes from its own generator, drawn {@link #chunkSteps(long)} steps at a time
 * (a chunk size that depends only on the vocabulary), so a row's samples do not depend on which
 * other rows share the batch. Owns its noise buffer: close it.
 */
final class Sampler implements AutoCloseable {
    /** Noise values drawn per row and chunk (about 4 MB of float32). */
    private static final long CHUNK_VALUES = 1L << 20;

    private final SamplingConfig config;
    private final List<Rng> rowRngs;
    private final int chunk;
    private Tensor gumbel; // [R, chunk, V] float32, or null before the first draw

    Sampler(SamplingConfig config, List<Rng> rowRngs, long vocab) {
        this.config = config;
        this.rowRngs = rowRngs;
        this.chunk = chunkSteps(vocab);
    }

    /** Steps of noise drawn at once: between 1 and 32, about 1M values per row. */
    static int chunkSteps(long vocab) {
        return (int) Math.max(1, Math.min(32, CHUNK_VALUES / vocab));
    }

    /** The token of each row of {@code logits} {@code [R, V]} (float32) at decoding step {@code step}. */
    Tensor choose(Tensor logits, int step) {
        if (config.greedy()) {
            return logits.argmax(-1);
        }
        Tensor scores = config.temperature() == 1.0 ? logits : logits.div(config.temperature());
        if (config.usesTopK()) {
            long k = Math.min(config.topK(), scores.size(-1));
            Tensor kth = scores.topk(k)[0].narrow(-1, k - 1, 1); // [R, 1]
            scores = scores.maskedFill(scores.lt(kth), Double.NEGATIVE_INFINITY);
        }
        if (config.usesTopP()) {
            Tensor[] sorted = scores.sort(-1, false);                     // ascending
            Tensor cumulative = sorted[0].softmax(-1).cumsum(-1);         // [R, V]
            long v = scores.size(-1);
            Tensor removeSorted = cumulative.le(1.0 - config.topP()).narrow(-1, 0, v - 1);
            Tensor keepMostLikely = Tensor.zerosOf(DType.BOOL, scores.device(), scores.size(0), 1);
            Tensor removeAll = Tensor.cat(List.of(removeSorted, keepMostLikely), -1);
            Tensor remove = removeAll.scatter(-1, sorted[1], removeAll);
            scores = scores.maskedFill(remove, Double.NEGATIVE_INFINITY);
        }
        return scores.add(noise(step, scores)).argmax(-1);
    }

    /** Gumbel noise {@code [R, V]} of step {@code step}, drawing the next chunk when needed. */
    private Tensor noise(int step, Tensor like) {
        int offset = step % chunk;
        if (gumbel == null || offset == 0) {
            long rows = like.size(0);
            long vocab = like.size(1);
            try (Scope s = Scope.open()) {
                Tensor e = Tensor.emptyOf(DType.F32, Device.CPU, rows, chunk, vocab);
                for (int r = 0; r < rows; r++) {
                    e.select(0, r).exponential_(1.0, rowRngs.get(r));
                }
                // E can underflow to 0 in float32: clamp so that −log(E) stays finite
                Tensor fresh = e.clampMin(Float.MIN_NORMAL).log().neg().to(like.device()).keep();
                if (gumbel != null) {
                    gumbel.close();
                }
                gumbel = fresh;
            }
        }
        return gumbel.select(1, offset);
    }

    @Override
    public void close() {
        if (gumbel != null) {
            gumbel.close();
        }
    }
}
