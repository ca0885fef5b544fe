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
    private double reward;
    private double ret;
    private double loss;
    private double kl;
    private double length;
    private int count;
    private int skipped;

    /** Adds a sample used in the update, with its loss L_s. */
    void add(NodeSample s, double lossValue, boolean withKl) {
        reward += s.nodeMeanReward();
        ret += s.nodeMeanReturn();
        loss += lossValue;
        length += s.meanCompletionLength();
        if (withKl) {
            kl += comlrl.rl.Stats.mean(s.referenceKls());
        }
        count++;
    }

    void skip() {
        skipped++;
    }

    void merge(TurnStats o) {
        reward += o.reward;
        ret += o.ret;
        loss += o.loss;
        kl += o.kl;
        length += o.length;
        count += o.count;
        skipped += o.skipped;
    }

    /** For exchanging stats between the processes of a ddp run: the sums, then the counts (exact as doubles). */
    static final Codec<TurnStats> CODEC = Codecs.DOUBLES.as(TurnStats::ofArray,
            s -> new double[] {s.reward, s.ret, s.loss, s.kl, s.length, s.count, s.skipped});

    private static TurnStats ofArray(double[] v) {
        TurnStats s = new TurnStats();
        s.reward = v[0];
        s.ret = v[1];
        s.loss = v[2];
        s.kl = v[3];
        s.length = v[4];
        s.count = (int) v[5];
        s.skipped = (int) v[6];
        return s;
    }

    int count() {
        return count;
    }

    /** Mean completion length in tokens of the samples used. */
    double meanCompletionLength() {
        return length / count;
    }

    /** The means of several agents' stats of one turn, each agent weighted equally. */
    static TurnStats meanOf(List<TurnStats> perAgent) {
        TurnStats out = new TurnStats();
        for (TurnStats s : perAgent) {
            if (s.count == 0) {
                out.skipped += s.skipped;
                continue;
            }
            out.reward += s.reward / s.count;
            out.ret += s.ret / s.count;
            out.loss += s.loss / s.count;
            out.kl += s.kl / s.count;
            out.length += s.length / s.count;
            out.count++;
            out.skipped += s.skipped;
        }
        return out;
    }

    /** Puts this turn's means under {@code prefix + "turn_" + (turn + 1) + "/"}. */
    void put(Map<String, Double> out, String prefix, int turn, double klCoef, boolean withKl) {
        String p = prefix + "turn_" + (turn + 1) + "/";
        if (count > 0) {
            out.put(p + "reward_mean", reward / count);
            out.put(p + "expected_return", ret / count);
            out.put(p + "policy_loss", loss / count);
            out.put(p + "completion_length_mean", length / count);
            if (withKl) {
                out.put(p + "reference_kl_mean", kl / count);
                out.put(p + "reference_kl_penalty_mean", klCoef * kl / count);
            }
        }
        if (skipped > 0) {
            out.put(p + "nonfinite_samples_skipped", (double) skipped);
        }
    }
}
