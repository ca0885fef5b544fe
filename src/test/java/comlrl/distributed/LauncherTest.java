package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LauncherTest {
    /** What a launch printed: the children's standard output and error (with the launcher's messages), and its duration. */
    record Launched(int code, String out, String err, long millis) {
    }

    /** Launches {@code mainClass args} as {@code spec} says, capturing what it prints. */
    static Launched launch(Class<?> mainClass, Launcher.Spec spec, String... args) throws InterruptedException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Launcher launcher = new Launcher(Launcher.javaCommand(mainClass.getName()),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        long start = System.nanoTime();
        int code = launcher.run(spec, List.of(args));
        return new Launched(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8),
                (System.nanoTime() - start) / 1_000_000);
    }

    @Test
    void aFailingRankStopsTheOthersKillsWhatIgnoresItAndLeavesNoProcessBehind() throws Exception {
        Launched run = launch(LaunchProbe.class, new Launcher.Spec(3, 1, 0, null, 0, Duration.ofSeconds(1)), "1", "3", "stubborn");
        String text = run.out();
        String errors = run.err();

        assertThat(run.code()).as(text + errors).isEqualTo(3);
        assertThat(errors).contains("[rank 1] failing on purpose")
                .contains("launch: rank 1 exited with code 3; stopping the other ranks");
        List<Long> pids = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            Map<String, String> v = RankProcesses.values(text, "[rank " + r + "] ");
            assertThat(v.get("env")).startsWith("3 " + r + " " + r + " 3 127.0.0.1 ");
            pids.add(Long.parseLong(v.get("pid")));
            if (r != 1) {
                pids.add(Long.parseLong(v.get("grandchild")));
            }
        }
        assertThat(errors).contains("launch: started rank 0 (pid " + pids.get(0) + "), rank 1 (pid " + pids.get(2)
                + "), rank 2 (pid " + pids.get(3) + ")");
        for (long pid : pids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("pid " + pid).isFalse();
        }
        assertThat(ProcessHandle.current().descendants().map(ProcessHandle::pid).filter(pids::contains)).isEmpty();
        assertThat(run.millis()).as("the stubborn ranks are killed after the 1 s grace period").isBetween(1000L, 20_000L);
    }

    /** What the launcher reads to kill a stopped child at once: {@code /proc/PID/stat}'s state. */
    @Test
    void aStoppedProcessIsToldFromARunningOne() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            assertThat(Launcher.isStopped(sleeper.pid())).isFalse();
            signal("STOP", sleeper.pid());
            long end = System.nanoTime() + 10_000_000_000L;
            while (!Launcher.isStopped(sleeper.pid()) && System.nanoTime() < end) {
                Thread.sleep(10); // the signal is delivered asynchronously
            }
            assertThat(Launcher.isStopped(sleeper.pid())).isTrue();
            signal("CONT", sleeper.pid());
            while (Launcher.isStopped(sleeper.pid()) && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            assertThat(Launcher.isStopped(sleeper.pid())).isFalse();
        } finally {
            sleeper.destroyForcibly();
        }
        assertThat(Launcher.isStopped(Long.MAX_VALUE)).as("no such process").isFalse();
    }

    private static void signal(String name, long pid) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + name, Long.toString(pid)).start().waitFor()).isZero();
    }

    @Test
    void childLinesArePrefixedIncludingProgressLinesThatRewriteThemselves() throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream to = new PrintStream(sink, true, StandardCharsets.UTF_8);
        byte[] child = "one\nprogress 1\rprogress 2\r\nünï\r\n\nlast".getBytes(StandardCharsets.UTF_8);
        Launcher.forward(new ByteArrayInputStream(child), to, "[rank 4] ", "test").join(5000);
        assertThat(sink.toString(StandardCharsets.UTF_8)).isEqualTo(
                "[rank 4] one\n[rank 4] progress 1\r[rank 4] progress 2\r\n[rank 4] ünï\r\n[rank 4] \n[rank 4] last\n");
    }

    @Test
    void specsCheckWhatSeveralMachinesNeed() {
        assertThatThrownBy(() -> new Launcher.Spec(2, 2, 0, null, 0, Duration.ZERO))
                .hasMessageContaining("same --master-addr").hasMessageContaining("--master-port");
        assertThatThrownBy(() -> new Launcher.Spec(2, 2, 2, "h", 1, Duration.ZERO)).hasMessageContaining("--node-rank must be in [0, 2)");
        assertThatThrownBy(() -> new Launcher.Spec(0, 1, 0, null, 0, Duration.ZERO)).hasMessageContaining("--nproc-per-node");
        assertThat(new Launcher.Spec(4, 2, 1, "h", 29500, Duration.ZERO).worldSize()).isEqualTo(8);
        assertThat(Launcher.describeExit(137)).isEqualTo("was killed by signal 9 (exit code 137)");
    }
}
