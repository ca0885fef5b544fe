package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs of several processes whose ranks misbehave end promptly with an error that names the rank
 * and what went wrong: a rank stopped ({@code SIGSTOP}) under {@code launch}, ranks started with
 * different configs. (Ranks that pass different tensors to a collective or call different ones:
 * {@link MultiProcessTest}.)
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
    @Tag("multiprocess")
    @Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a hung launch must not hang the suite
    void launchEndsARunWhoseRank0IsStoppedNamingItAndLeavesNoProcess() throws Exception {
        Launched run = Launched.start(CollectivesMain.class, Double.toString(TIMEOUT_S), "loop");
        run.awaitOutput("[rank 0] looping", "[rank 1] looping");
        long stopped = run.stop(0);
        int code = run.awaitEnd(TimeUnit.SECONDS.toMillis((long) TIMEOUT_S) + MARGIN_MS);
        long ms = (System.nanoTime() - stopped) / 1_000_000;

        String text = run.out();
        assertThat(code).as(run.all()).isNotZero();
        assertThat(RankProcesses.values(text, "[rank 1] ").get("failed.message")).as(run.all())
                .startsWith("rank 1 of 2: allReduceSum (collective #")
                .contains("timed out after").contains("(timeout 2.0 s)")
                .contains("the rendezvous store (served by rank 0 at 127.0.0.1:")
                .contains("rank 0 has exited, is stopped or frozen, or is unreachable");
        run.assertStoppedRank0WasKilledAndNothingIsLeft();
        assertThat(ms).as("ended after the stop").isLessThan((long) (TIMEOUT_S * 1000) + MARGIN_MS);
    }

    /**
     * {@code train} under {@code launch}, rank 0 stopped once the processes have joined: rank 1's
     * next collective times out ({@code distributed.timeout_s: 3}), it exits naming rank 0, and the
     * launcher kills rank 0. The bound adds to {@link #MARGIN_MS} the time rank 1 may spend loading
     * its model before that collective.
     */
    @Test
    @Tag("multiprocess")
    @Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void launchedTrainingWhoseRank0IsStoppedEndsNamingIt(@TempDir Path tmp) throws Exception {
        long boundMs = 3000 + MARGIN_MS + 20_000;
        Launched run = Launched.start(comlrl.cli.Main.class, "train", config(tmp, 3).toString());
        run.awaitOutput("[rank 0] 2 processes (gloo), ddp_split data");
        long stopped = run.stop(0);
        int code = run.awaitEnd(boundMs);
        long ms = (System.nanoTime() - stopped) / 1_000_000;

        assertThat(code).as(run.all()).isEqualTo(1);
        assertThat(run.err()).containsPattern("\\[rank 1\\] error: rank 1 of 2: \\w+ \\(collective #\\d+\\) timed out after "
                + "[0-9.]+ s \\(timeout 3.0 s\\)[^\\n]*the rendezvous store \\(served by rank 0 at 127.0.0.1:\\d+\\) does not "
                + "answer: rank 0 has exited, is stopped or frozen, or is unreachable.");
        run.assertStoppedRank0WasKilledAndNothingIsLeft();
        assertThat(ms).isLessThan(boundMs);
    }

    /**
     * Two ranks of one run started with different learning rates, seeds and splits: each fails
     * right after joining, before loading a model, naming every difference (without the check they
     * trained apart, or failed with "error: null" and an OutOfMemoryError).
     */
    @Test
    @Tag("multiprocess")
    @Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void ranksStartedWithDifferentConfigsFailBeforeLoadingAModelNamingEachDifference(@TempDir Path tmp) throws Exception {
        Path config = config(tmp, 60);
        try (RankProcesses ranks = RankProcesses.start(tmp, 2, comlrl.cli.Main.class, r -> List.of("train", config.toString(),
                "--set", "agent_learning_rate=" + (r == 0 ? "0.001" : "0.002"), "--set", "seed=" + (7 + r),
                "--set", "ddp_split=" + (r == 0 ? "data" : "agents")))) {
            for (int r = 0; r < 2; r++) {
                assertThat(ranks.process(r).waitFor(240, TimeUnit.SECONDS)).as(ranks.output(r)).isTrue();
            }
            for (int r = 0; r < 2; r++) {
                String text = ranks.output(r);
                assertThat(ranks.process(r).exitValue()).as(text).isEqualTo(1);
                assertThat(text).as(text).contains("error: config differs between ranks: args.agent_learning_rate is 0.001 "
                        + "on rank 0 and 0.002 on rank 1; args.ddp_split is \"data\" on rank 0 and \"agents\" on rank 1; "
                        + "args.seed is 7 on rank 0 and 8 on rank 1 (every process of a run must be started with the same "
                        + "config and options)\n").doesNotContain("items/s").doesNotContain("OutOfMemoryError");
            }
        }
    }

    /**
     * {@code dir/config.yaml}: MAGRPO on the built-in tiny model under ddp, as short as a run gets (1
     * epoch of the 10 length-ratio items, 2 completions of 4 tokens), with {@code timeoutS} for collectives.
     */
    private static Path config(Path dir, int timeoutS) throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, """
                algorithm: magrpo
                agent_model: builtin:tiny
                num_agents: 2
                dataset: {train: builtin:length-ratio, split_seed: 42}
                formatters: ["Short:\\n{prompt}", "Long:\\n{prompt}"]
                reward: {type: length_ratio}
                args:
                  num_turns: 1
                  num_train_epochs: 1
                  num_generations: 2
                  max_new_tokens: 4
                  parallel_training: ddp
                distributed: {timeout_s: %d, rendezvous_timeout_s: 120}
                report: false
                save_model: false
                output_dir: %s
                """.formatted(timeoutS, dir.resolve("run")));
        return file;
    }

    /** A {@link Launcher} run in the background, its output captured as it comes. */
    private record Launched(ByteArrayOutputStream stdout, ByteArrayOutputStream stderr, CompletableFuture<Integer> code) {
        static Launched start(Class<?> mainClass, String... args) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Launcher launcher = new Launcher(Launcher.javaCommand(mainClass.getName()),
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
            CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() -> {
                try {
                    return launcher.run(Launcher.Spec.local(2), List.of(args));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, r -> new Thread(r, "launch").start());
            return new Launched(out, err, code);
        }

        String out() {
            return stdout.toString(StandardCharsets.UTF_8);
        }

        String err() {
            return stderr.toString(StandardCharsets.UTF_8);
        }

        String all() {
            return out() + err();
        }

        /** Waits (up to two minutes) until every line of {@code lines} has been printed. */
        void awaitOutput(String... lines) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!java.util.Arrays.stream(lines).allMatch(all()::contains)) {
                assertThat(System.nanoTime()).as("waiting for " + List.of(lines) + ":\n" + all()).isLessThan(end);
                assertThat(code).as("launch ended early:\n" + all()).isNotDone();
                Thread.sleep(50);
            }
        }

        /** The children's pids by rank, from the launcher's "launch: started rank 0 (pid N), ..." line. */
        List<Long> pids() {
            Matcher m = Pattern.compile("rank (\\d+) \\(pid (\\d+)\\)").matcher(err().lines()
                    .filter(l -> l.startsWith("launch: started ")).findFirst().orElseThrow());
            List<Long> pids = new ArrayList<>();
            while (m.find()) {
                assertThat(Integer.parseInt(m.group(1))).isEqualTo(pids.size());
                pids.add(Long.parseLong(m.group(2)));
            }
            return pids;
        }

        /** Stops rank {@code rank} with SIGSTOP; returns when (System.nanoTime). */
        long stop(int rank) throws IOException, InterruptedException {
            Process kill = new ProcessBuilder("kill", "-STOP", Long.toString(pids().get(rank))).inheritIO().start();
            assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(kill.exitValue()).isZero();
            return System.nanoTime();
        }

        /** The launcher's exit code; kills the children and fails when it has not ended within {@code ms}. */
        int awaitEnd(long ms) throws Exception {
            try {
                return code.get(ms, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                pids().forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
                throw new AssertionError("launch still runs after " + ms + " ms:\n" + all(), e);
            }
        }

        void assertStoppedRank0WasKilledAndNothingIsLeft() {
            List<Long> pids = pids();
            assertThat(err()).contains("launch: rank 1 exited with code 1; stopping the other ranks")
                    .contains("launch: rank 0 (pid " + pids.get(0) + ") is stopped (SIGSTOP or a debugger) and cannot stop "
                            + "by itself: killing it");
            for (long pid : pids) {
                assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("pid " + pid).isFalse();
            }
        }
    }
}
