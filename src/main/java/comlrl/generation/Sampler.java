package comlrl.generation;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Tensor;
import java.util.List;

/** Token choice from next-token logits, on the device. */
final class Sampler {
    private Sampler() {
    }

    /**
     * Picks one token per row of {@code logits} {@code [R, V]} (float32):
     * <pre>
     * greedy:  argmax(logits)
     * else:    s = logits / temperature
     *          top-k: s[v] = -inf where s[v] < (k-th largest of s)
     *          top-p: sort s ascending, c = cumsum(softmax(sorted)); drop tokens with c <= 1 - p
     *                 (the most likely token is always kept)
     *          y ~ Categorical(softmax(s)), row r drawing from its own generator, so a row's
     *          sample does not depend on which other rows share the batch
     * </pre>
     */
    static Tensor choose(Tensor logits, SamplingConfig config, List<Rng> rowRngs) {
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
        // y = argmax(p / q), q ~ Exp(1) per token: a categorical draw from p (what
        // torch.multinomial does for one sample), with each row's noise from its own stream
        Tensor probs = scores.softmax(-1);
        Tensor noise = Tensor.emptyOf(DType.F32, Device.CPU, probs.size(0), probs.size(1));
        for (int r = 0; r < rowRngs.size(); r++) {
            noise.select(0, r).exponential_(1.0, rowRngs.get(r));
        }
        return probs.div(noise.to(probs.device())).argmax(-1);
    }
}
