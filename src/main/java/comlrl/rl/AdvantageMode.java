package comlrl.rl;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Baseline of the MA-REINFORCE family: how the G returns of one agent at one rollout-tree node
 * (one group, shape {@code [G]}) become advantages before the optional normalisation of
 * {@link Advantages#normalize(double[])}.
 *
 * <p>Config strings: {@code "mean"} (MAGRPO), {@code "raw"} (MAREINFORCE), {@code "max"} (MAReMax),
 * {@code "rloo"} (MARLOO). With advantage normalisation on (the default) all four give the same
 * normalised advantages, since each differs from {@code R − mean(R)} by a shift or a positive scale;
 * they differ only with normalisation off (reference §3.4, §14 item 4).
 */
public enum AdvantageMode {
    /** A_k = R_k − mean(R). */
    MEAN("mean") {
        @Override
        public double[] advantages(double[] returns) {
            double baseline = Stats.mean(returns);
            double[] advantages = new double[returns.length];
            for (int k = 0; k < returns.length; k++) {
                advantages[k] = returns[k] - baseline;
            }
            return advantages;
        }
    },
    /** A_k = R_k (no baseline). */
    RAW("raw") {
        @Override
        public double[] advantages(double[] returns) {
            requireNonEmpty(returns);
            return returns.clone();
        }
    },
    /** A_k = R_k − max(R). */
    MAX("max") {
        @Override
        public double[] advantages(double[] returns) {
            double baseline = Stats.max(returns);
            double[] advantages = new double[returns.length];
            for (int k = 0; k < returns.length; k++) {
                advantages[k] = returns[k] - baseline;
            }
            return advantages;
        }
    },
    /**
     * Leave-one-out: A_k = (G·R_k − Σ_l R_l) / (G − 1) = R_k − mean_{l≠k} R_l; with G ≤ 1 it falls
     * back to {@link #MEAN} (as the reference does).
     */
    RLOO("rloo") {
        @Override
        public double[] advantages(double[] returns) {
            int g = returns.length;
            if (g <= 1) {
                return MEAN.advantages(returns);
            }
            double total = Stats.sum(returns);
            double[] advantages = new double[g];
            for (int k = 0; k < g; k++) {
                advantages[k] = (g * returns[k] - total) / (g - 1);
            }
            return advantages;
        }
    };

    private final String configName;

    AdvantageMode(String configName) {
        this.configName = configName;
    }

    /**
     * Advantages of one group. {@code returns}: {@code [G]}, not modified; result {@code [G]}.
     * Fails on an empty array.
     */
    public abstract double[] advantages(double[] returns);

    /** The config-file spelling: "mean", "raw", "max" or "rloo". */
    public String configName() {
        return configName;
    }

    /**
     * Parses a config value ("mean", "raw", "max", "rloo"; case and surrounding blanks ignored).
     *
     * @throws IllegalArgumentException naming the valid values
     */
    public static AdvantageMode parse(String value) {
        if (value != null) {
            String key = value.trim().toLowerCase(Locale.ROOT);
            for (AdvantageMode mode : values()) {
                if (mode.configName.equals(key)) {
                    return mode;
                }
            }
        }
        throw new IllegalArgumentException("advantage_mode must be one of "
                + Arrays.stream(values()).map(m -> "\"" + m.configName + "\"").collect(Collectors.joining(", "))
                + " (got " + (value == null ? "null" : "\"" + value + "\"") + ")");
    }

    @Override
    public String toString() {
        return configName;
    }

    private static void requireNonEmpty(double[] returns) {
        if (returns == null || returns.length == 0) {
            throw new IllegalArgumentException("expected at least one return, got an empty array");
        }
    }
}
