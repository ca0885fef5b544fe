package comlrl.rl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class TreeReturnsTest {
    @Test
    void leafReturnsAreItsRewards() {
        TreeReturns returns = TreeReturns.compute(RolloutNode.leaf(1, 0, 2));
        assertThat(returns.returns()).containsExactly(1, 0, 2);
        assertThat(returns.meanReturn()).isEqualTo(1.0);
        assertThat(returns.children()).isEmpty();
    }

    @Test
    void twoTurnTree() {
        // root r = [1, 0]; child 0 leaf r = [0.5, 1.5] (mean 1); child 1 leaf r = [2, 4] (mean 3)
        // root R = [1 + 1, 0 + 3] = [2, 3]; mean 2.5
        RolloutNode root = RolloutNode.of(new double[] {1, 0},
                List.of(RolloutNode.leaf(0.5, 1.5), RolloutNode.leaf(2, 4)));
        TreeReturns returns = TreeReturns.compute(root);
        assertThat(returns.returns()).containsExactly(2, 3);
        assertThat(returns.meanReturn()).isEqualTo(2.5);
        assertThat(returns.children().get(0).returns()).containsExactly(0.5, 1.5);
        assertThat(returns.children().get(1).returns()).containsExactly(2, 4);
        assertThat(returns.node()).isSameAs(root);
        assertThat(root.meanReward()).isEqualTo(0.5);
    }

    @Test
    void threeTurnTreeIsComputedPostOrder() {
        // turn 2 leaves under child 0: [2, 2] (mean 2) and [0, 4] (mean 2)
        // child 0: r = [0, 1] → R = [0 + 2, 1 + 2] = [2, 3], mean 2.5
        // child 1: leaf (early-terminated) r = [1, 1], mean 1
        // root: r = [1, 2] → R = [1 + 2.5, 2 + 1] = [3.5, 3]
        RolloutNode child0 = RolloutNode.of(new double[] {0, 1},
                List.of(RolloutNode.leaf(2, 2), RolloutNode.leaf(0, 4)));
        RolloutNode root = RolloutNode.of(new double[] {1, 2}, List.of(child0, RolloutNode.leaf(1, 1)));
        TreeReturns returns = TreeReturns.compute(root);
        assertThat(returns.returns()).containsExactly(3.5, 3);
        assertThat(returns.children().get(0).returns()).containsExactly(2, 3);
        assertThat(returns.children().get(1).returns()).containsExactly(1, 1);
    }

    @Test
    void perAgentReturnsOfACrossNode() {
        // G = 2, N = 2 cross root with leaf rewards [1, 2, 3, 4]: see JointModeTest → [[3, 7], [4, 6]]
        TreeReturns returns = TreeReturns.compute(RolloutNode.leaf(1, 2, 3, 4));
        assertThat(returns.perAgentReturns(JointMode.CROSS, 2, 2)).isDeepEqualTo(new double[][] {{3, 7}, {4, 6}});
    }

    @Test
    void nodeValidation() {
        assertThatThrownBy(() -> RolloutNode.of(new double[] {1, 2}, List.of(RolloutNode.leaf(1))))
                .hasMessageContaining("either no children or one per joint action: 2 joint actions but 1 children");
        assertThatThrownBy(() -> RolloutNode.leaf())
                .hasMessageContaining("at least one joint-action reward");
    }

    @Test
    void nodeIsImmutable() {
        double[] rewards = {1, 2};
        RolloutNode node = RolloutNode.leaf(rewards);
        rewards[0] = 99;
        node.rewards()[1] = 99;
        assertThat(node.rewards()).containsExactly(1, 2);
        assertThat(node.reward(1)).isEqualTo(2);
        assertThat(node.numJointActions()).isEqualTo(2);
        assertThat(node.isLeaf()).isTrue();
    }

    @Test
    void suffixSums() {
        // r = [1, 2, 3] → [1+2+3, 2+3, 3] = [6, 5, 3]
        assertThat(Returns.suffixSums(new double[] {1, 2, 3})).containsExactly(6, 5, 3);
        // γ = 0.5, r = [1, 2, 4]: G2 = 4, G1 = 2 + 0.5·4 = 4, G0 = 1 + 0.5·4 = 3
        assertThat(Returns.discountedSuffixSums(new double[] {1, 2, 4}, 0.5)).containsExactly(3, 4, 4);
        assertThat(Returns.suffixSums(new double[0])).isEmpty();
    }
}
