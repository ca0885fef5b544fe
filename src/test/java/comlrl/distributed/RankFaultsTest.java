package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs of several processes whose ranks misbehave end promptly with an error that names the rank
 * and what went wrong: ranks that pass different tensors to a collective or call different ones
 * (libtorch would abort the process), a rank stopped ({@code SIGSTOP}) under {@code launch}.
 */
class RankFaultsTest {
    private static final double TIMEOUT_S = 2;

    /**
     * Beyond the collective timeout: the failing rank's look at the store (at most
     * {@link DistributedContext#probeTimeout}, 1 s here), its JVM's exit, the launcher's kill, and
     * slack for a loaded machine. Without the store's deadlines the run never ends.
     */
    private static final long MARGIN_MS = 10_000;

    @Test
    @Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void ranksThatDisagreeAboutACollectiveFailNamingTheDifferenceAndCarryOn(@TempDir Path tmp) throws Exception {
        try (RankProcesses ranks = RankProcesses.start(tmp, 2, CollectivesMain.class, "30", "mismatch")) {
            for (int r = 0; r < 2; r++) {
                assertThat(ranks.process(r).waitFor(150, TimeUnit.SECONDS)).isTrue();
            }
            for (int r = 0; r < 2; r++) {
                String text = ranks.output(r);
                assertThat(ranks.process(r).exitValue()).as(text).isZero(); // not 134: libtorch's abort on mismatched sizes
                Map<String, String> v = ranks.values(r);
                String rank = "rank " + r + " of 2: ";
                int other = 1 - r;
                assertThat(v.get("mismatch.shape")).as(text).isEqualTo(rank + "allReduceSum (collective #1): the tensors "
                        + "differ between ranks: tensor 1 is F32 [4, 3] on rank 0 and F32 [4, 4] on rank 1 (every rank must "
                        + "pass tensors of the same shapes and dtypes in the same order: do the processes load the same "
                        + "models?) suspects [" + other + "]");
                assertThat(v.get("mismatch.count")).as(text).startsWith(rank + "allReduceSum (collective #2): the tensors "
                        + "differ between ranks: tensor 1 is absent on rank 0 and F32 [2, 3] on rank 1 (rank 0 passes 1 tensor, "
                        + "rank 1 passes 2 tensors)");
                assertThat(v.get("mismatch.dtype")).as(text).startsWith(rank + "broadcast (collective #3): the tensors "
                        + "differ between ranks: tensor 0 is F32 [3] on rank 0 and F64 [3] on rank 1");
                assertThat(v.get("mismatch.root")).as(text).isEqualTo(rank + "broadcast (collective #4): the ranks name "
                        + "different roots: root 0 on rank 0, root 1 on rank 1 suspects [" + other + "]");
                assertThat(v.get("mismatch.order")).as(text).startsWith((r == 0 ? rank + "barrier" : rank + "allGatherBytes")
                        + " (collective #5): the ranks call collectives in different orders: rank 0 is in barrier #5; "
                        + "rank 1 is in allGatherBytes #5 (every rank must make the same collective calls in the same order");
                assertThat(v.get("after")).as(text).isEqualTo("[3.0]");
            }
        }
    }

    @Test
    @Tag("multiprocess")
    @Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a hung launch must not hang the suite
    void launchEndsARunWhoseRank0IsStoppedNamingItAndLeavesNoProcess() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Launcher launcher = new Launcher(Launcher.javaCommand(CollectivesMain.class.getName()),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        CompletableFuture<Integer> launch = CompletableFuture.supplyAsync(() -> {
            try {
                return launcher.run(Launcher.Spec.local(2), List.of(Double.toString(TIMEOUT_S), "loop"));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, r -> new Thread(r).start());
        List<Long> pids = new ArrayList<>();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!out.toString(StandardCharsets.UTF_8).contains("[rank 1] looping")
                || !out.toString(StandardCharsets.UTF_8).contains("[rank 0] looping")) {
            assertThat(System.nanoTime()).as("both ranks loop:\n" + out + err).isLessThan(end);
            assertThat(launch).as("launch ended early:\n" + out + err).isNotDone();
            Thread.sleep(50);
        }
        for (int r = 0; r < 2; r++) {
            pids.add(Long.parseLong(RankProcesses.values(out.toString(StandardCharsets.UTF_8), "[rank " + r + "] ").get("pid")));
        }

        signal("STOP", pids.get(0));
        long stopped = System.nanoTime();
        int code;
        try {
            code = launch.get(TimeUnit.SECONDS.toMillis((long) TIMEOUT_S) + MARGIN_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            throw new AssertionError("launch still runs " + MARGIN_MS + " ms after the collective timeout:\n" + out + err, e);
        }
        long ms = (System.nanoTime() - stopped) / 1_000_000;

        String text = out.toString(StandardCharsets.UTF_8);
        String errors = err.toString(StandardCharsets.UTF_8);
        assertThat(code).as(text + errors).isNotZero();
        Map<String, String> rank1 = RankProcesses.values(text, "[rank 1] ");
        assertThat(rank1.get("failed.message")).as(text + errors)
                .startsWith("rank 1 of 2: allReduceSum (collective #")
                .contains("timed out after").contains("(timeout 2.0 s)")
                .contains("the rendezvous store (served by rank 0 at 127.0.0.1:")
                .contains("rank 0 has exited, is stopped or frozen, or is unreachable");
        assertThat(errors).contains("launch: rank 1 exited with code 1; stopping the other ranks")
                .contains("launch: rank 0 (pid " + pids.get(0) + ") is stopped (SIGSTOP or a debugger) and cannot stop by "
                        + "itself: killing it");
        assertThat(ms).as("ended after the stop").isLessThan((long) (TIMEOUT_S * 1000) + MARGIN_MS);
        for (long pid : pids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("pid " + pid).isFalse();
        }
    }

    private static void signal(String name, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }
}
