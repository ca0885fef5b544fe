package comlrl.rl;

import java.util.OptionalLong;

/**
 * Decides which training log entries are emitted, with the reference's {@code _should_log_train}
 * semantics:
 * <ul>
 *   <li>{@code logging_steps ≤ 1}: every call logs;</li>
 *   <li>otherwise the first call logs, and later calls log only when
 *       {@code step − lastLoggedStep ≥ logging_steps}.</li>
 * </ul>
 * A call that logs records its step. Several entries at the same step (one per agent) therefore pass
 * only once when {@code logging_steps > 1}. Not thread-safe; one per trainer.
 */
public final class TrainLogGate {
    private final int loggingSteps;
    private long lastLoggedStep;
    private boolean loggedAny;

    /** A gate with the minimum env_step gap {@code loggingSteps} (values ≤ 1 log everything). */
    public TrainLogGate(int loggingSteps) {
        this.loggingSteps = loggingSteps;
    }

    /** Whether the entry at {@code step} is logged; if so, records {@code step} as the last logged one. */
    public boolean shouldLog(long step) {
        if (loggingSteps <= 1 || !loggedAny || step - lastLoggedStep >= loggingSteps) {
            loggedAny = true;
            lastLoggedStep = step;
            return true;
        }
        return false;
    }

    /** The step of the last logged entry, empty before the first. */
    public OptionalLong lastLoggedStep() {
        return loggedAny ? OptionalLong.of(lastLoggedStep) : OptionalLong.empty();
    }

    /** Restores the gate from a checkpoint: as if an entry had been logged at {@code step}. */
    public void restore(long step) {
        loggedAny = true;
        lastLoggedStep = step;
    }

    public int loggingSteps() {
        return loggingSteps;
    }
}
