package comlrl.trainers.preference;

import comlrl.utils.ConfigNames;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.function.ToDoubleFunction;

/**
 * {@code pair_selection}: which of an item's ordered pairs (winner i, loser j), {@code r_i > r_j},
 * become preference pairs (reference §7.2 step 2). Each mode orders the candidate pairs, given in
 * (i, j) lexicographic order (or the iterative trainers' aligned pairs, by index); {@link #select}
 * then keeps the first {@code preference_pairs_per_sample} of them (every one for {@link #ALL}).
 */
public enum PairSelection {
    /**
     * Largest reward gap {@code r_i − r_j} first. The sort is stable, so pairs with equal gaps keep
     * their (i, j) lexicographic order, as the reference's stable {@code sort(reverse=True)} does.
     * Config: "reward_gap" (the default).
     */
    REWARD_GAP("reward_gap") {
        @Override
        <P> void sort(List<P> pairs, Comparator<P> byGap, Comparator<P> byComparatorReward, Random random) {
            pairs.sort(byGap);
        }
    },
    /**
     * Every pair, in (i, j) lexicographic order; requires {@code preference_pairs_per_sample = null}.
     * Config: "all".
     */
    ALL("all") {
        @Override
        <P> void sort(List<P> pairs, Comparator<P> byGap, Comparator<P> byComparatorReward, Random random) {
        }
    },
    /**
     * A uniformly random order: {@link Collections#shuffle(List, Random)} of the lexicographic list
     * with the caller's seeded {@link Random}. Config: "random".
     */
    RANDOM("random") {
        @Override
        <P> void sort(List<P> pairs, Comparator<P> byGap, Comparator<P> byComparatorReward, Random random) {
            Collections.shuffle(pairs, random);
        }
    },
    /**
     * The iterative trainers' mode (reference §7.4): index-aligned pairs of a current and a
     * comparator candidate, highest comparator reward first, then largest |gap| (stable). Only the
     * iterative configs accept it; it has no order over an item's own candidates. Config: "comparator_reward".
     */
    COMPARATOR_REWARD("comparator_reward") {
        @Override
        <P> void sort(List<P> pairs, Comparator<P> byGap, Comparator<P> byComparatorReward, Random random) {
            if (byComparatorReward == null) {
                throw new IllegalArgumentException("pair_selection \"comparator_reward\" ranks current against comparator "
                        + "candidates: only the iterative trainers (MADPOIter, MARLHFIter) use it");
            }
            pairs.sort(byComparatorReward.thenComparing(byGap));
        }
    };

    private final String configName;

    PairSelection(String configName) {
        this.configName = configName;
    }

    /** Puts {@code pairs} in this mode's order, in place ({@code byComparatorReward} null for an item's own candidates). */
    abstract <P> void sort(List<P> pairs, Comparator<P> byGap, Comparator<P> byComparatorReward, Random random);

    /**
     * The pairs this mode keeps of {@code enumerated}, in its order: the first {@code limit}
     * (preference_pairs_per_sample; every one when null), ordered by descending {@code gap} and, for
     * {@link #COMPARATOR_REWARD}, descending {@code comparatorReward} first (null for an item's own
     * candidates, which that mode refuses).
     *
     * @param seed seeds the {@link Random} that shuffles for {@link #RANDOM}
     */
    <P> List<P> select(List<P> enumerated, ToDoubleFunction<P> gap, ToDoubleFunction<P> comparatorReward, Integer limit,
            long seed) {
        requireLimit(limit);
        List<P> ordered = new ArrayList<>(enumerated);
        sort(ordered, Comparator.comparingDouble(gap).reversed(),
                comparatorReward == null ? null : Comparator.comparingDouble(comparatorReward).reversed(), new Random(seed));
        return List.copyOf(ordered.subList(0, limit == null ? ordered.size() : Math.min(limit, ordered.size())));
    }

    /** Whether {@code preference_pairs_per_sample} may cap the pairs (all modes but {@link #ALL}). */
    public boolean takesLimit() {
        return this != ALL;
    }

    /** Fails unless {@code limit} (preference_pairs_per_sample) is null, or ≥ 1 in a mode that {@link #takesLimit}. */
    void requireLimit(Integer limit) {
        if (limit != null && !takesLimit()) {
            throw new IllegalArgumentException("preference_pairs_per_sample must be null when pair_selection='all', "
                    + "got " + limit);
        }
        if (limit != null && limit < 1) {
            throw new IllegalArgumentException("preference_pairs_per_sample must be >= 1 or null, got " + limit);
        }
    }

    /** The config spelling: "reward_gap", "all", "random" or "comparator_reward". */
    public String configName() {
        return configName;
    }

    /**
     * Parses a config value (case and surrounding blanks ignored); null means "reward_gap", as the
     * reference's {@code pair_selection or "reward_gap"}.
     *
     * @throws IllegalArgumentException naming the valid values
     */
    public static PairSelection parse(String value) {
        return ConfigNames.parse("pair_selection", value, REWARD_GAP, values(), PairSelection::configName, "");
    }

    @Override
    public String toString() {
        return configName;
    }
}
