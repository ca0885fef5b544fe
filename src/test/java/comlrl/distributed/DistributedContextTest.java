package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One process: the environment's variables, the single-process context, buckets, misconfigurations. */
class DistributedContextTest {
    @Test
    void torchrunVariablesComeFirstThenSlurmOnes() {
        Map<String, String> torchrun = Map.of("WORLD_SIZE", "4", "RANK", "3", "LOCAL_RANK", "1",
                "MASTER_ADDR", " node0 ", "MASTER_PORT", "29500", "SLURM_NTASKS", "8", "SLURM_PROCID", "5");
        assertThat(RankInfo.fromEnvironment(torchrun)).contains(new RankInfo(3, 4, 1, "node0", 29500));
        Map<String, String> slurm = Map.of("SLURM_NTASKS", "8", "SLURM_PROCID", "5", "SLURM_LOCALID", "1",
                "MASTER_ADDR", "node0", "MASTER_PORT", "29501");
        assertThat(RankInfo.fromEnvironment(slurm)).contains(new RankInfo(5, 8, 1, "node0", 29501));
        RankInfo info = new RankInfo(2, 3, 0, "10.0.0.1", 1234);
        assertThat(RankInfo.fromEnvironment(info.toEnvironment())).contains(info);
    }

    /** What {@link DistributedContext#requireSame} says: each differing key, its values with their ranks, in key order. */
    @Test
    void differencesNameEachKeyWithEachValueAndItsRanks() {
        Map<String, String> base = Map.of("args.seed", "7", "agent_model", "\"builtin:tiny\"", "args.lr", "0.001");
        Map<String, String> other = Map.of("args.seed", "8", "agent_model", "\"builtin:tiny\"", "args.lr", "0.001",
                "args.extra", "1");
        assertThat(DistributedContext.differences(List.of(base, base))).isEmpty();
        assertThat(DistributedContext.differences(List.of(base, other, base))).isEqualTo(
                "args.extra is absent on ranks 0, 2 and 1 on rank 1; args.seed is 7 on ranks 0, 2 and 8 on rank 1");
        java.util.Map<String, String> many = new java.util.TreeMap<>();
        for (int i = 0; i < DistributedContext.MAX_DIFFERENCES + 3; i++) {
            many.put(String.format("k%02d", i), "x".repeat(200));
        }
        String said = DistributedContext.differences(List.of(Map.of(), many));
        assertThat(said).startsWith("k00 is absent on rank 0 and " + "x".repeat(120) + "... on rank 1; k01 is ")
                .endsWith("; and 3 more").doesNotContain("k10");
    }

    @Test
    void errorsWithoutAMessageAreNamedByKindAndPlace() {
        assertThat(DistributedException.describe(new IllegalStateException("bad"))).isEqualTo("IllegalStateException: bad");
        assertThat(DistributedException.describe(new OutOfMemoryError("Java heap space")))
                .isEqualTo("OutOfMemoryError: Java heap space");
        assertThat(DistributedException.describe(new NullPointerException()))
                .startsWith("java.lang.NullPointerException (no message, thrown at comlrl.distributed.DistributedContextTest.");
    }

    @Test
    void aSingleProcessEnvironmentGivesALocalContext() {
        assertThat(RankInfo.fromEnvironment(Map.of())).isEmpty();
        assertThat(RankInfo.fromEnvironment(Map.of("WORLD_SIZE", "1", "RANK", "0"))).isEmpty();
        assertThat(RankInfo.fromEnvironment(Map.of("SLURM_NTASKS", "1", "SLURM_PROCID", "0"))).isEmpty();
        try (DistributedContext ctx = DistributedContext.fromEnvironment(Map.of(), DistributedContext.Options.defaults())) {
            assertThat(ctx.enabled()).isFalse();
            assertThat(ctx.rank()).isZero();
            assertThat(ctx.worldSize()).isEqualTo(1);
            assertThat(ctx.isMain()).isTrue();
            assertThat(ctx.timeout()).isEqualTo(DistributedContext.DEFAULT_TIMEOUT);
        }
    }

