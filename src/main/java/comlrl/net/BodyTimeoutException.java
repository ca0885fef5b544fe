package comlrl.net;

import java.net.http.HttpTimeoutException;
import java.util.Locale;

/**
 * A response body did not arrive in time: either nothing came for the stall limit
 * ({@link #stalled()}), or the body was not complete by the response's deadline. The message says
 * which and how much had arrived; callers add the endpoint.
 */
public final class BodyTimeoutException extends HttpTimeoutException {
    private static final long serialVersionUID = 1L;

    private final boolean stalled;
    private final long bytesRead;

    BodyTimeoutException(boolean stalled, long stallNanos, long bytesRead) {
        super(stalled
                ? String.format(Locale.ROOT, "no data for %s s after %d byte(s) of the body", seconds(stallNanos), bytesRead)
                : "the body was not complete by the response's deadline (" + bytesRead + " byte(s) received)");
        this.stalled = stalled;
        this.bytesRead = bytesRead;
    }

    /** True when nothing arrived for the stall limit; false when the whole-response deadline passed. */
    public boolean stalled() {
        return stalled;
    }

    /** Bytes of the body read before it timed out. */
    public long bytesRead() {
        return bytesRead;
    }

    /** {@code nanos} in seconds, without a fraction when whole ("2", "0.3"). */
    static String seconds(long nanos) {
        double s = nanos / 1e9;
        return s == Math.rint(s) ? Long.toString((long) s) : Double.toString(Math.round(s * 1000) / 1000.0);
    }
}
