package comlrl.distributed;

import comlrl.tensor.CommunicationException;
import comlrl.tensor.TcpStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Each rank's sign of life in the rendezvous store, so that a rank whose collective failed can say
 * which peer is to blame: a thread writes {@code comlrl/heartbeat/<rank>} = {@code "<beat> <seq>
 * <phase> <op>"} every {@code interval} over its own store connection, where {@code seq} and
 * {@code op} name the rank's latest collective and {@code phase} is {@code in} (inside it),
 * {@code done} (past it), or, finally, {@code closed} or {@code failed}.
 *
 * <p>{@link #observe} reads every peer's value twice, {@code 2.5 · interval} apart: a peer whose
 * beat did not advance (and that did not write a final phase) has stopped — it exited, was killed
 * or is frozen.
 */
final class Heartbeats {
    static final String PREFIX = "comlrl/heartbeat/";

    private final TcpStore client;
    private final int rank;
    private final Duration interval;
    private final Thread thread;
    private volatile String state = "0 done -";
    private volatile boolean running = true;
    private long beats;

    /** Writes the first beat through {@code store} (so peers can see this rank joined), then starts beating. */
    Heartbeats(TcpStore store, int rank, Duration interval) {
        this.rank = rank;
        this.interval = interval;
        store.set(key(rank), value(0, state));
        this.client = store.newClient(interval.multipliedBy(10));
        this.thread = new Thread(this::beat, "comlrl-heartbeat-rank-" + rank);
        thread.setDaemon(true);
        thread.start();
    }

    static String key(int rank) {
        return PREFIX + rank;
    }

    private static String value(long beat, String state) {
        return beat + " " + state;
    }

    Duration interval() {
        return interval;
    }

    /** This rank is now inside collective {@code seq}. */
    void enter(long seq, String op) {
        state = seq + " in " + op;
    }

    /** This rank has finished collective {@code seq}. */
    void leave(long seq, String op) {
        state = seq + " done " + op;
    }

    private void beat() {
        while (running) {
            try {
                Thread.sleep(interval.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            if (!running) {
                return;
            }
            try {
                client.set(key(rank), value(++beats, state));
            } catch (CommunicationException e) {
                return; // the store is gone (rank 0 exited): nobody is left to read the beats
            }
        }
    }

    /**
     * Stops beating and writes {@code phase} ({@code closed} or {@code failed}) as this rank's final
     * state, best effort; closes the connection.
     */
    void finish(String phase) {
        running = false;
        thread.interrupt();
        try {
            thread.join(interval.multipliedBy(20).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String last = state;
        String[] parts = last.split(" ", 3);
        try {
            client.set(key(rank), value(beats + 1, parts[0] + " " + phase + " " + parts[2]));
        } catch (CommunicationException e) {
            // the store is gone: nobody is left to read it
        }
        client.close();
    }

    /** What a peer was last seen doing. */
    record Peer(int rank, boolean joined, boolean responding, long seq, String phase, String op) {
        boolean finished() {
            return phase.equals("closed") || phase.equals("failed");
        }
    }

    /** Every rank's state except {@code self}'s, read twice {@code 2.5 · interval} apart through {@code store}. */
    static List<Peer> observe(TcpStore store, int worldSize, int self, Duration interval) {
        String[] first = read(store, worldSize, self);
        try {
            Thread.sleep(interval.multipliedBy(5).dividedBy(2).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String[] second = read(store, worldSize, self);
        List<Peer> peers = new ArrayList<>();
        for (int r = 0; r < worldSize; r++) {
            if (r == self) {
                continue;
            }
            if (second[r] == null) {
                peers.add(new Peer(r, false, false, 0, "absent", "-"));
                continue;
            }
            String[] now = second[r].split(" ", 4);
            boolean advanced = first[r] == null || !first[r].split(" ", 2)[0].equals(now[0]);
            Peer p = new Peer(r, true, advanced, Long.parseLong(now[1]), now[2], now[3]);
            peers.add(p.finished() ? new Peer(r, true, true, p.seq, p.phase, p.op) : p);
        }
        return peers;
    }

    private static String[] read(TcpStore store, int worldSize, int self) {
        String[] values = new String[worldSize];
        for (int r = 0; r < worldSize; r++) {
            if (r != self && store.contains(List.of(key(r)))) {
                values[r] = store.getString(key(r));
            }
        }
        return values;
    }
}
