package comlrl.rl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One node of a MAGRPO rollout tree, reduced to what the return computation needs: the processed
 * immediate reward r_k of each of its K joint actions, and either no children (a leaf: last turn or
 * early-terminated) or exactly one child per joint action (the node of turn t+1 reached after joint
 * action k). Immutable.
 *
 * <p>Aligned trees have G^T leaves, cross trees G^(N·T) (reference §3.3).
 */
public final class RolloutNode {
    private final double[] rewards;            // [K]
    private final List<RolloutNode> children;  // [] or [K]

    private RolloutNode(double[] rewards, List<RolloutNode> children) {
        if (rewards == null || rewards.length == 0) {
            throw new IllegalArgumentException("a rollout node needs at least one joint-action reward");
        }
        if (!children.isEmpty() && children.size() != rewards.length) {
            throw new IllegalArgumentException("a rollout node has either no children or one per joint action: "
                    + rewards.length + " joint actions but " + children.size() + " children");
        }
        for (RolloutNode child : children) {
            if (child == null) {
                throw new IllegalArgumentException("rollout node children must not be null");
            }
        }
        this.rewards = rewards.clone();
        this.children = Collections.unmodifiableList(new ArrayList<>(children));
    }

    /** A leaf with the given joint-action rewards {@code [K]}. */
    public static RolloutNode leaf(double... rewards) {
        return new RolloutNode(rewards, List.of());
    }

    /**
     * A node with joint-action rewards {@code [K]} and {@code children}: empty (a leaf) or one per
     * joint action, child k following joint action k.
     */
    public static RolloutNode of(double[] rewards, List<RolloutNode> children) {
        return new RolloutNode(rewards, children);
    }

    /** r, the processed immediate reward of each joint action (a copy), {@code [K]}. */
    public double[] rewards() {
        return rewards.clone();
    }

    /** r_k. */
    public double reward(int jointIndex) {
        return rewards[jointIndex];
    }

    /** K, the number of joint actions. */
    public int numJointActions() {
        return rewards.length;
    }

    /** The children, empty for a leaf, otherwise one per joint action. */
    public List<RolloutNode> children() {
        return children;
    }

    public boolean isLeaf() {
        return children.isEmpty();
    }

    /** mean(r): the node's mean immediate reward (logged as {@code turn_t/reward_mean}). */
    public double meanReward() {
        return Stats.mean(rewards);
    }
}
