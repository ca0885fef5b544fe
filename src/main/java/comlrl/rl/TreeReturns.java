package comlrl.rl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Returns of every joint action in a rollout tree, computed post-order (reference §3.3 step 3),
 * undiscounted (MAGRPO ignores {@code discount}):
 * <pre>
 *   leaf:      R_k = r_k
 *   internal:  R_k = r_k + mean_l( R^{child k}_l )     (the child's mean return is its value estimate)
 * </pre>
 * The result mirrors the tree: one {@code TreeReturns} per {@link RolloutNode}, with the same children.
 * Per-agent returns per completion (step 4) come from {@link #perAgentReturns(JointMode, int, int)}.
 */
public final class TreeReturns {
    private final RolloutNode node;
    private final double[] returns;            // [K]
    private final List<TreeReturns> children;  // [] or [K]

    private TreeReturns(RolloutNode node, double[] returns, List<TreeReturns> children) {
        this.node = node;
        this.returns = returns;
        this.children = children;
    }

    /** Computes the returns of {@code root} and of every node below it. */
    public static TreeReturns compute(RolloutNode root) {
        List<TreeReturns> children = new ArrayList<>(root.children().size());
        for (RolloutNode child : root.children()) {
            children.add(compute(child));
        }
        double[] returns = root.rewards();                 // [K], R_k = r_k for a leaf
        for (int k = 0; k < children.size(); k++) {
            returns[k] += children.get(k).meanReturn();    // R_k = r_k + mean(R^{child k})
        }
        return new TreeReturns(root, returns, Collections.unmodifiableList(children));
    }

    /** The node these returns belong to. */
    public RolloutNode node() {
        return node;
    }

    /** R, the return of each joint action at this node (a copy), {@code [K]}. */
    public double[] returns() {
        return returns.clone();
    }

    /** The returns of the children, in joint-action order; empty for a leaf. */
    public List<TreeReturns> children() {
        return children;
    }

    /** mean(R) at this node (logged as {@code turn_t/expected_return}). */
    public double meanReturn() {
        return Stats.mean(returns);
    }

    /**
     * This node's returns per agent and completion, {@code [N][G]}: see
     * {@link JointMode#perAgentReturns(double[], int, int)} (aligned R_i[k] = R_k; cross
     * R_i[k] = Σ_{j : j_i = k} R_j).
     */
    public double[][] perAgentReturns(JointMode mode, int numGenerations, int numAgents) {
        return mode.perAgentReturns(returns, numGenerations, numAgents);
    }

    /**
     * This node's returns per agent, completion and context of the other agents' completions,
     * {@code [N][G][C]} (C = G^(N−1)), for counterfactual credit: see
     * {@link JointMode#contextReturns(double[], int, int)}; cross only.
     */
    public double[][][] contextReturns(JointMode mode, int numGenerations, int numAgents) {
        return mode.contextReturns(returns, numGenerations, numAgents);
    }
}
