package comlrl.rl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.rl.PairSelection.AlignedPair;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class AlignedPairsTest {
    // current = [0.25, 1, 0.5, 0.375, 0.75] (C = 5), comparator = [0.75, 0.25, 0.5, 1] (C' = 4): k < 4, so
    // current[4] has no partner.
    //   k=0: 0.25 vs 0.75  comparator wins, gap 0.5,   cmp 0.75
    //   k=1: 1    vs 0.25  current wins,    gap 0.75,  cmp 0.25
    //   k=2: 0.5  vs 0.5   tie, dropped
    //   k=3: 0.375 vs 1    comparator wins, gap 0.625, cmp 1
    private static final double[] CURRENT = {0.25, 1, 0.5, 0.375, 0.75};
    private static final double[] COMPARATOR = {0.75, 0.25, 0.5, 1};
    private static final AlignedPair K0 = new AlignedPair(0, false, 0.75, 0.25, 0.75, 0.5);
    private static final AlignedPair K1 = new AlignedPair(1, true, 1, 0.25, 0.25, 0.75);
    private static final AlignedPair K3 = new AlignedPair(3, false, 1, 0.375, 1, 0.625);

    @Test
    void allKeepsEveryNonTiedIndexInOrder() {
        assertThat(PairSelection.ALL.aligned(CURRENT, COMPARATOR, null, 0)).containsExactly(K0, K1, K3);
    }

    @Test
    void comparatorRewardSortsByComparatorRewardDescending() {
        // cmp: k3 1 > k0 0.75 > k1 0.25
        assertThat(PairSelection.COMPARATOR_REWARD.aligned(CURRENT, COMPARATOR, null, 0))
                .containsExactly(K3, K0, K1);
        assertThat(PairSelection.COMPARATOR_REWARD.aligned(CURRENT, COMPARATOR, 2, 0))
                .containsExactly(K3, K0);
    }

    @Test
    void comparatorRewardBreaksTiesByGapThenIndex() {
        // comparator all 0.5; current = [0.25, 1, 0.5, 0]:
        //   k0 gap 0.25 (comparator wins), k1 gap 0.5 (current wins), k2 tie, k3 gap 0.5 (comparator wins)
        // equal cmp → gap desc: k1, k3 (equal gaps keep index order), then k0
        double[] current = {0.25, 1, 0.5, 0};
        double[] comparator = {0.5, 0.5, 0.5, 0.5};
        AlignedPair k0 = new AlignedPair(0, false, 0.5, 0.25, 0.5, 0.25);
        AlignedPair k1 = new AlignedPair(1, true, 1, 0.5, 0.5, 0.5);
        AlignedPair k3 = new AlignedPair(3, false, 0.5, 0, 0.5, 0.5);
        assertThat(PairSelection.COMPARATOR_REWARD.aligned(current, comparator, null, 0))
                .containsExactly(k1, k3, k0);
        assertThat(PairSelection.REWARD_GAP.aligned(current, comparator, null, 0))
                .containsExactly(k1, k3, k0);
    }

    @Test
    void rewardGapSortsByGapDescending() {
        // gap: k1 0.75 > k3 0.625 > k0 0.5
        assertThat(PairSelection.REWARD_GAP.aligned(CURRENT, COMPARATOR, null, 0)).containsExactly(K1, K3, K0);
        assertThat(PairSelection.REWARD_GAP.aligned(CURRENT, COMPARATOR, 1, 0)).containsExactly(K1);
    }

    @Test
    void randomIsASeededShuffleOfTheIndexOrderThenTheCap() {
        List<AlignedPair> expected = new ArrayList<>(List.of(K0, K1, K3));
        Collections.shuffle(expected, new Random(11));
        assertThat(PairSelection.RANDOM.aligned(CURRENT, COMPARATOR, null, 11))
                .containsExactlyElementsOf(expected);
        assertThat(PairSelection.RANDOM.aligned(CURRENT, COMPARATOR, 2, 11))
                .containsExactlyElementsOf(expected.subList(0, 2));
    }

    @Test
    void aLongerComparatorIsCutToTheCurrentCount() {
        // k < 2: k0 0.5 vs 0 → current wins gap 0.5; k1 tie; comparator[2] has no partner
        assertThat(PairSelection.ALL.aligned(new double[] {0.5, 1}, new double[] {0, 1, 9}, null, 0))
                .containsExactly(new AlignedPair(0, true, 0.5, 0, 0, 0.5));
        assertThat(PairSelection.REWARD_GAP.aligned(new double[] {}, new double[] {1}, 4, 0)).isEmpty();
    }

    @Test
    void aCapAboveThePairCountKeepsThemAll() {
        assertThat(PairSelection.COMPARATOR_REWARD.aligned(CURRENT, COMPARATOR, 80, 0)).hasSize(3);
    }

    @Test
    void allTiesGiveNoPairs() {
        for (PairSelection mode : PairSelection.values()) {
            Integer cap = mode.takesLimit() ? 4 : null;
            assertThat(mode.aligned(new double[] {1, 0}, new double[] {1, 0}, cap, 0)).isEmpty();
        }
    }

    @Test
    void refusesACapWithAllACapBelowOneAndNonFiniteRewards() {
        assertThatThrownBy(() -> PairSelection.ALL.aligned(CURRENT, COMPARATOR, 4, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("preference_pairs_per_sample must be null when pair_selection='all', got 4");
        assertThatThrownBy(() -> PairSelection.REWARD_GAP.aligned(CURRENT, COMPARATOR, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("preference_pairs_per_sample must be >= 1 or null, got 0");
        assertThatThrownBy(() -> PairSelection.REWARD_GAP.aligned(new double[] {0, 1}, new double[] {0, Double.NaN}, null, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the processed reward of comparator candidate 1 is NaN");
        assertThatThrownBy(() -> PairSelection.REWARD_GAP.aligned(new double[] {Double.NEGATIVE_INFINITY}, new double[] {0}, null, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the processed reward of current candidate 0 is -Infinity");
    }
}
