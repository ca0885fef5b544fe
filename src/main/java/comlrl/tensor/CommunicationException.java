package comlrl.tensor;

import java.util.Locale;

/**
 * A failed exchange with other processes ({@link TcpStore}, {@link ProcessGroup}): a peer closed
 * its connection, an operation timed out, an address could not be reached. The message is
 * libtorch's, first line only, without its source-file prefix.
 */
public final class CommunicationException extends RuntimeException {
    private final boolean timedOut;

    CommunicationException(String message, boolean timedOut, Throwable cause) {
        super(message, cause);
        this.timedOut = timedOut;
    }

    /** Whether the operation ran out of time (rather than failing on a closed or refused connection). */
    public boolean timedOut() {
        return timedOut;
    }

    /** Wraps a native error: its first line, without the {@code [/path/file.cc:123] } prefix. */
    static CommunicationException of(RuntimeException e) {
        String text = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        String first = text.lines().map(String::strip).filter(l -> !l.isEmpty()).findFirst().orElse(text);
        first = first.replaceFirst("^\\[[^\\]\\s]+:\\d+\\]\\s*", "");
        String lower = first.toLowerCase(Locale.ROOT);
        return new CommunicationException(first, lower.contains("timed out") || lower.contains("timeout"), e);
    }

    /** A timeout we detected ourselves (a wait that returned without completing). */
    static CommunicationException timeout(String what) {
        return new CommunicationException(what, true, null);
    }

    /** A wait that this thread's interruption ended (the thread's interrupt flag is set again). */
    static CommunicationException interrupted(String what) {
        return new CommunicationException(what, false, null);
    }
}
