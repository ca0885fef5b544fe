package comlrl.tensor;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.javacpp.chrono.Milliseconds;
import org.bytedeco.pytorch.ByteVector;
import org.bytedeco.pytorch.Store;
import org.bytedeco.pytorch.StringVector;
import org.bytedeco.pytorch.TCPStore;
import org.bytedeco.pytorch.TCPStoreOptions;

/**
 * libtorch's {@code c10d::TCPStore}: a key-value store served by one process (the server, rank 0)
 * over TCP, through which processes meet (rendezvous) and exchange small values. Safe to use from
 * several threads (requests on one connection are served one at a time); use {@link #newClient}
 * for a thread that must not wait behind another's request.
 *
 * <p>Deadlines: every request gives up after the store's {@link #timeout()}: a get or an await
 * waits that long for the key (then libtorch reports the timeout), a check, an add or a set that
 * long for the server's answer. libtorch's client bounds only the wait for a key: a server that
 * stops answering without closing its connections (a stopped or frozen process) would leave a
 * check, an add, or the cancellation of a timed-out wait blocked forever. So each connection's
 * requests run on a thread of their own, and the caller stops waiting at the deadline — the
 * timeout, plus {@link #WAIT_MARGIN} for requests that wait for a key, so that libtorch's own
 * report comes first while the server answers — with a {@link CommunicationException} that
 * {@link CommunicationException#timedOut() timed out}. The connection is then unusable: later
 * requests fail at once, and closing it leaves the native connection to the process's exit.
 */
public final class TcpStore implements AutoCloseable {
    /**
     * How much longer than the timeout a request that waits for a key (or connecting, which retries
     * until the timeout) may take before the caller stops waiting: libtorch then cancels the wait, an
     * exchange that takes milliseconds when the server answers.
     */
    public static final Duration WAIT_MARGIN = Duration.ofSeconds(2);

    private final Store store;
    private final String host;
    private final int port;
    private final Requests requests;
    private volatile Duration timeout;
    private volatile boolean closed;

    private TcpStore(Store store, String host, int port, Requests requests, Duration timeout) {
        this.store = store;
        this.host = host;
        this.port = port;
        this.requests = requests;
        this.timeout = timeout;
    }

    /**
     * Connects to the store at {@code host:port}, or, for the server, listens on {@code port}
     * (all interfaces) and connects to itself; a server given port 0 listens on a free port the
     * system picks ({@link #port()} tells which), so that nothing can take it between choosing and
     * binding. A client retries until the server is up or {@code timeout} has passed; {@code timeout}
     * is then the timeout of every request.
     */
    public static TcpStore connect(String host, int port, boolean server, Duration timeout) {
        if (port < (server ? 0 : 1) || port > 65535) {
            throw new IllegalArgumentException("Port must be in 1..65535" + (server ? " (or 0: any free port)" : "")
                    + ", got " + port);
        }
        Engine.init();
        Requests requests = new Requests(host + ":" + port);
        Store store = requests.run("connecting to the store", timeout.plus(WAIT_MARGIN), () -> {
            try (PointerScope scope = new PointerScope()) {
                TCPStoreOptions options = new TCPStoreOptions();
                options.port((short) port); // uint16_t
                options.isServer(server);
                options.waitWorkers(false);
                options.timeout(millis(timeout));
                TCPStore s = new TCPStore(host, options);
                s.retainReference(); // outlives the scope; released by close()
                return s;
            }
        });
        int bound = port == 0 ? Short.toUnsignedInt(((TCPStore) store).getPort()) : port; // uint16_t
        return new TcpStore(store, host, bound, requests, timeout);
    }

    /** Another connection to the same store, with its own timeout (for a second thread). */
    public TcpStore newClient(Duration timeout) {
        Requests own = new Requests(host + ":" + port);
        Store client = own.run("connecting to the store", timeout.plus(WAIT_MARGIN), () -> {
            try (PointerScope scope = new PointerScope()) {
                Store c = store.clone();
                c.setTimeout(millis(timeout));
                c.retainReference();
                return c;
            }
        });
        return new TcpStore(client, host, port, own, timeout);
    }

    public String host() {
        return host;
    }

    /** The store's port (for a server started on port 0: the one it listens on). */
    public int port() {
        return port;
    }

    /** How long each request may take (the timeout given when connecting, unless {@link #setTimeout} changed it). */
    public Duration timeout() {
        return timeout;
    }

