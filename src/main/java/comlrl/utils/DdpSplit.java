package comlrl.utils;

import java.util.Locale;

/**
 * {@code ddp_split}: how {@code parallel_training: ddp} divides one training run between its
 * processes (ranks). Either way the run computes what the single-process run computes, with the
 * same seeds.
 */
public enum DdpSplit {
    /**
     * Every rank holds every agent; the G completions of each group are split across ranks (rank r
     * samples, scores and backpropagates completions r, r + W, ...), rewards are computed once on
     * rank 0, and the gradients are summed across ranks before each optimizer step.
     */
    DATA("data"),
    /**
     * Agent i lives on rank {@code i mod W} only (generation, reference KL, updates); completions
     * are exchanged so that rank 0 computes every joint reward once and every rank sees them.
     */
    AGENTS("agents");

    private final String configName;

    DdpSplit(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    /** "data" (also null) or "agents", case and blanks ignored. */
    public static DdpSplit parse(String value) {
        if (value == null) {
            return DATA;
        }
        String key = value.trim().toLowerCase(Locale.ROOT);
        for (DdpSplit s : values()) {
            if (s.configName.equals(key)) {
                return s;
            }
        }
        throw new IllegalArgumentException("ddp_split must be \"data\" (every rank holds every agent, the completions "
                + "of a group are split) or \"agents\" (each rank holds some of the agents), got \"" + value + "\"");
    }

    @Override
    public String toString() {
        return configName;
    }
}
