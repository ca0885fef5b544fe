package comlrl.tensor;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on a free loopback port to {@code 127.0.0.1:target} that can be frozen: while frozen
 * it accepts connections and holds every byte in both directions, as a server whose process was
 * stopped ({@code SIGSTOP}) does — the connections stay open, nothing is answered.
 */
final class FreezableRelay implements AutoCloseable {
    private final ServerSocket listener;
    private final int target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean frozen;
    private volatile boolean closed;

    FreezableRelay(int target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        daemon(this::acceptLoop, "relay-accept").start();
    }

    int port() {
        return listener.getLocalPort();
    }

    /** From now on nothing passes in either direction. */
    void freeze() {
        frozen = true;
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
                sockets.add(client);
                sockets.add(server);
                daemon(() -> pump(client, server), "relay-up").start();
                daemon(() -> pump(server, client), "relay-down").start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[8192];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                while (frozen && !closed) {
                    Thread.sleep(10); // held, as by a stopped process
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // a side closed
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
