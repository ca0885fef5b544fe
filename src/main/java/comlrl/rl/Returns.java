package comlrl.rl;

/** Returns along one trajectory of per-turn rewards (evaluation and actor-critic logging). */
public final class Returns {
    private Returns() {}

    /**
     * Undiscounted suffix sums: R_t = Σ_{s ≥ t} r_s (MAGRPO's {@code eval/turn_t/expected_return}).
     * {@code rewards}: {@code [T]}; result {@code [T]}.
     */
    public static double[] suffixSums(double[] rewards) {
        return discountedSuffixSums(rewards, 1.0);
    }

    /**
     * Discounted suffix sums: G_{T−1} = r_{T−1}, G_t = r_t + γ·G_{t+1}.
     * {@code rewards}: {@code [T]}; result {@code [T]}.
     */
    public static double[] discountedSuffixSums(double[] rewards, double discount) {
        double[] returns = new double[rewards.length];
        double next = 0.0;
        for (int t = rewards.length - 1; t >= 0; t--) {
            returns[t] = rewards[t] + discount * next;
            next = returns[t];
        }
        return returns;
    }
}
