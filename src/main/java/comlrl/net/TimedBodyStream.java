package comlrl.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A response body as an {@link InputStream} whose reads give up: one that waits longer than the
 * stall limit for the next piece of the body, or that would end past the deadline, cancels the
 * transfer and throws {@link BodyTimeoutException}. (The JDK's own stream waits for ever once the
 * headers have arrived.)
 *
 * <p>It is the body's subscriber too: it asks the client for one list of buffers at a time, asking
 * for the next as soon as it takes one, so at most two lists are held however fast the server sends.
 * Reads are synchronized; {@link #close()} may come from any thread and cancels the transfer.
 */
final class TimedBodyStream extends InputStream implements HttpResponse.BodySubscriber<InputStream> {
    /** The end of the body, as queued by {@link #onComplete()}. */
    private static final Object END = new Object();

    /** The client's failure, as queued by {@link #onError(Throwable)}. */
    private record Failure(Throwable error) {}

    private final long stallNanos;
    private final boolean hasDeadline;
    private final long deadlineNanos;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final AtomicReference<Flow.Subscription> subscription = new AtomicReference<>();
    private volatile boolean closed;

    // the reading side, guarded by this
    private Iterator<ByteBuffer> buffers = Collections.emptyIterator();
    private ByteBuffer current;
    private boolean ended;
    private IOException failure;
    private long bytesRead;

    /**
     * @param stallNanos    the longest wait for the next piece of the body, > 0
     * @param deadlineNanos the {@link System#nanoTime()} by which the whole body must be read
     * @param hasDeadline   whether {@code deadlineNanos} applies
     */
    TimedBodyStream(long stallNanos, long deadlineNanos, boolean hasDeadline) {
        this.stallNanos = stallNanos;
        this.deadlineNanos = deadlineNanos;
        this.hasDeadline = hasDeadline;
    }

    // ------------------------------------------------------------------ subscriber side (client threads)

    @Override
    public void onSubscribe(Flow.Subscription s) {
        if (!subscription.compareAndSet(null, s) || closed) {
            s.cancel();
            return;
        }
        s.request(1);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
        if (!closed) {
            queue.add(items);
        }
    }

    @Override
    public void onError(Throwable error) {
        queue.add(new Failure(error));
    }

    @Override
    public void onComplete() {
        queue.add(END);
    }

    @Override
    public CompletionStage<InputStream> getBody() {
        return CompletableFuture.completedStage(this);
    }

    // ------------------------------------------------------------------ reading side

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (closed) {
            throw new IOException("the response body is closed");
        }
        if (failure != null) {
            throw failure;
        }
        if (len == 0) {
            return 0;
        }
        while (current == null || !current.hasRemaining()) {
            if (buffers.hasNext()) {
                current = buffers.next();
                continue;
            }
            if (ended) {
                return -1;
            }
            Object item = next();
            if (item == END) {
                ended = true;
                return -1;
            }
            if (item instanceof Failure f) {
                ended = true;
                failure = f.error() instanceof IOException io ? io : new IOException(f.error().toString(), f.error());
                throw failure;
            }
            @SuppressWarnings("unchecked")
            List<ByteBuffer> list = (List<ByteBuffer>) item;
            buffers = list.iterator();
            current = null;
            Flow.Subscription s = subscription.get();
            if (s != null) {
                s.request(1); // the next list arrives while this one is read
            }
        }
        int n = Math.min(len, current.remaining());
        current.get(b, off, n);
        bytesRead += n;
        return n;
    }

    /** The next item of the queue, waiting at most the stall limit and never past the deadline. */
    private Object next() throws IOException {
        long wait = stallNanos;
        if (hasDeadline) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                throw timeOut(false);
            }
            wait = Math.min(wait, left);
        }
        Object item;
        try {
            item = queue.poll(wait, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cancel();
            failure = new InterruptedIOException("interrupted while reading the response body");
            throw failure;
        }
        if (item == null) {
            throw timeOut(!hasDeadline || deadlineNanos - System.nanoTime() > 0);
        }
        return item;
    }

    private IOException timeOut(boolean stalled) {
        cancel();
        failure = new BodyTimeoutException(stalled, stallNanos, bytesRead);
        return failure;
    }

    /** Bytes handed out by {@link #read} so far. */
    synchronized long bytesRead() {
        return bytesRead;
    }

    /** Cancels the transfer (the client then drops the connection) and drops what was queued. */
    @Override
    public void close() {
        closed = true;
        cancel();
        queue.clear();
    }

    private void cancel() {
        Flow.Subscription s = subscription.get();
        if (s != null) {
            s.cancel();
        }
    }
}
