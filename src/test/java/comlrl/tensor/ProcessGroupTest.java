package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The c10d wrappers in one process: the store's operations, a Gloo group of one, NCCL's absence on CPU. */
class ProcessGroupTest {
    private static final Duration SHORT = Duration.ofSeconds(5);
    /** The server's port: 0, any free one (a port chosen first could be taken before the store binds it). */
    private static final int ANY_PORT = 0;

    @Test
    void theStoreSetsGetsCountsAndWaitsAcrossConnections() {
        try (TcpStore server = TcpStore.connect("127.0.0.1", ANY_PORT, true, SHORT);
                TcpStore client = server.newClient(SHORT)) {
            server.set("a", "ünï");
            assertThat(client.getString("a")).isEqualTo("ünï");
            assertThat(client.add("n", 2)).isEqualTo(2);
            assertThat(server.add("n", 3)).isEqualTo(5);
            assertThat(client.contains(List.of("a", "n"))).isTrue();
            assertThat(client.contains(List.of("a", "missing"))).isFalse();
            assertThat(server.port()).as("the port the server listens on").isBetween(1, 65535);
            assertThat(client.port()).isEqualTo(server.port());
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.await(List.of("missing"), Duration.ofMillis(300)))
                    .isInstanceOf(CommunicationException.class)
                    .satisfies(e -> assertThat(((CommunicationException) e).timedOut()).isTrue());
            // it waited for its timeout (not less; the store's clock is steady), and gave up within a
            // generous deadline: timeout + 10 s, for a loaded machine
            assertThat((System.nanoTime() - start) / 1_000_000).isBetween(250L, 300L + 10_000L);
            assertThatThrownBy(() -> TcpStore.connect("127.0.0.1", 0, false, SHORT))
                    .hasMessageContaining("Port must be in 1..65535, got 0");
        }
    }

    /**
     * A store whose server stops answering (its process stopped, as by SIGSTOP: the connections stay
     * open) fails every request within the client's timeout — libtorch's own client would wait for
     * the answer to a check, an add, or the cancellation of a timed-out get forever.
     */
    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a request blocked in native code ignores interrupts
    void everyRequestToAFrozenStoreFailsWithinItsTimeout() throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        long limitMs = timeout.toMillis() + 10_000; // the timeout, libtorch's own margin on waits, a loaded machine
        Map<String, Consumer<TcpStore>> requests = new LinkedHashMap<>();
        requests.put("contains", c -> c.contains(List.of("a")));
        requests.put("get", c -> c.get("a"));
        requests.put("get of a missing key", c -> c.get("missing"));
        requests.put("add", c -> c.add("n", 1));
        requests.put("await", c -> c.await(List.of("missing"), timeout));
        requests.put("newClient", c -> c.newClient(timeout));
        try (TcpStore server = TcpStore.connect("127.0.0.1", ANY_PORT, true, SHORT);
                FreezableRelay relay = new FreezableRelay(server.port())) {
            server.set("a", "1");
            List<TcpStore> clients = new ArrayList<>();
            for (int i = 0; i < requests.size(); i++) {
                clients.add(TcpStore.connect("127.0.0.1", relay.port(), false, timeout));
                assertThat(clients.get(i).getString("a")).isEqualTo("1");
            }
            relay.freeze();
            requests.put("connect", c -> TcpStore.connect("127.0.0.1", relay.port(), false, timeout));
            clients.add(null);
            // all at once, each on its own connection: a request that never returns cannot hold up the others
            Map<String, CompletableFuture<Throwable>> failures = new LinkedHashMap<>();
            int i = 0;
            for (Map.Entry<String, Consumer<TcpStore>> request : requests.entrySet()) {
                TcpStore client = clients.get(i++);
                failures.put(request.getKey(), CompletableFuture.supplyAsync(() -> {
                    long start = System.nanoTime();
                    try {
                        request.getValue().accept(client);
                        return new AssertionError(request.getKey() + " returned");
                    } catch (RuntimeException e) {
                        long ms = (System.nanoTime() - start) / 1_000_000;
                        return ms < limitMs ? e : new AssertionError(request.getKey() + " failed after " + ms + " ms", e);
                    }
                }, runnable -> new Thread(runnable).start()));
            }
            for (Map.Entry<String, CompletableFuture<Throwable>> failure : failures.entrySet()) {
                assertThat(failure.getValue().get()).as(failure.getKey()).isInstanceOf(CommunicationException.class)
                        .satisfies(e -> assertThat(((CommunicationException) e).timedOut()).as(failure.getKey()).isTrue());
            }
        }
    }

    @Test
    void aGlooGroupOfOneLeavesValuesAndCopiesGathers() {
        try (Scope s = Scope.open(); TcpStore store = TcpStore.connect("127.0.0.1", ANY_PORT, true, SHORT);
                ProcessGroup group = ProcessGroup.gloo(store, 0, 1, SHORT, null, "127.0.0.1")) {
            Tensor t = Tensor.ofFloats(new float[] {1.5f, -2}, Device.CPU);
            group.allReduceSum(t, SHORT);
            group.broadcast(t, 0, SHORT);
            assertThat(t.toFloatArray()).containsExactly(1.5f, -2);
            Tensor out = Tensor.zerosOf(DType.F32, Device.CPU, 2);
            group.allGather(t, out, SHORT);
            assertThat(out.toFloatArray()).containsExactly(1.5f, -2);
            assertThatThrownBy(() -> group.allGather(t, Tensor.zerosOf(DType.F32, Device.CPU, 3), SHORT))
                    .hasMessageContaining("needs 2 elements (1 ranks x 2), got 3");
        }
    }

    @Test
    void ncclWithoutItsNativesFailsNamingTheBuild() {
        assumeFalse(Engine.cudaAvailable(), "the CUDA build has NCCL");
        try (TcpStore store = TcpStore.connect("127.0.0.1", ANY_PORT, true, SHORT)) {
            assertThatThrownBy(() -> ProcessGroup.nccl(store, 0, 1, SHORT))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("no NCCL").hasMessageContaining("mvn -Pcuda package");
        }
    }
}
