package comlrl.trainers.reinforce;

import java.util.Arrays;
import java.util.List;

/**
 * One agent's view of one rollout-tree node: its prompt, its G completions, the return of each
 * completion for this agent, and what the node contributes to the logs.
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
 *        the other agents play context c ({@link comlrl.rl.JointMode#contextReturns}; Σ_c R_i[k][c] =
 *        returns[k]); only for {@code credit: counterfactual}, else null
 * @param peers every agent's returns (and reference KLs) at this node, for
 *        {@code advantage_normalization_scope: joint} ({@link NormalizationScope}); else null
 */
record NodeSample(int agent, int turn, long[] promptIds, List<long[]> completionIds, double[] returns,
        double[] referenceKls, double nodeMeanReward, double nodeMeanReturn, long envStep, String item,
        boolean[] truncated, double[][] contextReturns, Peers peers) {

    /**
     * Every agent's view of the node this sample is one agent's of.
     *
     * @param returns R_m[k] of every agent m, {@code [N][G]}
     * @param referenceKls KL_{m,k} of every agent m, {@code [N][G]}, or null when disabled
     */
    record Peers(double[][] returns, double[][] referenceKls) {
    }

    /** Whether every return (and KL) is a finite number. */
    boolean finite() {
        return Arrays.stream(returns).allMatch(Double::isFinite)
                && (referenceKls == null || Arrays.stream(referenceKls).allMatch(Double::isFinite))
                && (contextReturns == null || Arrays.stream(contextReturns).flatMapToDouble(Arrays::stream)
                        .allMatch(Double::isFinite))
                && (peers == null || Arrays.stream(peers.returns()).flatMapToDouble(Arrays::stream).allMatch(Double::isFinite)
                        && (peers.referenceKls() == null || Arrays.stream(peers.referenceKls())
                                .flatMapToDouble(Arrays::stream).allMatch(Double::isFinite)))
                && Double.isFinite(nodeMeanReward) && Double.isFinite(nodeMeanReturn);
    }

    /** Mean completion length in tokens. */
    double meanCompletionLength() {
        double sum = 0;
        for (long[] y : completionIds) {
            sum += y.length;
        }
        return completionIds.isEmpty() ? 0 : sum / completionIds.size();
    }
}
