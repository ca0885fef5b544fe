package comlrl.rl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class JointModeTest {
    @Test
    void parsesNamesAndAliases() {
        assertThat(JointMode.parse("aligned")).isEqualTo(JointMode.ALIGNED);
        assertThat(JointMode.parse("align")).isEqualTo(JointMode.ALIGNED);
        assertThat(JointMode.parse("cross")).isEqualTo(JointMode.CROSS);
        assertThat(JointMode.parse(" Crossed ")).isEqualTo(JointMode.CROSS);
        assertThatThrownBy(() -> JointMode.parse("product"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("joint_mode must be \"aligned\" (or \"align\") or \"cross\" (or \"crossed\")")
                .hasMessageContaining("\"product\"");
        assertThat(JointMode.CROSS.configName()).isEqualTo("cross");
    }

    @Test
    void numberOfJointActions() {
        assertThat(JointMode.ALIGNED.numJointActions(4, 2)).isEqualTo(4);   // K = G
        assertThat(JointMode.CROSS.numJointActions(4, 2)).isEqualTo(16);    // K = 4² = 16
        assertThat(JointMode.CROSS.numJointActions(2, 3)).isEqualTo(8);     // K = 2³ = 8
        assertThat(JointMode.CROSS.numJointActions(4, 1)).isEqualTo(4);     // N = 1 → G
        assertThat(JointMode.ALIGNED.numJointActions(4, 1)).isEqualTo(4);
        assertThatThrownBy(() -> JointMode.CROSS.numJointActions(1000, 5))
                .hasMessageContaining("more than 2^31 joint actions");
        assertThatThrownBy(() -> JointMode.ALIGNED.numJointActions(0, 2))
                .hasMessageContaining("num_generations must be >= 1");
    }

    @Test
    void crossOrderHasAgentZeroSlowest() {
        // G = 2, N = 2: j = 0 → (0,0), 1 → (0,1), 2 → (1,0), 3 → (1,1)
        assertThat(JointMode.CROSS.completionIndices(0, 2, 2)).containsExactly(0, 0);
        assertThat(JointMode.CROSS.completionIndices(1, 2, 2)).containsExactly(0, 1);
        assertThat(JointMode.CROSS.completionIndices(2, 2, 2)).containsExactly(1, 0);
        assertThat(JointMode.CROSS.completionIndices(3, 2, 2)).containsExactly(1, 1);
        // G = 3, N = 2: j = 5 = 1·3 + 2 → (1, 2); G = 2, N = 3: j = 6 = 1·4 + 1·2 + 0 → (1, 1, 0)
        assertThat(JointMode.CROSS.completionIndices(5, 3, 2)).containsExactly(1, 2);
        assertThat(JointMode.CROSS.completionIndices(6, 2, 3)).containsExactly(1, 1, 0);
        assertThat(JointMode.ALIGNED.completionIndices(3, 4, 3)).containsExactly(3, 3, 3);
        assertThatThrownBy(() -> JointMode.CROSS.completionIndices(4, 2, 2))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void alignedPerAgentReturnsAreTheJointReturns() {
        assertThat(JointMode.ALIGNED.perAgentReturns(new double[] {1, 2}, 2, 2))
                .isDeepEqualTo(new double[][] {{1, 2}, {1, 2}});
    }

    @Test
    void crossPerAgentReturnsSumOverMatchingJointActions() {
        // G = 2, N = 2, R = [R(0,0)=1, R(0,1)=2, R(1,0)=3, R(1,1)=4]
        // agent 0: k=0 → R(0,0)+R(0,1) = 3; k=1 → R(1,0)+R(1,1) = 7
        // agent 1: k=0 → R(0,0)+R(1,0) = 4; k=1 → R(0,1)+R(1,1) = 6      (sums, not means)
        assertThat(JointMode.CROSS.perAgentReturns(new double[] {1, 2, 3, 4}, 2, 2))
                .isDeepEqualTo(new double[][] {{3, 7}, {4, 6}});
    }

    @Test
    void crossWithOneAgentIsIdentity() {
        assertThat(JointMode.CROSS.perAgentReturns(new double[] {1, 2, 3}, 3, 1))
                .isDeepEqualTo(new double[][] {{1, 2, 3}});
    }

    @Test
    void perAgentReturnsChecksLength() {
        assertThatThrownBy(() -> JointMode.CROSS.perAgentReturns(new double[] {1, 2}, 2, 2))
                .hasMessageContaining("expected 4 joint-action returns");
    }
}
