package comlrl.utils;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child that ignores the end of its input does not outlive the JVM that started it: a separate
 * JVM ({@link OrphanProbe}) starts one, with a grandchild, and is then killed.
 */
class JsonLinesProcessLifetimeTest {
    /**
     * Deadlines, generous for a loaded machine (both are awaited, so a quick exit returns at once):
     * the guard or the shutdown hook ends the children within this long after the JVM is gone ...
     */
    private static final long GONE_WITHIN_MILLIS = 30_000;
    /** ... and the probe JVM exits within this long of the signal (SIGTERM runs its shutdown hook first). */
    private static final long PROBE_EXIT_SECONDS = 60;

    @TempDir
    Path dir;

    @Test
    void sigkillOfTheJvmEndsTheChildAndItsDescendants() throws Exception {
        // kill -9: no shutdown hook runs; the guard process must notice on its own
        assertChildrenEndWithTheJvm("guard", Process::destroyForcibly);
    }

    @Test
    void sigtermOfTheJvmEndsTheChildThroughTheShutdownHook() throws Exception {
        // without a guard, only the shutdown hook can end the child
        assertChildrenEndWithTheJvm("noguard", Process::destroy);
    }

    private void assertChildrenEndWithTheJvm(String mode, Consumer<Process> kill) throws Exception {
        List<Long> pids = new ArrayList<>();
        try {
            runProbeAndKill(mode, kill, pids);
            assertGone(pids);
        } finally {
            killSurvivors(pids);
        }
    }

    /** Starts the probe JVM, waits until its child replied, kills the JVM; {@code pids} gets [child, grandchild]. */
    private void runProbeAndKill(String mode, Consumer<Process> kill, List<Long> pids) throws Exception {
        Path pidFile = dir.resolve("pids");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process probe = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                OrphanProbe.class.getName(), pidFile.toString(), mode)
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(probe.getInputStream(), StandardCharsets.UTF_8));
            List<String> lines = new ArrayList<>();
            String line;
            while ((line = out.readLine()) != null && !line.equals("ready")) {
                lines.add(line);
            }
            assertThat(line).as("probe output: %s", lines).isEqualTo("ready");
            for (String pid : Files.readString(pidFile).trim().split(" ")) {
                pids.add(Long.parseLong(pid));
            }
            assertThat(pids).hasSize(2).allMatch(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
            kill.accept(probe);
            assertThat(probe.waitFor(PROBE_EXIT_SECONDS, TimeUnit.SECONDS)).as("probe JVM ended").isTrue();
        } finally {
            probe.destroyForcibly();
        }
    }

    private static void assertGone(List<Long> pids) throws InterruptedException {
        long deadline = System.nanoTime() + GONE_WITHIN_MILLIS * 1_000_000;
        List<Long> alive = pids;
        while (System.nanoTime() < deadline) {
            alive = pids.stream().filter(pid -> isAlive(pid)).toList();
            if (alive.isEmpty()) {
                return;
            }
            Thread.sleep(50);
        }
        assertThat(alive).as("processes still running %d ms after the JVM died", GONE_WITHIN_MILLIS).isEmpty();
    }

    private static void killSurvivors(List<Long> pids) {
        pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    /** Running, not merely a zombie waiting for a parent (here: init) to reap it. */
    private static boolean isAlive(long pid) {
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty() || !handle.get().isAlive()) {
            return false;
        }
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        try {
            String text = Files.readString(stat);
            return text.charAt(text.lastIndexOf(')') + 2) != 'Z';
        } catch (java.io.IOException | RuntimeException e) {
            return Files.exists(stat) || !Files.isDirectory(Path.of("/proc/self")); // no procfs (macOS): trust isAlive
        }
    }
}
