package comlrl.rl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.rl.PairSelection.Pair;
import comlrl.trainers.preference.MADPOConfig;
import comlrl.trainers.preference.MARLHFConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PreferencePairsTest {
    // r = [1, 3, 2, 3]. Ordered pairs with r_i > r_j, in (i, j) order (the tie 1–3 is dropped both ways):
    //   (1,0) gap 2, (1,2) gap 1, (2,0) gap 1, (3,0) gap 2, (3,2) gap 1
    private static final double[] REWARDS = {1, 3, 2, 3};
    private static final List<Pair> LEXICOGRAPHIC = List.of(new Pair(1, 0, 2), new Pair(1, 2, 1), new Pair(2, 0, 1),
            new Pair(3, 0, 2), new Pair(3, 2, 1));

    @Test
    void candidatesAreEveryOrderedPairWithAPositiveGapInLexicographicOrder() {
        assertThat(PairSelection.candidates(REWARDS)).containsExactlyElementsOf(LEXICOGRAPHIC);
    }

    @Test
    void rewardGapSortsByGapDescendingKeepingLexicographicOrderOnEqualGaps() {
        // gap 2: (1,0) before (3,0); gap 1: (1,2), (2,0), (3,2) — as the reference's stable sort(reverse=True)
        assertThat(PairSelection.REWARD_GAP.pairs(REWARDS, null, 0)).containsExactly(
                new Pair(1, 0, 2), new Pair(3, 0, 2), new Pair(1, 2, 1), new Pair(2, 0, 1), new Pair(3, 2, 1));
        assertThat(PairSelection.REWARD_GAP.pairs(REWARDS, 3, 0)).containsExactly(
                new Pair(1, 0, 2), new Pair(3, 0, 2), new Pair(1, 2, 1));
        assertThat(PairSelection.REWARD_GAP.pairs(REWARDS, 1, 99)).containsExactly(new Pair(1, 0, 2));
    }

    @Test
    void rewardGapKeepsTheLargestGaps() {
        // r = [0, 0.5, -1]: (0,2) gap 1, (1,0) gap 0.5, (1,2) gap 1.5
        assertThat(PairSelection.REWARD_GAP.pairs(new double[] {0, 0.5, -1}, 2, 0))
                .containsExactly(new Pair(1, 2, 1.5), new Pair(0, 2, 1));
    }

    @Test
    void allKeepsEveryPairInLexicographicOrderAndRefusesACap() {
        assertThat(PairSelection.ALL.pairs(REWARDS, null, 5)).containsExactlyElementsOf(LEXICOGRAPHIC);
        assertThatThrownBy(() -> PairSelection.ALL.pairs(REWARDS, 16, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("preference_pairs_per_sample must be null when pair_selection='all', got 16");
    }

    @Test
    void randomIsASeededShuffleThenTheCap() {
        List<Pair> expected = new ArrayList<>(LEXICOGRAPHIC);
        Collections.shuffle(expected, new Random(7));
        assertThat(PairSelection.RANDOM.pairs(REWARDS, null, 7)).containsExactlyElementsOf(expected);
        assertThat(PairSelection.RANDOM.pairs(REWARDS, 2, 7))
                .containsExactlyElementsOf(expected.subList(0, 2));
        // the same seed gives the same pairs; the seeds give different orders, all permutations of the pairs
        Set<List<Pair>> orders = new HashSet<>();
        for (long seed = 0; seed < 20; seed++) {
            List<Pair> order = PairSelection.RANDOM.pairs(REWARDS, null, seed);
            assertThat(order).containsExactlyInAnyOrderElementsOf(LEXICOGRAPHIC)
                    .isEqualTo(PairSelection.RANDOM.pairs(REWARDS, null, seed));
            orders.add(order);
        }
        assertThat(orders).hasSizeGreaterThan(5);
    }

    @Test
    void aCapAboveThePairCountKeepsThemAll() {
        assertThat(PairSelection.REWARD_GAP.pairs(REWARDS, 80, 0)).hasSize(5);
        assertThat(PairSelection.RANDOM.pairs(REWARDS, 80, 0)).hasSize(5);
    }

    @Test
    void tiesAndSingleCandidatesGiveNoPairs() {
        for (PairSelection mode : List.of(PairSelection.REWARD_GAP, PairSelection.ALL, PairSelection.RANDOM)) {
            Integer cap = mode.takesLimit() ? 4 : null;
            assertThat(mode.pairs(new double[] {0.5, 0.5, 0.5}, cap, 0)).isEmpty();
            assertThat(mode.pairs(new double[] {1}, cap, 0)).isEmpty();
            assertThat(mode.pairs(new double[0], cap, 0)).isEmpty();
        }
    }

    @Test
    void theResultIsUnmodifiable() {
        List<Pair> pairs = PairSelection.REWARD_GAP.pairs(REWARDS, 2, 0);
        assertThatThrownBy(() -> pairs.add(new Pair(0, 1, 1))).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void badArgumentsAreRefused() {
        assertThatThrownBy(() -> PairSelection.REWARD_GAP.pairs(new double[] {1, Double.NaN}, 2, 0))
                .hasMessage("the joint reward of preference candidate 1 is NaN: pairs can only be ranked by finite "
                        + "rewards");
        assertThatThrownBy(() -> PairSelection.ALL.pairs(new double[] {Double.POSITIVE_INFINITY, 0}, null, 0)).hasMessageContaining("candidate 0 is Infinity");
        assertThatThrownBy(() -> PairSelection.RANDOM.pairs(REWARDS, 0, 0))
                .hasMessage("preference_pairs_per_sample must be >= 1 or null, got 0");
    }

    @Test
    void selectionFromAConfigUsesItsModeAndCap() {
        MADPOConfig gap = MADPOConfig.builder().preferencePairsPerSample(2).build();
        assertThat(gap.pairSelection().pairs(REWARDS, gap.preferencePairsPerSample(), 0)).containsExactly(new Pair(1, 0, 2), new Pair(3, 0, 2));
        MARLHFConfig all = MARLHFConfig.builder().pairSelection("all").preferencePairsPerSample(null).build();
        assertThat(all.pairSelection().pairs(REWARDS, all.preferencePairsPerSample(), 0)).containsExactlyElementsOf(LEXICOGRAPHIC);
    }

    @Test
    void pairSelectionParsesItsConfigNames() {
        assertThat(PairSelection.parse(" Reward_Gap ")).isEqualTo(PairSelection.REWARD_GAP);
        assertThat(PairSelection.parse(null)).isEqualTo(PairSelection.REWARD_GAP);
        assertThat(PairSelection.parse("random")).isEqualTo(PairSelection.RANDOM);
        assertThat(PairSelection.ALL.configName()).isEqualTo("all");
        assertThat(PairSelection.parse("comparator_reward")).isEqualTo(PairSelection.COMPARATOR_REWARD);
        assertThatThrownBy(() -> PairSelection.parse("best"))
                .hasMessage("pair_selection must be one of: reward_gap, all, random, comparator_reward (got \"best\")");
        // it ranks current against comparator candidates (PairSelection.aligned), not an item's own candidates
        assertThatThrownBy(() -> PairSelection.COMPARATOR_REWARD.pairs(new double[] {1, 0}, 1, 0))
                .hasMessageContaining("only the iterative trainers");
    }
}
