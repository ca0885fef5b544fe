package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.ProcessGroup;
import comlrl.tensor.Scope;
import comlrl.tensor.TcpStore;
import comlrl.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code backend: nccl} on NVIDIA GPUs (the {@code -Pcuda} build): a group of one sums on the GPU;
 * with two GPUs, the data split of {@link DdpTrainingTest} over NCCL trains what one GPU trains.
 */
@Tag("gpu")
class NcclTrainingTest {
    static final Duration SHORT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    @Test
    void anNcclGroupOfOneSumsOnTheGpu() {
        assumeTrue(Engine.cudaAvailable(), "no CUDA device");
        Device gpu = Device.parse("cuda:0");
        try (Scope s = Scope.open(); TcpStore store = TcpStore.connect("127.0.0.1", Launcher.freePort(), true, SHORT);
                ProcessGroup group = ProcessGroup.nccl(store, 0, 1, SHORT)) {
            Tensor t = Tensor.ofFloats(new float[] {1.5f, -2}, Device.CPU).to(gpu);
            group.allReduceSum(t, SHORT);
            group.broadcast(t, 0, SHORT);
            assertThat(t.to(Device.CPU).toFloatArray()).containsExactly(1.5f, -2);
        }
    }

    @Test
    void twoGpusOverNcclTrainTheDataSplitAsOneGpu() throws Exception {
        assumeTrue(Engine.cudaAvailable() && Engine.cudaDeviceCount() >= 2, "needs two CUDA devices");
        DdpTrainingTest runs = new DdpTrainingTest();
        runs.tmp = tmp;
        Path alone = runs.config("alone", "none", "data");
        Files.writeString(alone, Files.readString(alone).replace("  seed: 7\n", "  seed: 7\n  agent_devices: [cuda:0]\n"));
        Path ddp = runs.config("ddp", "ddp", "data");
        Files.writeString(ddp, Files.readString(ddp).replace("  timeout_s: 60\n", "  timeout_s: 60\n  backend: nccl\n"));
        runs.trainAlone(alone);
        assertThat(runs.trainTwoRanks(ddp)).contains("2 processes (nccl), ddp_split data");
        DdpTrainingTest.assertSameMetrics(DdpTrainingTest.metrics(alone.getParent()),
                DdpTrainingTest.metrics(ddp.getParent()), 1e-4);
        for (String agent : List.of("agent_0", "agent_1")) {
            DdpTrainingTest.assertSameWeights(DdpTrainingTest.weights(alone.getParent().resolve(agent)),
                    DdpTrainingTest.weights(ddp.getParent().resolve(agent)), 1e-3);
        }
    }
}
