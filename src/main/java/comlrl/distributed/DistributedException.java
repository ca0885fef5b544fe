package comlrl.distributed;

import java.util.List;

/**
 * A multi-process run cannot go on: a collective operation or the rendezvous failed or timed out.
 * The message says which operation, on which rank, after how long, and what the other ranks were
 * doing when it failed ({@link #suspects()}: the ranks found to have died, stopped or gone elsewhere).
 */
public final class DistributedException extends RuntimeException {
    private final List<Integer> suspects;

    DistributedException(String message, List<Integer> suspects, Throwable cause) {
        super(message, cause);
        this.suspects = List.copyOf(suspects);
    }

    /** The other ranks that were not where this one was: exited, not responding, or in another operation. */
    public List<Integer> suspects() {
        return suspects;
    }

    /**
     * An error in words even when it carries no message (a native error, an out-of-memory error):
     * its kind, its message, and where it was thrown when it has no message.
     */
    public static String describe(Throwable e) {
        String message = e.getMessage();
        if (message != null && !message.isBlank()) {
            return e.getClass().getSimpleName() + ": " + message.strip();
        }
        StackTraceElement[] at = e.getStackTrace();
        return e.getClass().getName() + " (no message" + (at.length > 0 ? ", thrown at " + at[0] : "") + ")";
    }
}
