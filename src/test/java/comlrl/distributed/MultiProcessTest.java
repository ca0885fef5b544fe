package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two JVMs on loopback running {@link CollectivesMain}: results on both ranks, collectives the ranks
 * disagree about, and how each failure is reported.
 */
class MultiProcessTest {
    private static final double TIMEOUT_S = 2;
    /** Beyond the timeout: reading the peers' heartbeats twice (0.5 s at this timeout) and slack for a loaded machine. */
    private static final long MARGIN_MS = 3000;

    @Test
    void twoRanksUnderLaunchAgreeOnSumsBroadcastAndGather() throws Exception {
        LauncherTest.Launched run = LauncherTest.launch(CollectivesMain.class, Launcher.Spec.local(2),
                Double.toString(TIMEOUT_S), "collectives");
        String text = run.out();
        assertThat(run.code()).as(text + run.err()).isZero();
        for (int r = 0; r < 2; r++) {
            Map<String, String> v = RankProcesses.values(text, "[rank " + r + "] ");
            assertThat(v.get("joined")).isEqualTo(r + " 2 " + r + " " + (r == 0) + " gloo cpu");
            // Σ over ranks 0 and 1 of each input, exact: integers held as floats stay below 2^24 (2^53 for f64)
            assertThat(v.get("sum.a")).isEqualTo("[2000001.0, 2.0, -6.0, 1.6000001E7, 1.0, 1.0]");
            assertThat(v.get("sum.b")).isEqualTo("[1.0, 10.0, 2.000000000000001E15]");
            assertThat(v.get("sum.c")).isEqualTo("[1, 2199023255552, -1]");
            assertThat(v.get("sum.d")).isEqualTo("[1.0, 3.0, 2.0, 4.0]"); // the transposed view, written back in place
            assertThat(v.get("sum.e")).isEqualTo("[15.0]");
            assertThat(v.get("sum.f")).isEqualTo("BF16 [3.0, 256.0]");
            assertThat(v.get("sum.single")).isEqualTo("[3.0, 200.0]");
            assertThat(v.get("broadcast")).isEqualTo("[7.0, 8.0, 9.0]");
            assertThat(v.get("gather.lengths")).isEqualTo("[0, 1022]");
            assertThat(v.get("gather.equal")).isEqualTo("true");
            assertThat(v.get("gather.empty")).isEqualTo("2 0");
            assertThat(v.get("barrier")).isEqualTo("passed");
            assertDisagreementsNamed(r, v, text);
            assertThat(text).contains("[rank " + r + "] closed");
        }
    }

    /**
     * What rank {@code r} said of the collectives the ranks disagree about (collectives #7 to #11,
     * after the six above): each named on both ranks alike (where libtorch would have aborted the
     * process on mismatched sizes), and a sum that agrees still works after them.
     */
    private static void assertDisagreementsNamed(int r, Map<String, String> v, String text) {
        String rank = "rank " + r + " of 2: ";
        int other = 1 - r;
        assertThat(v.get("mismatch.shape")).as(text).isEqualTo(rank + "allReduceSum (collective #7): the tensors differ "
                + "between ranks: tensor 1 is F32 [4, 3] on rank 0 and F32 [4, 4] on rank 1 (every rank must pass tensors "
                + "of the same shapes and dtypes in the same order: do the processes load the same models?) suspects ["
                + other + "]");
        assertThat(v.get("mismatch.count")).as(text).startsWith(rank + "allReduceSum (collective #8): the tensors differ "
                + "between ranks: tensor 1 is absent on rank 0 and F32 [2, 3] on rank 1 (rank 0 passes 1 tensor, rank 1 "
                + "passes 2 tensors)");
        assertThat(v.get("mismatch.dtype")).as(text).startsWith(rank + "broadcast (collective #9): the tensors differ "
                + "between ranks: tensor 0 is F32 [3] on rank 0 and F64 [3] on rank 1");
        assertThat(v.get("mismatch.root")).as(text).isEqualTo(rank + "broadcast (collective #10): the ranks name different "
                + "roots: root 0 on rank 0, root 1 on rank 1 suspects [" + other + "]");
        assertThat(v.get("mismatch.order")).as(text).startsWith(rank + (r == 0 ? "barrier" : "allGatherBytes")
                + " (collective #11): the ranks call collectives in different orders: rank 0 is in barrier #11; rank 1 is in "
                + "allGatherBytes #11 (every rank must make the same collective calls in the same order");
        assertThat(v.get("after")).as(text).isEqualTo("[3.0]");
    }

    @Test
    @Tag("multiprocess")
    void aRankKilledMidRunFailsItsPeerAtOnceNamingIt(@TempDir Path tmp) throws Exception {
        try (RankProcesses ranks = RankProcesses.start(tmp, 2, CollectivesMain.class, Double.toString(TIMEOUT_S), "kill")) {
            ranks.awaitLine(1, "busy", Duration.ofSeconds(60));
            ranks.awaitLine(0, "entering", Duration.ofSeconds(10));
            Thread.sleep(300); // rank 0 is waiting inside the sum
            ranks.process(1).destroyForcibly();
            assertThat(ranks.process(0).waitFor(30, TimeUnit.SECONDS)).isTrue();
            Map<String, String> v = ranks.values(0);
            assertThat(v.get("failed.message")).as(ranks.output(0))
                    .startsWith("rank 0 of 2: allReduceSum (collective #2) failed after")
                    .contains(". Peers: rank 1 is not responding (its heartbeat stopped");
            assertThat(v.get("failed.suspects")).isEqualTo("[1]");
            assertThat(Long.parseLong(v.get("failed.ms"))).isLessThan((long) (TIMEOUT_S * 1000) + MARGIN_MS);
        }
    }

    @Test
    @Tag("multiprocess")
    void aRankThatNeverArrivesTimesOutItsPeerNamingIt(@TempDir Path tmp) throws Exception {
        try (RankProcesses ranks = RankProcesses.start(tmp, 2, CollectivesMain.class, Double.toString(TIMEOUT_S), "hang")) {
            ranks.awaitLine(0, "entering", Duration.ofSeconds(60));
            assertThat(ranks.process(0).waitFor(30, TimeUnit.SECONDS)).isTrue();
            Map<String, String> v = ranks.values(0);
            assertThat(v.get("failed.message")).as(ranks.output(0))
                    .startsWith("rank 0 of 2: allReduceSum (collective #2) timed out after 2.0 s (timeout 2.0 s): ")
                    .contains(" Peers: rank 1 is alive")
                    .contains("rank 1 is alive but has not reached allReduceSum #2 (it is past allReduceSum #1)");
            assertThat(v.get("failed.suspects")).isEqualTo("[1]");
            assertThat(Long.parseLong(v.get("failed.ms"))).isBetween((long) (TIMEOUT_S * 1000) - 100,
                    (long) (TIMEOUT_S * 1000) + MARGIN_MS);
            assertThat(ranks.process(1).isAlive()).isTrue();
        }
    }
}
