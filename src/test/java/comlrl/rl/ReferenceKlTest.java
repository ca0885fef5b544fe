package comlrl.rl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import org.junit.jupiter.api.Test;

class ReferenceKlTest {
    @Test
    void identicalModelsHaveZeroKl() {
        assertThat(ReferenceKl.sequenceKl(new double[] {-1, -2.5}, new double[] {-1, -2.5})).isEqualTo(0.0);
    }

    @Test
    void k3Golden() {
        // d = ln 2: e^d − d − 1 = 2 − 0.693147181 − 1 = 0.306852819
        assertThat(ReferenceKl.k3(Math.log(2))).isCloseTo(0.306852819, within(1e-9));
        // d = −ln 2: 0.5 + 0.693147181 − 1 = 0.193147181
        assertThat(ReferenceKl.k3(-Math.log(2))).isCloseTo(0.193147181, within(1e-9));
    }

    @Test
    void sequenceKlSumsTokens() {
        // token 0: d = (−1 + ln2) − (−1) = ln 2 → 0.306852819; token 1: d = (−3 − ln2) − (−3) = −ln 2 → 0.193147181
        // KL = 0.5
        double[] policy = {-1, -3};
        double[] reference = {-1 + Math.log(2), -3 - Math.log(2)};
        assertThat(ReferenceKl.sequenceKl(policy, reference)).isCloseTo(0.5, within(1e-9));
        assertThatThrownBy(() -> ReferenceKl.sequenceKl(new double[1], new double[2]))
                .hasMessageContaining("same tokens");
    }

    @Test
    void magrpoReturnShapingFromTheReferenceTests() {
        // reference tests/test_reference_kl.py: [1, 2] − 0.5·[0.2, 0.4] = [0.9, 1.8]
        assertThat(ReferenceKl.shapeReturns(new double[] {1, 2}, new double[] {0.2, 0.4}, 0.5))
                .containsExactly(new double[] {0.9, 1.8}, within(1e-12));
        assertThatThrownBy(() -> ReferenceKl.shapeReturns(new double[2], new double[1], 0.5))
                .hasMessageContaining("one KL per return");
    }

    @Test
    void actorCriticRewardShapingFromTheReferenceTests() {
        // IAC/MAAC: 1 − 0.25·0.4 = 0.9; penalty 0.25·0.4 = 0.1
        assertThat(ReferenceKl.shapeReward(1.0, 0.4, 0.25)).isCloseTo(0.9, within(1e-12));
        assertThat(ReferenceKl.penalty(0.4, 0.25)).isCloseTo(0.1, within(1e-12));
    }

    @Test
    void theTokenWindowEndsAtTheFirstPadToken() {
        // pad = eos = 2: the reference's response length is the first pad position, so a final EOS is left out
        assertThat(ReferenceKl.responseLength(new long[] {5, 7, 2}, 2)).isEqualTo(2);
        assertThat(ReferenceKl.responseLength(new long[] {2}, 2)).as("an empty answer has no KL tokens").isEqualTo(0);
        assertThat(ReferenceKl.responseLength(new long[] {5, 7, 9}, 2)).as("cut at max_new_tokens").isEqualTo(3);
        // a pad token distinct from eos: the EOS is part of the response
        assertThat(ReferenceKl.responseLength(new long[] {5, 7, 2}, 9)).isEqualTo(3);
    }

    @Property
    void k3IsNeverNegative(@ForAll @DoubleRange(min = -30, max = 30) double logRatio) {
        assertThat(ReferenceKl.k3(logRatio)).isGreaterThanOrEqualTo(0.0);
    }
}