    /** Sets the timeout of the requests that follow on this connection. */
    public void setTimeout(Duration value) {
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException("The store's timeout must be positive, got " + value);
        }
        requests.run("setting the timeout", timeout, () -> {
            store.setTimeout(millis(value));
            return null;
        });
        timeout = value;
    }

    public void set(String key, byte[] value) {
        requests.run("set " + key, timeout, () -> {
            try (PointerScope scope = new PointerScope()) {
                store.set(key, new ByteVector(value));
                return null;
            }
        });
    }

    public void set(String key, String value) {
        set(key, value.getBytes(StandardCharsets.UTF_8));
    }

    /** The value of {@code key}, waiting (up to the timeout) until some process sets it. */
    public byte[] get(String key) {
        return requests.run("get " + key, timeout.plus(WAIT_MARGIN), () -> {
            try (PointerScope scope = new PointerScope()) {
                return store.get(key).get();
            }
        });
    }

    public String getString(String key) {
        return new String(get(key), StandardCharsets.UTF_8);
    }

    /** Adds {@code delta} to the integer at {@code key} (0 when unset) and returns the new value. */
    public long add(String key, long delta) {
        return requests.run("add " + key, timeout, () -> store.add(key, delta));
    }

    /** Whether every key is set, without waiting. */
    public boolean contains(List<String> keys) {
        return requests.run("check " + keys, timeout, () -> {
            try (PointerScope scope = new PointerScope()) {
                return store.check(new StringVector(keys.toArray(new String[0])));
            }
        });
    }

    /** Waits until every key is set, for at most {@code timeout}. */
    public void await(List<String> keys, Duration timeout) {
        requests.run("wait for " + keys, timeout.plus(WAIT_MARGIN), () -> {
            try (PointerScope scope = new PointerScope()) {
                store._wait(new StringVector(keys.toArray(new String[0])), millis(timeout));
                return null;
            }
        });
    }

    /**
     * Runs {@code body}, which uses this store's native handle (a process group forming through it),
     * on this connection's thread, waiting for it at most {@code limit}.
     */
    <T> T bounded(String what, Duration limit, Callable<T> body) {
        return requests.run(what, limit, body);
    }

    Store handle() {
        return store;
    }

    /**
     * Closes this connection; closing the server's stops the store for everyone. A connection whose
     * request never returned is left to the process's exit (its thread is still inside it).
     */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            requests.close(store);
        }
    }

    private static Milliseconds millis(Duration d) {
        return new Milliseconds(Math.max(1, d.toMillis()));
    }

    /** The thread one connection's requests run on, and the deadline the callers wait with. */
    private static final class Requests {
        private final String address;
        private final ExecutorService thread;
        private volatile String stuck; // the request that never returned, or null

        Requests(String address) {
            this.address = address;
            this.thread = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "comlrl-store-" + address);
                t.setDaemon(true); // one blocked forever inside libtorch must not keep the JVM alive
                return t;
            });
        }

        <T> T run(String what, Duration limit, Callable<T> request) {
            String blocked = stuck;
            if (blocked != null) {
                throw CommunicationException.timeout("the store at " + address + " stopped answering (" + blocked
                        + " got no answer), so " + what + " cannot be sent");
            }
            Future<T> future;
            try {
                future = thread.submit(request);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                throw new IllegalStateException("This store connection is closed", e);
            }
            try {
                return future.get(limit.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                stuck = what;
                throw CommunicationException.timeout(what + ": the store at " + address + " did not answer within "
                        + String.format(Locale.ROOT, "%.1f s", limit.toMillis() / 1000.0)
                        + " (the process serving it, rank 0, is stopped, frozen or overloaded, or the network is down)");
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException r) {
                    throw r instanceof CommunicationException || r instanceof IllegalArgumentException
                            || r instanceof IllegalStateException ? r : CommunicationException.of(r);
                }
                if (cause instanceof Error error) {
                    throw error;
                }
                throw new IllegalStateException(what + " failed: " + cause, cause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw CommunicationException.interrupted(what + " on the store at " + address + " was interrupted");
            }
        }

        void close(Store store) {
            if (stuck == null) {
                try {
                    run("closing the connection", WAIT_MARGIN, () -> {
                        store.releaseReference();
                        return null;
                    });
                } catch (RuntimeException e) {
                    // gone either way: the process's exit reclaims what is left
                }
            }
            thread.shutdown();
        }
    }
}
