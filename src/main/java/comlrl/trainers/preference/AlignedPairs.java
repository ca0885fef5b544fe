package comlrl.trainers.preference;

import java.util.ArrayList;
import java.util.List;

/**
 * Index-aligned preference pairs of the iterative trainers (reference §7.4 step 2): current-policy
 * candidate k is compared only with comparator candidate k.
 * <pre>
 *   P      = { k &lt; min(C, C') : cur_k ≠ cmp_k }            winner = the higher processed reward (ties dropped)
 *   gap_k  = |cur_k − cmp_k|
 *   order  = comparator_reward: (cmp_k desc, gap_k desc), stable;  reward_gap: gap_k desc, stable;
 *            random: Collections.shuffle(P, new Random(seed));    all: k ascending
 *   kept   = first min(|P|, limit) of order                      (all of them for "all" or a null limit)
 * </pre>
 * Pure: the result depends only on the arguments (and for "random" on the seed).
 */
public final class AlignedPairs {
    private AlignedPairs() {
    }

    /**
     * One aligned pair.
     *
     * @param index k, the candidate position shared by both sides
     * @param currentWins whether the current policy's candidate is the winner
     * @param winnerReward the winner's processed reward
     * @param loserReward the loser's processed reward
     * @param comparatorReward {@code cmp_k}, the comparator candidate's processed reward (win or lose)
     * @param gap {@code |cur_k − cmp_k|}, &gt; 0
     */
    public record Pair(int index, boolean currentWins, double winnerReward, double loserReward,
            double comparatorReward, double gap) {
    }

    /**
     * The aligned pairs of {@code current} ({@code [C]}) against {@code comparator} ({@code [C']}),
     * in selection order.
     *
     * @param selection how the pairs are ordered before the limit
     * @param limit {@code preference_pairs_per_sample}: at most this many (≥ 1), or null for every
     *        pair; must be null for {@link PairSelection#ALL}
     * @param seed seeds the shuffle of {@link PairSelection#RANDOM} (ignored by the other modes)
     * @throws IllegalArgumentException on a NaN or infinite reward (naming the side and candidate), a
     *         limit below 1, or a limit with {@link PairSelection#ALL}
     */
    public static List<Pair> select(double[] current, double[] comparator, PairSelection selection, Integer limit,
            long seed) {
        requireFinite("current", current);
        requireFinite("comparator", comparator);
        List<Pair> pairs = new ArrayList<>();
        for (int k = 0; k < Math.min(current.length, comparator.length); k++) {
            double cur = current[k];
            double cmp = comparator[k];
            if (cur != cmp) {
                boolean currentWins = cur > cmp;
                pairs.add(new Pair(k, currentWins, Math.max(cur, cmp), Math.min(cur, cmp), cmp, Math.abs(cur - cmp)));
            }
        }
        return selection.select(pairs, Pair::gap, Pair::comparatorReward, limit, seed);
    }

    private static void requireFinite(String side, double[] rewards) {
        for (int k = 0; k < rewards.length; k++) {
            if (!Double.isFinite(rewards[k])) {
                throw new IllegalArgumentException("the processed reward of " + side + " candidate " + k + " is "
                        + rewards[k] + ": aligned pairs can only be ranked by finite rewards");
            }
        }
    }
}
