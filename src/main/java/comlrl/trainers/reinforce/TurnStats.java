package comlrl.trainers.reinforce;

import comlrl.distributed.Codec;
import comlrl.distributed.Codecs;
import comlrl.rl.Stats;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Sums over the NodeSamples of one (agent, turn) drained since the last log event, logged as the means
 * {@code turn_t/reward_mean} (of node mean rewards), {@code turn_t/expected_return} (of node mean
 * returns), {@code turn_t/policy_loss} (L_s), {@code turn_t/completion_length_mean} (tokens) and, with
 * reference KL, {@code turn_t/reference_kl_mean} and {@code turn_t/reference_kl_penalty_mean} (β · mean
 * KL); samples skipped as non-finite are counted ({@code nonfinite_samples_skipped}). With
 * {@code num_iterations} μ &gt; 1 each sample counts once per pass, and the clipped surrogate gives TRL's
 * {@code turn_t/clip_ratio/low_mean} (fraction of the tokens in the loss with r &lt; 1 − ε and A &lt; 0),
 * {@code .../high_mean} (r &gt; 1 + ε_high, A &gt; 0) and {@code .../region_mean} (their sum).
 */
final class TurnStats {
    private static final int REWARD = 0;
    private static final int RETURN = 1;
    private static final int LOSS = 2;
    private static final int KL = 3;
    private static final int LENGTH = 4;
    private static final int COUNT = 5;
    private static final int SKIPPED = 6;
    private static final int CLIP_TOKENS = 7;
    private static final int CLIPPED_LOW = 8;
    private static final int CLIPPED_HIGH = 9;
    /** The fields sent without clipped-surrogate steps (num_iterations 1): all but the clip counts. */
    private static final int ON_POLICY_FIELDS = 7;
    /** The sums and counts, indexed by the constants above. */
    private final double[] v = new double[10];

    /** Adds a sample used in the update, with its loss L_s. */
    void add(NodeSample s, double lossValue, boolean withKl) {
        v[REWARD] += s.nodeMeanReward();
        v[RETURN] += s.nodeMeanReturn();
        v[LOSS] += lossValue;
        v[LENGTH] += s.meanCompletionLength();
        if (withKl) {
            v[KL] += Stats.mean(s.referenceKls());
        }
        v[COUNT]++;
    }

    /** Adds the token counts of a clipped-surrogate step ({@link MAGRPOLoss.ClippedLosses}). */
    void addClipped(double tokens, double lowClipped, double highClipped) {
        v[CLIP_TOKENS] += tokens;
        v[CLIPPED_LOW] += lowClipped;
        v[CLIPPED_HIGH] += highClipped;
    }

    void skip() {
        v[SKIPPED]++;
    }

    void merge(TurnStats o) {
        for (int j = 0; j < v.length; j++) {
            v[j] += o.v[j];
        }
    }

    /** For exchanging stats between the processes of a ddp run; the clip counts only when there are any. */
    static final Codec<TurnStats> CODEC = Codecs.DOUBLES.as(a -> {
        TurnStats s = new TurnStats();
        System.arraycopy(a, 0, s.v, 0, Math.min(a.length, s.v.length));
        return s;
    }, s -> Arrays.copyOf(s.v, s.v[CLIP_TOKENS] > 0 ? s.v.length : ON_POLICY_FIELDS));

    int count() {
        return (int) v[COUNT];
    }

    double meanCompletionLength() {
        return v[LENGTH] / v[COUNT];
    }

    /** The means of several agents' stats of one turn, each agent weighted equally. */
    static TurnStats meanOf(List<TurnStats> perAgent) {
        TurnStats out = new TurnStats();
        for (TurnStats s : perAgent) {
            if (s.v[COUNT] > 0) {
                for (int j = REWARD; j <= LENGTH; j++) {
                    out.v[j] += s.v[j] / s.v[COUNT];
                }
                out.v[COUNT]++;
            }
            out.v[SKIPPED] += s.v[SKIPPED];
            if (s.v[CLIP_TOKENS] > 0) { // each agent's fractions, weighted equally: Σ fractions / agents
                out.v[CLIPPED_LOW] += s.v[CLIPPED_LOW] / s.v[CLIP_TOKENS];
                out.v[CLIPPED_HIGH] += s.v[CLIPPED_HIGH] / s.v[CLIP_TOKENS];
                out.v[CLIP_TOKENS]++;
            }
        }
        return out;
    }

    /** Puts this turn's means under {@code prefix + "turn_" + (turn + 1) + "/"}. */
    void put(Map<String, Double> out, String prefix, int turn, double klCoef, boolean withKl) {
        String p = prefix + "turn_" + (turn + 1) + "/";
        double count = v[COUNT];
        if (count > 0) {
            out.put(p + "reward_mean", v[REWARD] / count);
            out.put(p + "expected_return", v[RETURN] / count);
            out.put(p + "policy_loss", v[LOSS] / count);
            out.put(p + "completion_length_mean", v[LENGTH] / count);
            if (withKl) {
                out.put(p + "reference_kl_mean", v[KL] / count);
                out.put(p + "reference_kl_penalty_mean", klCoef * v[KL] / count);
            }
        }
        if (v[CLIP_TOKENS] > 0) {
            out.put(p + "clip_ratio/low_mean", v[CLIPPED_LOW] / v[CLIP_TOKENS]);
            out.put(p + "clip_ratio/high_mean", v[CLIPPED_HIGH] / v[CLIP_TOKENS]);
            out.put(p + "clip_ratio/region_mean", (v[CLIPPED_LOW] + v[CLIPPED_HIGH]) / v[CLIP_TOKENS]);
        }
        if (v[SKIPPED] > 0) {
            out.put(p + "nonfinite_samples_skipped", v[SKIPPED]);
        }
    }
}
