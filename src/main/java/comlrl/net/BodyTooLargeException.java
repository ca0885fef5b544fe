package comlrl.net;

import java.io.IOException;

/**
 * A response body is larger than the caller's cap (said by its {@code Content-Length}, or found
 * while reading, which stops there). Callers add the endpoint and the setting that raises the cap.
 */
public final class BodyTooLargeException extends IOException {
    private static final long serialVersionUID = 1L;

    private final long limit;

    BodyTooLargeException(long limit, String how) {
        super("the response body is larger than " + limit + " bytes (" + how + ")");
        this.limit = limit;
    }

    /** The cap that was exceeded, in bytes. */
    public long limit() {
        return limit;
    }
}
