package comlrl.trainers.common;

import comlrl.trainers.ExternalTransition;

/**
 * A {@link TrainerBuilder} that also takes the trainer's config ({@code args}, of type {@code C}) and the
 * external transition of multi-turn runs (single-turn trainers refuse it).
 */
public abstract class ConfiguredBuilder<C, B extends ConfiguredBuilder<C, B>> extends TrainerBuilder<B> {
    private C args;

    /** {@code args}: the trainer's config (required). */
    public B args(C args) {
        this.args = args;
        return self();
    }

    public C args() {
        return args;
    }

    /** {@code external_transition}: the next turn's prompts (required when {@code num_turns > 1}). */
    public B externalTransition(ExternalTransition externalTransition) {
        return set(TrainerSettings.EXTERNAL_TRANSITION, externalTransition);
    }

    /** Checks, before any model loads, the reward, training set, transition (multi-turn), log history limit. */
    public void requireCommon(String algorithmName, int numTurns) {
        requireRewardAndTrainData();
        if (numTurns > 1 && get(TrainerSettings.EXTERNAL_TRANSITION) == null) {
            throw new IllegalArgumentException("Multi-turn " + algorithmName + " requires an external_transition.");
        }
        if (get(TrainerSettings.LOG_HISTORY_LIMIT) < 0) {
            throw new IllegalArgumentException("log_history_limit must be >= 0, got "
                    + get(TrainerSettings.LOG_HISTORY_LIMIT));
        }
    }
}
