package comlrl.trainers.reinforce;

import comlrl.distributed.Codec;
import comlrl.distributed.Codecs;
import java.util.List;
import java.util.Map;

/**
 * Sums over the NodeSamples of one (agent, turn) drained since the last log event, turned into the
 * logged means {@code turn_t/reward_mean} (mean of node mean rewards), {@code turn_t/expected_return}
 * (mean of node mean returns), {@code turn_t/policy_loss} (mean L_s), {@code turn_t/completion_length_mean}
 * (tokens per completion) and, with reference KL, {@code turn_t/reference_kl_mean} and
 * {@code turn_t/reference_kl_penalty_mean} (= β · mean KL). Samples left out of the update for a
 * non-finite value are only counted ({@code nonfinite_samples_skipped}).
 */
final class TurnStats {
    private static final int REWARD = 0;
    private static final int RETURN = 1;
    private static final int LOSS = 2;
    private static final int KL = 3;
    private static final int LENGTH = 4;
    private static final int COUNT = 5;
    private static final int SKIPPED = 6;
    /** The sums of reward, return, loss, KL and length, then the counts of samples used and skipped. */
    private final double[] v = new double[7];

    /** Adds a sample used in the update, with its loss L_s. */
    void add(NodeSample s, double lossValue, boolean withKl) {
        v[REWARD] += s.nodeMeanReward();
        v[RETURN] += s.nodeMeanReturn();
        v[LOSS] += lossValue;
        v[LENGTH] += s.meanCompletionLength();
        if (withKl) {
            v[KL] += comlrl.rl.Stats.mean(s.referenceKls());
        }
        v[COUNT]++;
    }

    void skip() {
        v[SKIPPED]++;
    }

    void merge(TurnStats o) {
        for (int j = 0; j < v.length; j++) {
            v[j] += o.v[j];
        }
    }

    /** For exchanging stats between the processes of a ddp run: the sums, then the counts (exact as doubles). */
    static final Codec<TurnStats> CODEC = Codecs.DOUBLES.as(a -> {
        TurnStats s = new TurnStats();
        System.arraycopy(a, 0, s.v, 0, s.v.length);
        return s;
    }, s -> s.v.clone());

    int count() {
        return (int) v[COUNT];
    }

    /** Mean completion length in tokens of the samples used. */
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
        if (v[SKIPPED] > 0) {
            out.put(p + "nonfinite_samples_skipped", v[SKIPPED]);
        }
    }
}
