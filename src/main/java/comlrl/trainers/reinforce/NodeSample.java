package comlrl.trainers.reinforce;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One agent's view of one rollout-tree node: its prompt, its G completions and their returns, and what
 * the node contributes to the logs.
 *
 * @param agent agent index i
 * @param turn turn index t (0-based)
 * @param promptIds the agent's prompt tokens
 * @param completionIds G completions' tokens (EOS included when generated; never padding)
 * @param returns R_i[k], len G (before reference-KL shaping)
 * @param referenceKls per-completion k3 KL to the reference policy, or null when disabled
 * @param nodeMeanReward mean immediate reward of the node's joint actions
 * @param nodeMeanReturn mean return of the node's joint actions
 * @param envStep env_step after the node's rewards were counted
 * @param item which task item the node belongs to, for messages ("train item 3 of epoch 1")
 * @param truncated per completion, whether generation stopped at max_new_tokens without an EOS, len G
 * @param contextReturns R_i[k][c], {@code [G][C]}: the return of the joint action where agent i plays k and
 *        the others context c (Σ_c R_i[k][c] = returns[k]); only for {@code credit: counterfactual}, else null
 * @param peers every agent's returns (and reference KLs) at this node, for
 *        {@code advantage_normalization_scope: joint}; else null
 */
record NodeSample(int agent, int turn, long[] promptIds, List<long[]> completionIds, double[] returns,
        double[] referenceKls, double nodeMeanReward, double nodeMeanReturn, long envStep, String item,
        boolean[] truncated, double[][] contextReturns, Peers peers) {

    /** Every agent's R_m[k] and KL_{m,k} at the node, {@code [N][G]} each (the KLs null when disabled). */
    record Peers(double[][] returns, double[][] referenceKls) {
    }

    /** Whether every return (and KL) is a finite number. */
    boolean finite() {
        return allFinite(returns, referenceKls, new double[] {nodeMeanReward, nodeMeanReturn})
                && (contextReturns == null || allFinite(contextReturns))
                && (peers == null || allFinite(peers.returns()) && (peers.referenceKls() == null
                        || allFinite(peers.referenceKls())));
    }

    /** Whether every value of the rows that are not null is finite. */
    private static boolean allFinite(double[]... rows) {
        return Arrays.stream(rows).filter(Objects::nonNull).flatMapToDouble(Arrays::stream).allMatch(Double::isFinite);
    }

    /** Mean completion length in tokens. */
    double meanCompletionLength() {
        return completionIds.stream().mapToInt(y -> y.length).average().orElse(0);
    }
}
