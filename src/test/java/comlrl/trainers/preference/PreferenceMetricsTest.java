package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.rl.Stats;
import comlrl.trainers.preference.MADPOLoss.SequenceLogprobs;
import comlrl.trainers.preference.PreferenceMetrics.DpoRewards;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The preference health metrics against values worked by hand. */
class PreferenceMetricsTest {
    /** Sums of three terms in doubles: exact to a few ulps of numbers below 10. */
    private static final double EXACT = 1e-12;

    private static final SequenceLogprobs POLICY = new SequenceLogprobs(new double[] {-4.0, -1.0, -3.0},
            new double[] {-6.0, -0.5, -3.0});
    private static final SequenceLogprobs REFERENCE = new SequenceLogprobs(new double[] {-4.5, -2.0, -2.0},
            new double[] {-5.0, -0.25, -4.0});

    @Test
    void pairAccuracyCountsStrictWinsAndTiesAsWrong() {
        // 1 > 0 yes, 2 > 2 no (tie), 3 > 5 no, 4 > −1 yes: 2 of 4
        assertThat(Stats.pairAccuracy(new double[] {1, 2, 3, 4}, new double[] {0, 2, 5, -1})).isEqualTo(0.5);
        assertThat(Stats.pairAccuracy(new double[] {1}, new double[] {0})).isEqualTo(1.0);
        assertThatThrownBy(() -> Stats.pairAccuracy(new double[] {1, 2}, new double[] {0}))
                .hasMessageContaining("2 chosen, 1 rejected");
        assertThatThrownBy(() -> Stats.pairAccuracy(new double[0], new double[0]))
                .hasMessageContaining("at least one pair");
    }

    @Test
    void dpoRewardsAgainstAFrozenReference() {
        // β = 0.5
        //   r_w = 0.5·(−4 + 4.5, −1 + 2, −3 + 2)     = ( 0.25,  0.5,   −0.5)
        //   r_l = 0.5·(−6 + 5, −0.5 + 0.25, −3 + 4)  = (−0.5,  −0.125,  0.5)
        //   chosen   = (0.25 + 0.5 − 0.5) / 3        = 0.25 / 3
        //   rejected = (−0.5 − 0.125 + 0.5) / 3      = −0.125 / 3
        //   accuracy: 0.25 > −0.5, 0.5 > −0.125, −0.5 < 0.5   = 2/3
        //   margin   = (0.75 + 0.625 − 1.0) / 3      = 0.125  (= β·mean Δ, Δ = (1.5, 1.25, −2))
        DpoRewards r = DpoRewards.of(0.5, POLICY, REFERENCE);
        assertThat(r.chosen()).isCloseTo(0.25 / 3, within(EXACT));
        assertThat(r.rejected()).isCloseTo(-0.125 / 3, within(EXACT));
        assertThat(r.accuracy()).isCloseTo(2.0 / 3, within(EXACT));
        assertThat(r.margin()).isCloseTo(0.125, within(EXACT));
        double meanDelta = java.util.Arrays.stream(MADPOLoss.deltas(DpoReference.FROZEN_INITIAL, POLICY, REFERENCE))
                .average().orElseThrow();
        assertThat(r.margin()).isCloseTo(0.5 * meanDelta, within(EXACT));
    }

    @Test
    void dpoRewardsWithoutAReferenceAreTheScaledPolicyLogprobs() {
        // β = 0.5, s_ref = 0
        //   r_w = (−2, −0.5, −1.5)   r_l = (−3, −0.25, −1.5)
        //   chosen = −4/3, rejected = −4.75/3
        //   accuracy: −2 > −3 yes, −0.5 < −0.25 no, −1.5 = −1.5 no (tie) = 1/3
        //   margin = (1 − 0.25 + 0) / 3 = 0.25
        DpoRewards r = DpoRewards.of(0.5, POLICY, null);
        assertThat(r.chosen()).isCloseTo(-4.0 / 3, within(EXACT));
        assertThat(r.rejected()).isCloseTo(-4.75 / 3, within(EXACT));
        assertThat(r.accuracy()).isCloseTo(1.0 / 3, within(EXACT));
        assertThat(r.margin()).isCloseTo(0.25, within(EXACT));
    }

    @Test
    void theKeysAreTrlsUnderTheAgentsPrefix() {
        Map<String, Double> metrics = new LinkedHashMap<>();
        new DpoRewards(1, 2, 0.75, -1).putInto(metrics, "agent_1/");
        assertThat(metrics).containsExactly(Map.entry("agent_1/rewards/chosen", 1.0),
                Map.entry("agent_1/rewards/rejected", 2.0), Map.entry("agent_1/rewards/accuracies", 0.75),
                Map.entry("agent_1/rewards/margins", -1.0));
        assertThatThrownBy(() -> DpoRewards.of(0.5, POLICY, new SequenceLogprobs(new double[1], new double[1])))
                .hasMessageContaining("3 policy but 1 reference");
    }
}
