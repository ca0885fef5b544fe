package comlrl.rl;

/**
 * Reference-KL reward shaping (reference §2.6). The KL is a per-sequence <b>constant</b> computed at
 * rollout time (no gradient flows through it), subtracted from rewards/returns before the baseline.
 */
public final class ReferenceKl {
    private ReferenceKl() {}

    /**
     * Schulman's k3 term for one token: k3(d) = e^d − d − 1 with d = log p_ref − log p_pol; never
     * negative, 0 when the models agree. Computed as {@code expm1(d) − d} for accuracy near 0.
     */
    public static double k3(double logRatio) {
        return Math.expm1(logRatio) - logRatio;
    }

    /**
     * Per-sequence KL estimate over the response tokens t:
     * <pre>
     *   d_t = log p_ref(y_t) − log p_pol(y_t)
     *   KL  = Σ_t (e^{d_t} − d_t − 1)
     * </pre>
     * {@code policyLogprobs}, {@code referenceLogprobs}: {@code [T]}, the log-probability of each
     * response token under the policy and the frozen reference model.
     */
    public static double sequenceKl(double[] policyLogprobs, double[] referenceLogprobs) {
        if (policyLogprobs.length != referenceLogprobs.length) {
            throw new IllegalArgumentException("policy and reference log-probabilities must cover the same tokens: "
                    + policyLogprobs.length + " vs " + referenceLogprobs.length);
        }
        double kl = 0.0;
        for (int t = 0; t < policyLogprobs.length; t++) {
            double logRatio = referenceLogprobs[t] - policyLogprobs[t];
            kl += k3(logRatio);
        }
        return kl;
    }

    /**
     * The number of a completion's tokens the KL covers, as the reference counts them: the position
     * of the first pad id in the generated tokens, else all of them. With pad = eos (the usual case)
     * the final end-of-sequence token is left out; with a distinct pad token it is counted.
     */
    public static int responseLength(long[] completion, long padId) {
        for (int t = 0; t < completion.length; t++) {
            if (completion[t] == padId) {
                return t;
            }
        }
        return completion.length;
    }

    /** The penalty subtracted from a reward: β·KL (logged as {@code reference_kl_penalty}). */
    public static double penalty(double kl, double coef) {
        return coef * kl;
    }

    /** Shaped reward of one sample (IAC/MAAC): r' = r − β·KL. */
    public static double shapeReward(double reward, double kl, double coef) {
        return reward - penalty(kl, coef);
    }

    /**
     * Shaped returns of one agent's G completions (MAGRPO): R'_k = R_k − β·KL_k.
     * {@code returns}, {@code kls}: {@code [G]}; result {@code [G]}.
     */
    public static double[] shapeReturns(double[] returns, double[] kls, double coef) {
        if (returns.length != kls.length) {
            throw new IllegalArgumentException("need one KL per return: " + returns.length + " returns, "
                    + kls.length + " KL values");
        }
        double[] shaped = new double[returns.length];
        for (int k = 0; k < returns.length; k++) {
            shaped[k] = shapeReward(returns[k], kls[k], coef);
        }
        return shaped;
    }
}
