package comlrl.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One execution: starts the isolated interpreter with the harness, hands it the request on stdin, enforces the
 * wall-time and output limits from here (the others are rlimits the harness sets before reading the program),
 * kills what is left, and turns exit code and verdict lines into an {@link ExecutionResult}.
 *
 * <p>Which status wins: output limit, then wall-time timeout (both seen here), then the harness's final
 * verdict, then the way the interpreter ended: signal {@code SIGXCPU} is the CPU limit (timeout), another signal
 * is {@link Status#KILLED}, an exit without a final verdict is a runtime error (the program ended the
 * interpreter itself). Tests passed are those of the last verdict line, final or not.
 */
final class Execution {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String HARNESS = Isolation.resource("harness.py");
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Exit status of the set-up script when the sandbox could not be built. */
    private static final int SETUP_FAILED = 125;
    private static final int SIGKILL = 9;
    private static final int SIGXCPU = 24;

    private final SandboxConfig config;
    private final HostTools tools;
    private final String interpreter;
    private final ExecutorService io;

    Execution(SandboxConfig config, HostTools tools, String interpreter, ExecutorService io) {
        this.config = config;
        this.tools = tools;
        this.interpreter = interpreter;
        this.io = io;
    }

    ExecutionResult run(Job job) {
        Isolation isolation = config.isolation();
        Path hostWorkdir = null;
        try {
            hostWorkdir = isolation.needsHostWorkdir() ? Files.createTempDirectory("comlrl-sandbox-") : null;
            return launch(job, hostWorkdir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the sandbox: " + e.getMessage(), e);
        } finally {
            Isolation.deleteTree(hostWorkdir);
        }
    }

    private ExecutionResult launch(Job job, Path hostWorkdir) throws IOException {
        Isolation isolation = config.isolation();
        List<String> interpreterCommand = new ArrayList<>();
        interpreterCommand.add(interpreter);
        interpreterCommand.addAll(config.interpreterArgs());
        interpreterCommand.addAll(List.of("-c", HARNESS));
        ProcessBuilder builder = new ProcessBuilder(isolation.command(tools, config, interpreterCommand));
        builder.directory(hostWorkdir == null ? Path.of("/").toFile() : hostWorkdir.toFile());
        Map<String, String> env = builder.environment();
        env.clear();
        env.putAll(Isolation.ENVIRONMENT);
        env.put("HOME", isolation.workdir(hostWorkdir));
        String nonce = HexFormat.of().formatHex(randomBytes()); // the program cannot guess it to forge a verdict line

        long start = System.nanoTime();
        Process process = builder.start();
        AtomicBoolean outputExceeded = new AtomicBoolean();
        AtomicLong outputBytes = new AtomicLong();
        Runnable onLimit = () -> {
            outputExceeded.set(true);
            kill(process);
        };
        OutputPump stdout = new OutputPump(process.getInputStream(), outputBytes, config.maxOutputBytes(), onLimit, null);
        OutputPump stderr = new OutputPump(process.getErrorStream(), outputBytes, config.maxOutputBytes(), onLimit, nonce);
        Future<?> stdoutDone = io.submit(stdout);
        Future<?> stderrDone = io.submit(stderr);
        Future<?> stdinDone = io.submit(() -> writeRequest(process, nonce, job));
        boolean timedOut;
        try {
            timedOut = !process.waitFor(config.wallTime().toNanos(), TimeUnit.NANOSECONDS);
            if (timedOut) {
                kill(process);
                process.waitFor();
            }
        } catch (InterruptedException e) {
            kill(process);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while a sandboxed program ran", e);
        }
        Duration wall = Duration.ofNanos(System.nanoTime() - start);
        if (isolation == Isolation.PROCESS) {
            killGroup(process.pid()); // what the program left running in its group (the namespaces mode needs no help)
        }
        drain(stdoutDone, process);
        drain(stderrDone, process);
        stdinDone.cancel(true);
        return verdict(process.exitValue(), timedOut, outputExceeded.get(), stdout, stderr, wall);
    }

    private ExecutionResult verdict(int exit, boolean timedOut, boolean outputExceeded, OutputPump stdout,
            OutputPump stderr, Duration wall) {
        List<String> lines = stderr.verdicts();
        JsonNode last = lines.isEmpty() ? null : parse(lines.get(lines.size() - 1));
        int passed = last == null ? 0 : last.path("tests_passed").asInt();
        int total = last == null ? 0 : last.path("tests_total").asInt();
        String out = stdout.text();
        String err = stderr.text();
        if (!outputExceeded && !timedOut && exit == SETUP_FAILED && err.contains("comlrl-sandbox:")) {
            throw new SandboxException("the sandbox could not be set up: " + err.strip());
        }
        Status status;
        String message;
        if (outputExceeded) {
            status = Status.OUTPUT_LIMIT;
            message = "output limit of " + config.maxOutputBytes() + " bytes (stdout and stderr) reached; killed";
        } else if (timedOut) {
            status = Status.TIMEOUT;
            message = "wall-time limit of " + seconds(config.wallTime()) + " reached; killed";
        } else if (last != null && last.path("final").asBoolean()) {
            status = Status.fromKey(last.path("status").asText());
            message = last.path("message").asText();
        } else if (exit == 128 + SIGXCPU) {
            status = Status.TIMEOUT;
            message = "CPU-time limit of " + config.cpuSeconds() + " s reached (SIGXCPU)";
        } else if (exit > 128 && exit <= 128 + 64) {
            status = Status.KILLED;
            message = "the interpreter was killed by signal " + (exit - 128) + (exit - 128 == SIGKILL ? " (SIGKILL)" : "");
        } else if (last == null) {
            status = Status.KILLED;
            message = "the interpreter ended (exit " + exit + ") before the harness started: " + tail(err);
        } else {
            status = Status.RUNTIME_ERROR;
            message = "the program ended the interpreter (exit " + exit + ") before its tests finished";
        }
        return new ExecutionResult(status, passed, total, message, wall, out, err);
    }

    private void writeRequest(Process process, String nonce, Job job) {
        Map<String, Object> limits = new LinkedHashMap<>();
        limits.put("cpu_s", config.cpuSeconds());
        limits.put("memory_bytes", config.memoryBytes());
        limits.put("processes", config.maxProcesses());
        limits.put("open_files", config.maxOpenFiles());
        limits.put("file_bytes", config.maxFileBytes());
        Map<String, Object> request = Map.of("nonce", nonce, "code", job.code(), "tests", job.tests(), "limits", limits);
        try (OutputStream in = process.getOutputStream()) {
            in.write(JSON.writeValueAsBytes(request));
        } catch (IOException e) {
            // the interpreter ended before reading its request: its exit status says why
        }
    }

    /** Waits for a pump to reach the end of its stream; a stream kept open by an escaped process is closed. */
    private static void drain(Future<?> pump, Process process) {
        try {
            pump.get(2, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            try {
                process.getInputStream().close();
                process.getErrorStream().close();
            } catch (IOException ignored) {
                // closing is all we can do
            }
            pump.cancel(true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("reading a sandboxed program's output failed", e.getCause());
        }
    }

    /**
     * Kills the run: SIGKILL to its process group and to the process started here ({@code setsid}'s, then
     * {@code unshare}'s), whose death takes the namespace's PID 1 and with it every process of the run (also
     * those that left the group).
     */
    private void kill(Process process) {
        killGroup(process.pid());
        process.destroyForcibly();
    }

    /** SIGKILL to process group {@code pgid} (the run's: {@code setsid} made the started process its leader). */
    private void killGroup(long pgid) {
        try {
            new ProcessBuilder(tools.sh(), "-c", "kill -9 -" + pgid + " 2>/dev/null; exit 0").start().waitFor();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot kill the sandbox's process group " + pgid, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException("the sandbox harness wrote an unreadable verdict: " + json, e);
        }
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    private static String seconds(Duration d) {
        return d.toMillis() / 1000.0 + " s";
    }

    private static String tail(String text) {
        String t = text.strip();
        return t.length() <= 500 ? t : "..." + t.substring(t.length() - 500);
    }
}
