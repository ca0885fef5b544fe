package comlrl.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The c10d wrappers in one process: the store's operations, a Gloo group of one, NCCL's absence on CPU. */
class ProcessGroupTest {
    private static final Duration SHORT = Duration.ofSeconds(5);

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void theStoreSetsGetsCountsAndWaitsAcrossConnections() throws IOException {
        try (TcpStore server = TcpStore.connect("127.0.0.1", freePort(), true, SHORT);
                TcpStore client = server.newClient(SHORT)) {
            server.set("a", "ünï");
            assertThat(client.getString("a")).isEqualTo("ünï");
            assertThat(client.add("n", 2)).isEqualTo(2);
            assertThat(server.add("n", 3)).isEqualTo(5);
            assertThat(client.contains(List.of("a", "n"))).isTrue();
            assertThat(client.contains(List.of("a", "missing"))).isFalse();
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.await(List.of("missing"), Duration.ofMillis(300)))
                    .isInstanceOf(CommunicationException.class)
                    .satisfies(e -> assertThat(((CommunicationException) e).timedOut()).isTrue());
            assertThat((System.nanoTime() - start) / 1_000_000).isBetween(250L, 3000L);
        }
    }

    @Test
    void aGlooGroupOfOneLeavesValuesAndCopiesGathers() throws IOException {
        try (Scope s = Scope.open(); TcpStore store = TcpStore.connect("127.0.0.1", freePort(), true, SHORT);
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
    void ncclWithoutItsNativesFailsNamingTheBuild() throws IOException {
        assumeFalse(Engine.cudaAvailable(), "the CUDA build has NCCL");
        try (TcpStore store = TcpStore.connect("127.0.0.1", freePort(), true, SHORT)) {
            assertThatThrownBy(() -> ProcessGroup.nccl(store, 0, 1, SHORT))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("no NCCL").hasMessageContaining("mvn -Pcuda package");
        }
    }
}
