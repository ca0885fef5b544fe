package comlrl.tensor;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.javacpp.chrono.Milliseconds;
import org.bytedeco.pytorch.ByteVector;
import org.bytedeco.pytorch.Store;
import org.bytedeco.pytorch.StringVector;
import org.bytedeco.pytorch.TCPStore;
import org.bytedeco.pytorch.TCPStoreOptions;

/**
 * libtorch's {@code c10d::TCPStore}: a key-value store served by one process (the server, rank 0)
 * over TCP, through which processes meet (rendezvous) and exchange small values. Every blocking
 * operation gives up after the store's timeout. Safe to use from several threads (libtorch
 * serialises a client's requests); use {@link #newClient()} for a thread that must not wait
 * behind another's request.
 */
public final class TcpStore implements AutoCloseable {
    private final Store store;
    private final String host;
    private final int port;
    private volatile boolean closed;

    private TcpStore(Store store, String host, int port) {
        this.store = store;
        this.host = host;
        this.port = port;
    }

    /**
     * Connects to the store at {@code host:port}, or, for the server, listens on {@code port}
     * (all interfaces) and connects to itself. A client retries until the server is up or
     * {@code timeout} has passed.
     */
    public static TcpStore connect(String host, int port, boolean server, Duration timeout) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("Port must be in 1..65535, got " + port);
        }
        Engine.init();
        try (PointerScope scope = new PointerScope()) {
            TCPStoreOptions options = new TCPStoreOptions();
            options.port((short) port); // uint16_t
            options.isServer(server);
            options.waitWorkers(false);
            options.timeout(new Milliseconds(timeout.toMillis()));
            TCPStore store = new TCPStore(host, options);
            store.retainReference(); // outlives the scope; released by close()
            return new TcpStore(store, host, port);
        } catch (RuntimeException e) {
            throw CommunicationException.of(e);
        }
    }

    /** Another connection to the same store, with its own timeout (for a second thread). */
    public TcpStore newClient(Duration timeout) {
        try (PointerScope scope = new PointerScope()) {
            Store client = store.clone();
            client.setTimeout(new Milliseconds(timeout.toMillis()));
            client.retainReference();
            return new TcpStore(client, host, port);
        } catch (RuntimeException e) {
            throw CommunicationException.of(e);
        }
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    public void set(String key, byte[] value) {
        try (PointerScope scope = new PointerScope()) {
            store.set(key, new ByteVector(value));
        } catch (RuntimeException e) {
            throw CommunicationException.of(e);
        }
    }

    public void set(String key, String value) {
        set(key, value.getBytes(StandardCharsets.UTF_8));
    }

    /** The value of {@code key}, waiting (up to the timeout) until some process sets it. */
    public byte[] get(String key) {
        try (PointerScope scope = new PointerScope()) {
            return store.get(key).get();
        } catch (RuntimeException e) {
            throw CommunicationException.of(e);
        }
    }

    public String getString(String key) {
        return new String(get(key), StandardCharsets.UTF_8);
    }

    /** Adds {@code delta} to the integer at {@code key} (0 when unset) and returns the new value. */
    public long add(String key, long delta) {
        try (PointerScope scope = new PointerScope()) {
            return store.add(key, delta);
        } catch (RuntimeException e) {
            throw CommunicationException.of(e);
        }
    }

    /** Whether every key is set, without waiting. */
    public boolean contains(List<String> keys) {
        try (PointerScope scope = new PointerScope()) {
            return store.check(new StringVector(keys.toArray(new String[0])));
        } catch (RuntimeException e) {
            throw CommunicationException.of(e);
        }
    }

    /** Waits until every key is set, for at most {@code timeout}. */
    public void await(List<String> keys, Duration timeout) {
        try (PointerScope scope = new PointerScope()) {
            store._wait(new StringVector(keys.toArray(new String[0])), new Milliseconds(timeout.toMillis()));
        } catch (RuntimeException e) {
            throw CommunicationException.of(e);
        }
    }

    Store handle() {
        return store;
    }

    /** Closes this connection; closing the server's stops the store for everyone. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            store.releaseReference();
        }
    }
}
