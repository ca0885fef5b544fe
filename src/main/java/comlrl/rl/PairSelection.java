package comlrl.rl;

import comlrl.utils.ConfigNames;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.function.ToDoubleFunction;

/**
 * {@code pair_selection}: which ordered pairs (winner, loser) become preference pairs, and the two
 * pair sets it orders. Pure: the result depends only on the arguments (and for "random" on the seed).
 * <pre>
 *   own pairs of one item's C aligned joint candidates, joint rewards r (reference §7.2 step 2, {@link #pairs}):
 *     P      = { (i, j) : i ≠ j, r_i − r_j &gt; 0 }              (ties dropped), in (i, j) lexicographic order
 *   aligned pairs of current cur [C] against comparator cmp [C'] (reference §7.4 step 2, {@link #aligned}):
 *     P      = { k &lt; min(C, C') : cur_k ≠ cmp_k }            winner = the higher processed reward, by k
 *     gap_k  = |cur_k − cmp_k|
 *   order    = reward_gap: gap desc, stable;   random: Collections.shuffle(P, new Random(seed));   all: P;
 *              comparator_reward (aligned only): (cmp_k desc, gap_k desc), stable
 *   kept     = first min(|P|, preference_pairs_per_sample) of order   (all of them for "all" or a null limit)
 * </pre>
 */
public enum PairSelection {
    /** Largest gap first, stable (equal gaps keep (i, j) order, as the reference's {@code sort(reverse=True)}). */
    REWARD_GAP,
    /** Every pair, in (i, j) order; requires {@code preference_pairs_per_sample = null}. */
    ALL,
    /** {@link Collections#shuffle(List, Random)} of the (i, j) list with the seeded {@link Random}. */
    RANDOM,
    /** The iterative configs' mode (§7.4, aligned pairs only): highest comparator reward, then largest gap. */
    COMPARATOR_REWARD;

    /** One pair of an item's own candidates: {@code winner} beat {@code loser} by {@code gap = r_w − r_l > 0}. */
    public record Pair(int winner, int loser, double gap) {
    }

    /**
     * One aligned pair: candidate {@code index} k of both sides; {@code currentWins} whether the
     * current policy's candidate won; the winner's and loser's processed rewards; {@code comparatorReward}
     * = cmp_k (win or lose); {@code gap} = |cur_k − cmp_k| &gt; 0.
     */
    public record AlignedPair(int index, boolean currentWins, double winnerReward, double loserReward,
            double comparatorReward, double gap) {
    }

    /**
     * The pairs this mode keeps among candidates with joint rewards {@code rewards} ([C]), in its
     * order, at most {@code limit} (preference_pairs_per_sample, ≥ 1; null for every pair, as
     * {@link #ALL} requires); empty when every reward ties. Fails on a non-finite reward.
     */
    public List<Pair> pairs(double[] rewards, Integer limit, long seed) {
        return select(candidates(rewards), Pair::gap, null, limit, seed);
    }

    /** Every ordered pair (i, j) with {@code r_i − r_j > 0}, in (i, j) lexicographic order. */
    static List<Pair> candidates(double[] rewards) {
        requireFinite("the joint reward of preference candidate ", rewards, ": pairs can");
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

    /** The aligned pairs kept of {@code current} ([C]) against {@code comparator} ([C']), as {@link #pairs}. */
    public List<AlignedPair> aligned(double[] current, double[] comparator, Integer limit, long seed) {
        requireFinite("the processed reward of current candidate ", current, ": aligned pairs can");
        requireFinite("the processed reward of comparator candidate ", comparator, ": aligned pairs can");
        List<AlignedPair> pairs = new ArrayList<>();
        for (int k = 0; k < Math.min(current.length, comparator.length); k++) {
            double cur = current[k];
            double cmp = comparator[k];
            if (cur != cmp) {
                pairs.add(new AlignedPair(k, cur > cmp, Math.max(cur, cmp), Math.min(cur, cmp), cmp, Math.abs(cur - cmp)));
            }
        }
        return select(pairs, AlignedPair::gap, AlignedPair::comparatorReward, limit, seed);
    }

    private static void requireFinite(String what, double[] rewards, String ranked) {
        for (int k = 0; k < rewards.length; k++) {
            if (!Double.isFinite(rewards[k])) {
                throw new IllegalArgumentException(what + k + " is " + rewards[k] + ranked
                        + " only be ranked by finite rewards");
            }
        }
    }

    /**
     * The first {@code limit} (every one when null) of {@code enumerated} in this mode's order
     * ({@code comparatorReward} null for an item's own candidates, which comparator_reward refuses).
     *
     * @param seed seeds the {@link Random} that shuffles for {@link #RANDOM}
     */
    private <P> List<P> select(List<P> enumerated, ToDoubleFunction<P> gap, ToDoubleFunction<P> comparatorReward, Integer limit,
            long seed) {
        if (limit != null && !takesLimit()) {
            throw new IllegalArgumentException("preference_pairs_per_sample must be null when pair_selection='all', "
                    + "got " + limit);
        }
        if (limit != null && limit < 1) {
            throw new IllegalArgumentException("preference_pairs_per_sample must be >= 1 or null, got " + limit);
        }
        List<P> ordered = new ArrayList<>(enumerated);
        Comparator<P> byGap = Comparator.comparingDouble(gap).reversed();
        switch (this) {
            case REWARD_GAP -> ordered.sort(byGap);
            case RANDOM -> Collections.shuffle(ordered, new Random(seed));
            case COMPARATOR_REWARD -> {
                if (comparatorReward == null) {
                    throw new IllegalArgumentException("pair_selection \"comparator_reward\" ranks current against "
                            + "comparator candidates: only the iterative trainers (MADPOIter, MARLHFIter) use it");
                }
                ordered.sort(Comparator.comparingDouble(comparatorReward).reversed().thenComparing(byGap));
            }
            case ALL -> { }
        }
        return List.copyOf(ordered.subList(0, limit == null ? ordered.size() : Math.min(limit, ordered.size())));
    }

    /** Whether {@code preference_pairs_per_sample} may cap the pairs (all modes but {@link #ALL}). */
    public boolean takesLimit() {
        return this != ALL;
    }

    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Parses a config value (case and surrounding blanks ignored); null means "reward_gap", as the reference. */
    public static PairSelection parse(String value) {
        return ConfigNames.parse("pair_selection", value, REWARD_GAP, values(), PairSelection::configName, "");
    }

    @Override
    public String toString() {
        return configName();
    }
}