    @Test
    void partialVariablesFailNamingWhatIsMissing() {
        assertThatThrownBy(() -> RankInfo.fromEnvironment(Map.of("WORLD_SIZE", "2", "RANK", "1", "LOCAL_RANK", "1")))
                .hasMessageContaining("WORLD_SIZE=2").hasMessageContaining("MASTER_ADDR, MASTER_PORT are not set");
        assertThatThrownBy(() -> RankInfo.fromEnvironment(Map.of("SLURM_NTASKS", "4", "SLURM_PROCID", "0",
                "SLURM_LOCALID", "0"))).hasMessageContaining("SLURM_NTASKS=4").hasMessageContaining("MASTER_ADDR");
        assertThatThrownBy(() -> RankInfo.fromEnvironment(Map.of("WORLD_SIZE", "two")))
                .hasMessageContaining("WORLD_SIZE must be an integer, got 'two'");
        assertThatThrownBy(() -> new RankInfo(2, 2, 0, "h", 1)).hasMessageContaining("rank must be in [0, 2)");
    }

    @Test
    void aLocalContextLeavesTensorsAsTheyAre() {
        try (Scope s = Scope.open(); DistributedContext ctx = DistributedContext.local()) {
            Tensor t = Tensor.ofFloats(new float[] {1, 2}, Device.CPU);
            ctx.allReduceSum(List.of(t));
            ctx.broadcast(t, 0);
            ctx.barrier();
            assertThat(t.toFloatArray()).containsExactly(1, 2);
            byte[] mine = {1, 2, 3};
            List<byte[]> all = ctx.allGatherBytes(mine);
            assertThat(all).hasSize(1);
            assertThat(all.get(0)).containsExactly(1, 2, 3).isNotSameAs(mine);
            assertThatThrownBy(() -> ctx.broadcast(t, 1)).hasMessageContaining("root must be in [0, 1)");
        }
    }

    @Test
    void bucketsGroupByDtypeInOrderAndSplitAtTheCap() {
        try (Scope s = Scope.open()) {
            Tensor a = Tensor.zerosOf(DType.F32, Device.CPU, 4);  // 16 bytes
            Tensor b = Tensor.zerosOf(DType.F64, Device.CPU, 2);  // 16
            Tensor c = Tensor.zerosOf(DType.F32, Device.CPU, 2);  //  8
            Tensor d = Tensor.zerosOf(DType.F32, Device.CPU, 0);  //  0: dropped
            Tensor e = Tensor.zerosOf(DType.F32, Device.CPU, 10); // 40: over the cap alone
            Tensor f = Tensor.zerosOf(DType.F32, Device.CPU, 1);  //  4
            List<List<Tensor>> buckets = DistributedContext.buckets(List.of(a, b, c, d, e, f), 24);
            assertThat(buckets).containsExactly(List.of(a, c), List.of(e), List.of(f), List.of(b));
            assertThat(DistributedContext.buckets(List.of(a, b, c, e, f), DistributedContext.MAX_BUCKET_BYTES))
                    .containsExactly(List.of(a, c, e, f), List.of(b));
        }
    }

    @Test
    void ncclOnACpuProcessFailsBeforeAnyConnection() {
        RankInfo info = new RankInfo(0, 2, 0, "127.0.0.1", Launcher.freePort());
        DistributedContext.Options nccl = DistributedContext.Options.defaults().withBackend(Backend.NCCL)
                .withDevice(Device.CPU).withRendezvousTimeout(Duration.ofSeconds(1));
        assertThatThrownBy(() -> DistributedContext.connect(info, nccl))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("backend nccl runs on CUDA devices").hasMessageContaining("use backend gloo");
        assertThat(Backend.parse(" NCCL ")).isEqualTo(Backend.NCCL);
        assertThatThrownBy(() -> Backend.parse("mpi")).hasMessageContaining("use auto, gloo or nccl");
    }

    @Test
    void aRankWhosePeersNeverComeFailsTheRendezvousNamingThem() {
        RankInfo info = new RankInfo(0, 3, 0, "127.0.0.1", Launcher.freePort());
        DistributedContext.Options quick = DistributedContext.Options.defaults().withBackend(Backend.GLOO)
                .withRendezvousTimeout(Duration.ofMillis(1500));
        long start = System.nanoTime();
        assertThatThrownBy(() -> DistributedContext.connect(info, quick))
                .isInstanceOf(DistributedException.class)
                .hasMessageContaining("rank 0: the gloo process group of 3 ranks could not form within 1.5 s")
                .hasMessageContaining("ranks 1, 2 did not join")
                .satisfies(e -> assertThat(((DistributedException) e).suspects()).containsExactly(1, 2));
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(1500 + 3000);
    }
}
