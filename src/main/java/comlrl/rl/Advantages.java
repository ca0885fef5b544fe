package comlrl.rl;

/**
 * Advantages of one group (one agent at one rollout-tree node): a baseline from
 * {@link AdvantageMode}, then optional z-normalisation.
 */
public final class Advantages {
    /** Floor of the standard deviation in {@link #normalize(double[])}. */
    public static final double STD_FLOOR = 1e-6;

    private Advantages() {}

    /**
     * z-normalisation within the group, applied only when G &gt; 1:
     * <pre>
     *   A_k ← (A_k − mean(A)) / max(std_pop(A), 1e-6)
     * </pre>
     * With G = 1 the input is returned unchanged (copied). {@code advantages}: {@code [G]}.
     */
    public static double[] normalize(double[] advantages) {
        if (advantages.length <= 1) {
            return advantages.clone();
        }
        return centerAndScale(advantages, Math.max(Stats.populationStd(advantages), STD_FLOOR));
    }

    /**
     * {@code A_k ← (A_k − mean(A)) / scale}, only when G &gt; 1 (else a copy): {@link #normalize(double[])}
     * with a scale given, e.g. a standard deviation over more than the group.
     */
    public static double[] centerAndScale(double[] advantages, double scale) {
        if (advantages.length <= 1) {
            return advantages.clone();
        }
        double mean = Stats.mean(advantages);
        double[] normalized = new double[advantages.length];
        for (int k = 0; k < advantages.length; k++) {
            normalized[k] = (advantages[k] - mean) / scale;
        }
        return normalized;
    }

    /**
     * The per-completion advantages the MA-REINFORCE loss uses:
     * {@code A = mode.advantages(R)}, then {@link #normalize(double[])} if {@code normalize}.
     * {@code returns}: {@code [G]} (already reference-KL shaped when enabled).
     */
    public static double[] compute(double[] returns, AdvantageMode mode, boolean normalize) {
        double[] advantages = mode.advantages(returns);
        return normalize ? normalize(advantages) : advantages;
    }
}
