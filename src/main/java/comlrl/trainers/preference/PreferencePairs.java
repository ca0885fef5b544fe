package comlrl.trainers.preference;

import java.util.ArrayList;
import java.util.List;

/**
 * Preference pairs of one task item from its C aligned joint candidates (reference §7.2 step 2):
 * joint candidate k is the k-th completion of every agent, with joint reward r_k.
 * <pre>
 *   P       = { (i, j) : i ≠ j, r_i − r_j &gt; 0 }          every ordered pair with a positive gap (ties dropped),
 *                                                         enumerated in (i, j) lexicographic order
 *   order   = pair_selection.order(P)                   reward_gap: gap descending, stable;
 *                                                         random: shuffled with Random(seed); all: as enumerated
 *   kept    = first min(|P|, preference_pairs_per_sample) of order   (all of them for "all" or a null cap)
 * </pre>
 * Pure: the result depends only on the arguments (and for "random" on the seed).
 */
public final class PreferencePairs {
    private PreferencePairs() {
    }

    /**
     * One preference pair: joint candidate {@code winner} beat {@code loser} by {@code gap}.
     *
     * @param winner index of the preferred joint candidate, in [0, C)
     * @param loser index of the other joint candidate, in [0, C)
     * @param gap {@code r_winner − r_loser}, &gt; 0
     */
    public record Pair(int winner, int loser, double gap) {
    }

    /** The pairs {@code config}'s {@code pair_selection} and {@code preference_pairs_per_sample} select. */
    public static List<Pair> select(double[] rewards, PreferenceConfig config, long seed) {
        return select(rewards, config.pairSelection(), config.preferencePairsPerSample(), seed);
    }

    /**
     * The preference pairs among candidates with joint rewards {@code rewards} ({@code [C]}), in
     * selection order.
     *
     * @param selection how the candidate pairs are ordered before the cap
     * @param limit {@code preference_pairs_per_sample}: at most this many pairs (≥ 1), or null for
     *        every pair; must be null for {@link PairSelection#ALL}
     * @param seed seeds the shuffle of {@link PairSelection#RANDOM}
     * @return the kept pairs; empty when every reward ties (or C &lt; 2)
     * @throws IllegalArgumentException on a NaN or infinite reward (naming the candidate), on a cap
     *         below 1, or on a cap with {@link PairSelection#ALL}
     */
    public static List<Pair> select(double[] rewards, PairSelection selection, Integer limit, long seed) {
        return selection.select(candidates(rewards), Pair::gap, null, limit, seed);
    }

    /** Every ordered pair (i, j) with {@code r_i − r_j > 0}, in (i, j) lexicographic order. */
    static List<Pair> candidates(double[] rewards) {
        for (int k = 0; k < rewards.length; k++) {
            if (!Double.isFinite(rewards[k])) {
                throw new IllegalArgumentException("the joint reward of preference candidate " + k + " is " + rewards[k]
                        + ": pairs can only be ranked by finite rewards");
            }
        }
        List<Pair> pairs = new ArrayList<>();
        for (int i = 0; i < rewards.length; i++) {
            for (int j = 0; j < rewards.length; j++) {
                double gap = rewards[i] - rewards[j];
                if (i != j && gap > 0) {
                    pairs.add(new Pair(i, j, gap));
                }
            }
        }
        return pairs;
    }
}
