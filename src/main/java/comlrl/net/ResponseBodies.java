package comlrl.net;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Response bodies that cannot hang a run or fill its memory. The JDK's {@code HttpRequest.timeout}
 * covers only the wait for the response headers; a server that then sends part of a body and goes
 * silent, or drips it a byte at a time, would hold a reader for ever. The handlers here give a
 * stream whose every read gives up (cancelling the transfer, {@link BodyTimeoutException}):
 * <ul>
 *   <li>{@link #stallLimited}: when nothing arrives for the stall limit, however long the whole
 *       transfer takes while data keeps coming (a multi-GB download over a slow link);
 *   <li>{@link #withDeadline}: that, and when the body is not complete by a deadline that covers the
 *       whole response (an API answer of a few kB).
 * </ul>
 * {@link #readAtMost} reads such a body into memory, stopping at a cap ({@link BodyTooLargeException}).
 *
 * <pre>{@code
 * long deadline = System.nanoTime() + timeout.toNanos();
 * HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).build();  // the headers' wait
 * HttpResponse<InputStream> response = client.send(request, ResponseBodies.withDeadline(timeout, deadline));
 * byte[] body = ResponseBodies.readAtMost(response, 8 << 20);
 * }</pre>
 */
public final class ResponseBodies {
    private ResponseBodies() {}

    /**
     * Bodies whose reads fail after {@code stall} without data, with no limit on the whole transfer.
     *
     * @param stall the longest wait for the next piece of the body, > 0
     */
    public static HttpResponse.BodyHandler<InputStream> stallLimited(Duration stall) {
        long stallNanos = positiveNanos(stall);
        return info -> new TimedBodyStream(stallNanos, 0, false);
    }

    /**
     * Bodies whose reads fail after {@code stall} without data, or once {@link System#nanoTime()}
     * passes {@code deadlineNanos}: with {@code deadlineNanos} taken before the request is sent and
     * the request's own timeout no later, the whole response (headers and body) ends by then.
     *
     * @param stall         the longest wait for the next piece of the body, > 0
     * @param deadlineNanos a {@link System#nanoTime()} value
     */
    public static HttpResponse.BodyHandler<InputStream> withDeadline(Duration stall, long deadlineNanos) {
        long stallNanos = positiveNanos(stall);
        return info -> new TimedBodyStream(stallNanos, deadlineNanos, true);
    }

    /**
     * The whole body of {@code response}, if it holds at most {@code maxBytes}: a larger
     * {@code Content-Length} fails before anything is read, a longer body (chunked, or lying about
     * its length) as soon as the cap is passed. Either way the body is closed.
     *
     * @throws BodyTooLargeException past the cap
     * @throws IOException           when reading fails (a {@link BodyTimeoutException} for a stalled or late body)
     */
    public static byte[] readAtMost(HttpResponse<InputStream> response, long maxBytes) throws IOException {
        Objects.requireNonNull(response, "response");
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes must be >= 0, got " + maxBytes);
        }
        try (InputStream in = response.body()) {
            OptionalLong announced = response.headers().firstValueAsLong("Content-Length");
            if (announced.isPresent() && announced.getAsLong() > maxBytes) {
                throw new BodyTooLargeException(maxBytes, "Content-Length: " + announced.getAsLong());
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            long total = 0;
            for (int n; (n = in.read(buffer)) >= 0; ) {
                total += n;
                if (total > maxBytes) {
                    throw new BodyTooLargeException(maxBytes, "more arrived; the rest was not read");
                }
                out.write(buffer, 0, n);
            }
            return out.toByteArray();
        } catch (NumberFormatException e) {
            throw new IOException("the server sent a Content-Length that is not a number", e);
        }
    }

    private static long positiveNanos(Duration d) {
        Objects.requireNonNull(d, "stall");
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("a stall limit must be > 0, got " + d);
        }
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE; // centuries: no limit in practice
        }
    }
}
