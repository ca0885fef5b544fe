package comlrl.rl;

/** Small descriptive statistics over {@code double[]} used by the RL math and by metrics. */
public final class Stats {
    private Stats() {}

    /**
     * The fraction of pairs b whose chosen score beats its rejected one strictly:
     * {@code (1/|B|) Σ_b [chosen_b > rejected_b]} (a tie counts as wrong). {@code chosen},
     * {@code rejected}: {@code [B]}, B ≥ 1.
     */
    public static double pairAccuracy(double[] chosen, double[] rejected) {
        if (chosen.length != rejected.length || chosen.length == 0) {
            throw new IllegalArgumentException("pair accuracy needs one rejected score per chosen one and at least one "
                    + "pair: " + chosen.length + " chosen, " + rejected.length + " rejected");
        }
        int right = 0;
        for (int b = 0; b < chosen.length; b++) {
            right += chosen[b] > rejected[b] ? 1 : 0;
        }
        return (double) right / chosen.length;
    }

    /** mean(x) = (1/n) Σ_i x_i; fails on an empty array. */
    public static double mean(double[] x) {
        requireNonEmpty(x);
        double sum = 0.0;
        for (double v : x) {
            sum += v;
        }
        return sum / x.length;
    }

    /** sum(x) = Σ_i x_i (0 for an empty array). */
    public static double sum(double[] x) {
        double sum = 0.0;
        for (double v : x) {
            sum += v;
        }
        return sum;
    }

    /** max(x); fails on an empty array. */
    public static double max(double[] x) {
        requireNonEmpty(x);
        double max = x[0];
        for (double v : x) {
            max = Math.max(max, v);
        }
        return max;
    }

    /**
     * Population standard deviation (PyTorch {@code std(unbiased=False)}):
     * std_pop(x) = sqrt( (1/n) Σ_i (x_i − mean x)^2 ).
     */
    public static double populationStd(double[] x) {
        double mean = mean(x);
        double squares = 0.0;
        for (double v : x) {
            squares += (v - mean) * (v - mean);
        }
        return Math.sqrt(squares / x.length);
    }

    private static void requireNonEmpty(double[] x) {
        if (x == null || x.length == 0) {
            throw new IllegalArgumentException("expected at least one value, got an empty array");
        }
    }
}
