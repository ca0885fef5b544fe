package comlrl.trainers.preference;

import comlrl.utils.ConfigNames;

/**
 * {@code dpo_reference}: what each agent's DPO log-ratio Δ is measured against. Not in the
 * reference, whose MADPO loss is reference-free (§7.2, §14 item 7).
 */
public enum DpoReference {
    /** Reference-free, as the reference: {@code Δ = log π(w | x) − log π(l | x)}. The default. */
    NONE,
    /**
     * Standard DPO against a frozen copy of the agent's initial policy π_ref:
     * {@code Δ = (log π(w | x) − log π_ref(w | x)) − (log π(l | x) − log π_ref(l | x))}, π_ref's
     * log-probabilities computed once per pair.
     */
    FROZEN_INITIAL;

    /**
     * Δ of one agent and one pair from its sequence log-probabilities (sums over the completion
     * tokens before the first pad) under the policy and the frozen reference ({@link #NONE} ignores those).
     */
    public double delta(double policyWinner, double policyLoser, double referenceWinner, double referenceLoser) {
        return switch (this) {
            case NONE -> policyWinner - policyLoser;
            case FROZEN_INITIAL -> (policyWinner - referenceWinner) - (policyLoser - referenceLoser);
        };
    }

    /** Whether the loss needs a frozen reference model per agent. */
    public boolean needsReference() {
        return this != NONE;
    }

    /** The config spelling: "none" or "frozen_initial". */
    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Parses "none" or "frozen_initial" (case and surrounding blanks ignored); null means "none". */
    public static DpoReference parse(String value) {
        return ConfigNames.parse("dpo_reference", value, NONE, values(), DpoReference::configName, ": \"none\" is "
                + "reference-free, as the reference implementation; \"frozen_initial\" is standard DPO against a frozen "
                + "copy of each agent's initial policy");
    }

    @Override
    public String toString() {
        return configName();
    }
}
