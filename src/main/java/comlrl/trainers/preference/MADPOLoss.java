package comlrl.trainers.preference;

import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.rl.ReferenceKl;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The MADPO loss of one agent over a batch B of preference pairs (reference §7.2), one place for
 * its math. For pair b with winner joint candidate w and loser l, agent j's prompt x_j and
 * completions w_j, l_j:
 * <pre>
 *   s_j(y)   = Σ_t log π_j(y_t | x_j, y_&lt;t)              t over the tokens before the first pad
 *   Δ_j      = s_j(w_j) − s_j(l_j)                                        dpo_reference "none" (the reference)
 *   Δ_j      = (s_j(w_j) − s_ref_j(w_j)) − (s_j(l_j) − s_ref_j(l_j))      dpo_reference "frozen_initial"
 *   z_b      = β · (Δ_i + Σ_{j≠i} sg(Δ_j))                 sg: the other agents' deltas are constants
 *   L_i      = (1/|B|) Σ_b −log σ(z_b) = (1/|B|) Σ_b softplus(−z_b)
 *   ∂L_i/∂Δ_{i,b} = −β · σ(−z_b) / |B|
 * </pre>
 * The other agents' Δ_j are computed once, without gradient, before the batch's updates; each
 * agent then takes its own optimizer step on L_i. Numerically z_b is the same for every agent, so
 * the loss values agree; only the gradient's target differs.
 *
 * <p><b>As a weighted log-likelihood.</b> L_i is not linear in log π_i, so no fixed weights make
 * {@code Σ w · log π_i} equal to it. But at the current parameters θ its gradient is
 * <pre>
 *   ∇_θ L_i = Σ_b (∂L_i/∂Δ_{i,b}) · (∇_θ s_i(w_{i,b}) − ∇_θ s_i(l_{i,b}))
 * </pre>
 * (π_ref is constant), which is the gradient of the first-order surrogate
 * <pre>
 *   S_i(θ) = Σ_b  g_b · s_i(w_{i,b})  −  g_b · s_i(l_{i,b}),      g_b = ∂L_i/∂Δ_{i,b} held constant
 * </pre>
 * So {@link #weights} gives the rows {@code [winners..., losers...]} the weights
 * {@code [g_1..g_B, −g_1..−g_B]} and {@link #backward} (through
 * {@link Scorer#backwardWeighted}) adds exactly ∇_θ L_i to the gradients. S_i's value is not L_i:
 * report {@link AgentLoss#loss()}.
 *
 * <p>Differences from the reference: a NaN or infinite Δ or loss is an error
 * ({@link NonFiniteDeltaException}), where the reference replaces a non-finite loss by the constant
 * 0.1 (which has no gradient). The reference's sequence log-probability also leaves out the last
 * token before the first pad (its logits slice stops one position short); ours sums every token
 * before the first pad, as the formula says.
 */
public final class MADPOLoss {
    private MADPOLoss() {
    }

    /** Sequence log-probabilities {@code s(y)} of each pair's winner and loser under one model: {@code [B]} each. */
    public record SequenceLogprobs(double[] winners, double[] losers) {
        public SequenceLogprobs {
            if (winners.length != losers.length) {
                throw new IllegalArgumentException(winners.length + " winner but " + losers.length
                        + " loser log-probabilities");
            }
        }

        /** B, the number of pairs. */
        public int size() {
            return winners.length;
        }
    }

    /** L_i of one agent on one batch and its gradient ∂L_i/∂Δ_{i,b}: {@code [B]} (the 1/|B| included). */
    public record AgentLoss(double loss, double[] gradient) {
    }

    /** Δ of one agent for every pair, {@code [B]} ({@code frozen} may be null for {@link DpoReference#NONE}). */
    public static double[] deltas(DpoReference reference, SequenceLogprobs policy, SequenceLogprobs frozen) {
        if (reference.needsReference() && frozen == null) {
            throw new IllegalArgumentException("dpo_reference=\"" + reference + "\" needs the frozen reference's "
                    + "log-probabilities");
        }
        if (frozen != null && frozen.size() != policy.size()) {
            throw new IllegalArgumentException(policy.size() + " policy but " + frozen.size()
                    + " reference log-probability pairs");
        }
        double[] deltas = new double[policy.size()];
        for (int b = 0; b < deltas.length; b++) {
            double referenceWinner = frozen == null ? 0 : frozen.winners()[b];
            double referenceLoser = frozen == null ? 0 : frozen.losers()[b];
            deltas[b] = reference.delta(policy.winners()[b], policy.losers()[b], referenceWinner, referenceLoser);
        }
        return deltas;
    }

    /**
     * L_i and ∂L_i/∂Δ_i for agent {@code agent} from {@code deltas[j][b]} = Δ_j of pair b ({@code [N, B]})
     * and {@code beta} = dpo_beta; throws {@link NonFiniteDeltaException} on a non-finite Δ or loss.
     */
    public static AgentLoss agentLoss(int agent, double[][] deltas, double beta) {
        if (!(Double.isFinite(beta) && beta > 0)) {
            throw new IllegalArgumentException("dpo_beta must be a finite number > 0, got " + beta);
        }
        if (agent < 0 || agent >= deltas.length) {
            throw new IndexOutOfBoundsException("agent " + agent + " outside [0, " + deltas.length + ")");
        }
        int pairs = deltas[agent].length;
        if (pairs == 0) {
            throw new IllegalArgumentException("a DPO batch needs at least one preference pair");
        }
        for (int j = 0; j < deltas.length; j++) {
            if (deltas[j].length != pairs) {
                throw new IllegalArgumentException("agent " + j + " has " + deltas[j].length + " deltas, agent "
                        + agent + " " + pairs);
            }
            for (int b = 0; b < pairs; b++) {
                if (!Double.isFinite(deltas[j][b])) {
                    throw new NonFiniteDeltaException(j, b, deltas[j][b]);
                }
            }
        }
        double loss = 0;
        double[] gradient = new double[pairs];
        for (int b = 0; b < pairs; b++) {
            double own = deltas[agent][b];
            double others = 0;                                   // Σ_{j≠i} sg(Δ_j)
            for (int j = 0; j < deltas.length; j++) {
                others += j == agent ? 0 : deltas[j][b];
            }
            double z = beta * (own + others);
            loss += softplus(-z) / pairs;                         // −log σ(z) / |B|
            gradient[b] = -beta * sigmoid(-z) / pairs;            // ∂/∂Δ_i of the same term
        }
        if (!Double.isFinite(loss)) {
            throw new NonFiniteDeltaException(agent, -1, loss);
        }
        return new AgentLoss(loss, gradient);
    }

    /** The weights {@code [g_1..g_B, −g_1..−g_B]} of the rows {@code [winners..., losers...]}, g = ∂L_i/∂Δ_i. */
    public static double[] weights(AgentLoss loss) {
        double[] g = loss.gradient();
        double[] weights = new double[2 * g.length];
        for (int b = 0; b < g.length; b++) {
            weights[b] = g[b];               // on s_i(w_b)
            weights[g.length + b] = -g[b];   // on s_i(l_b)
        }
        return weights;
    }

    /** The completion's tokens before its first pad id (all of them without one): the tokens s(y) sums over. */
    public static long[] completionTokens(long[] completionIds, long padId) {
        return Arrays.copyOf(completionIds, ReferenceKl.responseLength(completionIds, padId));
    }

    /**
     * {@code s(w_b)} and {@code s(l_b)} of every pair under {@code model}, without gradient: one batched
     * forward of the rows {@code [prompt_b ⊕ w_b..., prompt_b ⊕ l_b...]} ({@code [B]} ids each).
     */
    public static SequenceLogprobs logprobs(DecoderLm model, List<long[]> prompts, List<long[]> winners,
            List<long[]> losers, long padId) {
        Rows rows = rows(prompts, winners, losers, padId);
        // the rows written out, not Scorer's shared prompts: the reference side is scored pair by pair and
        // the policy's in batches (one process's, or a rank's share); a shared pass's values depend on the
        // batch at the level of rounding (the prefixes' padding), and a policy equal to its reference must
        // have margins of 0, not rounding noise whose signs set rewards/accuracies
        double[] all;
        try (GradMode noGrad = GradMode.noGrad(); Scope scope = Scope.open()) {
            all = Scorer.score(model, rows.prompts, rows.completions, padId).sequenceLogprobs().toDoubleArray();
        }
        int b = prompts.size();
        return new SequenceLogprobs(Arrays.copyOfRange(all, 0, b), Arrays.copyOfRange(all, b, 2 * b));
    }

    /**
     * Adds ∇L_i to {@code model}'s gradients: {@link Scorer#backwardWeighted} of the same rows with
     * {@link #weights}, inside a caller's scope. Returns the surrogate's value S_i (not L_i).
     */
    public static double backward(DecoderLm model, List<long[]> prompts, List<long[]> winners, List<long[]> losers,
            long padId, double[] weights, boolean checkpointing) {
        Rows rows = rows(prompts, winners, losers, padId);
        return Scorer.backwardWeighted(model, rows.prompts, rows.completions, padId, weights, checkpointing);
    }

    /** Prompts {@code [2B]} and completions {@code [2B]}: winners then losers, cut at the first pad. */
    private record Rows(List<long[]> prompts, List<long[]> completions) {
    }

    private static Rows rows(List<long[]> prompts, List<long[]> winners, List<long[]> losers, long padId) {
        if (winners.size() != prompts.size() || losers.size() != prompts.size()) {
            throw new IllegalArgumentException(prompts.size() + " prompts, " + winners.size() + " winners and "
                    + losers.size() + " losers: need one of each per pair");
        }
        List<long[]> rowPrompts = new ArrayList<>(prompts);
        rowPrompts.addAll(prompts);
        return new Rows(rowPrompts, java.util.stream.Stream.concat(winners.stream(), losers.stream())
                .map(c -> completionTokens(c, padId)).toList());
    }

    /** softplus(x) = log(1 + e^x), without overflow. */
    private static double softplus(double x) {
        return Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));
    }

    /** σ(x) = 1 / (1 + e^−x), without overflow. */
    private static double sigmoid(double x) {
        return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
    }

    /**
     * A NaN or infinite Δ (or loss) met before an optimizer step. The reference replaces such a loss
     * by 0.1; we stop, or a trainer with {@code skip_nonfinite_samples} drops {@link #pair()}.
     */
    public static final class NonFiniteDeltaException extends ArithmeticException {
        private static final long serialVersionUID = 1L;
        private final int agent;
        private final int pair;

        NonFiniteDeltaException(int agent, int pair, double value) {
            super(pair < 0 ? "the MADPO loss of agent " + agent + " is " + value
                    : "the DPO log-ratio Δ of agent " + agent + " for preference pair " + pair + " of the batch is "
                    + value + " (a sequence log-probability is not finite)");
            this.agent = agent;
            this.pair = pair;
        }

        public int agent() {
            return agent;
        }

        /** The pair's index in the batch, or −1 when the loss itself overflowed. */
        public int pair() {
            return pair;
        }
    }
}
