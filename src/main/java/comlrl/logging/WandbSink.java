package comlrl.logging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A Weights &amp; Biases run, driven through W&amp;B's own Python SDK: a long-lived child process (the
 * bridge, {@code wandb_bridge.py}) reads JSON lines and calls {@code wandb.init}, {@code run.log},
 * {@code run.summary}, {@code run.finish}. W&amp;B's modes and variables ({@code WANDB_MODE=offline|disabled},
 * {@code WANDB_API_KEY}, {@code WANDB_DIR}, {@code WANDB_BASE_URL}, ...) reach it as the environment of
 * the child, so they work as W&amp;B users know them.
 *
 * <p>Why the SDK rather than our own client of W&amp;B's service: the SDK is W&amp;B's supported
 * interface; its service protocol ({@code wandb-core}'s protobuf messages over a socket) is
 * internal and changes between releases, while {@code wandb.init/log/finish} are stable. The cost
 * is a Python process with {@code wandb} installed, started only when {@code wandb_config} is set.
 *
 * <p>Metrics are logged with {@code step = env_step} (W&amp;B's step axis) and {@code env_step} itself.
 * W&amp;B keeps one row per step, so the rows logged at one env_step are combined first
 * ({@link SameStepRows}: a key logged several times, such as the passes of {@code eval_repeats}, gets
 * their mean and {@code <key>_std}); a step's row is sent when the next step starts or the run closes.
 * Logging never blocks training: events go to a bounded queue that a writer thread sends; if the
 * bridge dies, the failure is reported once on the console and W&amp;B events are dropped from then
 * on, while the local sinks go on. A bridge that stops reading (hung in the SDK) is noticed while
 * training: when the writer has been blocked on the bridge's stdin for {@code stall_timeout_s}, a
 * watchdog reports "W&amp;B bridge stopped reading for N s" once, stops the bridge and drops the
 * events from then on. {@link #close()} finishes the run ({@code run.finish(exit_code)}, 1 after
 * {@link #markFailed()}) and waits for the upload up to {@code finish_timeout_s}, but not for a
 * bridge given up on (it returns at once), nor longer than {@code stall_timeout_s} for one that stops
 * reading the last events.
 */
public final class WandbSink implements RunTracker {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Events waiting for the bridge; beyond this many, new ones are dropped (reported once). */
    static final int QUEUE_LIMIT = 100_000;
    /** The default {@code stall_timeout_s}. */
    public static final Duration DEFAULT_STALL_TIMEOUT = Duration.ofSeconds(60);
    private static final String FINISH = "\u0000finish";
    /** {@link #writingSince} while the writer is not in a write to the bridge. */
    private static final long NOT_WRITING = Long.MIN_VALUE;
    /** The rows of the latest env_step, not yet sent. */
    private final SameStepRows pending = new SameStepRows();

    private final Process process;
    private final PrintStream console;
    private final Map<String, Object> identity;
    private final String runDir;
    private final BlockingQueue<String> queue = new ArrayBlockingQueue<>(QUEUE_LIMIT);
    private final Thread writer;
    private final AtomicBoolean broken = new AtomicBoolean();
    private final AtomicBoolean dropped = new AtomicBoolean();
    private final CompletableFuture<Boolean> finished = new CompletableFuture<>();
    private final Duration finishTimeout;
    private final Duration stallTimeout;
    /** Completes when the bridge is given up on ({@link #fail}), so that {@link #close()} stops waiting. */
    private final CompletableFuture<Void> gaveUp = new CompletableFuture<>();
    /** {@code System.nanoTime()} when the writer began its current write to the bridge, or {@link #NOT_WRITING}. */
    private volatile long writingSince = NOT_WRITING;
    private volatile boolean failed;
    private volatile boolean closed;

    /**
     * Starts the bridge and the run: {@code command} (the bridge process, e.g. {@code [python3,
     * wandb_bridge.py]}) gets {@code init} with {@code initKwargs} ({@code wandb.init}'s keyword
     * arguments) and must answer within {@code initTimeout}.
     *
     * @throws IllegalStateException naming the command and W&amp;B's message when the run cannot start
     */
    public WandbSink(List<String> command, Map<String, Object> initKwargs, Duration initTimeout, Duration finishTimeout,
            PrintStream console) {
        this(command, initKwargs, initTimeout, finishTimeout, DEFAULT_STALL_TIMEOUT, console);
    }

    /**
     * As {@link #WandbSink(List, Map, Duration, Duration, PrintStream)}, giving the bridge up when it
     * leaves a line unread for {@code stallTimeout} ({@code stall_timeout_s}).
     */
    public WandbSink(List<String> command, Map<String, Object> initKwargs, Duration initTimeout, Duration finishTimeout,
            Duration stallTimeout, PrintStream console) {
        this.console = console;
        this.finishTimeout = finishTimeout;
        this.stallTimeout = stallTimeout;
        comlrl.net.Secrets.register(System.getenv("WANDB_API_KEY")); // the bridge's environment carries it
        try {
            this.process = new ProcessBuilder(command).redirectErrorStream(false).start();
        } catch (IOException e) {
            throw new IllegalStateException("Cannot start the W&B bridge " + command + ": " + e.getMessage()
                    + ". wandb_config needs Python with the W&B SDK (pip install wandb); set COMLRL_WANDB_PYTHON to "
                    + "that Python, or remove wandb_config", e);
        }
        pump(process.getErrorStream(), console);
        BufferedReader replies = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<JsonNode> init = new CompletableFuture<>();
        Thread reader = new Thread(() -> readReplies(replies, init), "wandb-bridge-reader");
        reader.setDaemon(true);
        reader.start();
        JsonNode reply;
        try {
            Map<String, Object> message = new LinkedHashMap<>();
            message.put("op", "init");
            message.put("kwargs", initKwargs);
            OutputStream in = process.getOutputStream();
            in.write((comlrl.net.Secrets.scrub(JSON.writeValueAsString(message)) + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
            reply = init.get(initTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            process.destroyForcibly();
            throw new IllegalStateException("The W&B run did not start within " + initTimeout.toSeconds() + " s (wandb.init "
                    + "is waiting, e.g. for the network or a login); set WANDB_MODE=offline to log locally and "
                    + "`wandb sync` later, or raise wandb_config.init_timeout_s", e);
        } catch (IOException | InterruptedException | ExecutionException e) {
            process.destroyForcibly();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("The W&B bridge " + command + " stopped before the run started: "
                    + e.getMessage() + ". wandb_config needs Python with the W&B SDK (pip install wandb)", e);
        }
        if (!reply.path("ok").asBoolean(false)) {
            process.destroyForcibly();
            throw new IllegalStateException("W&B could not start the run: " + reply.path("error").asText("no reason given")
                    + (reply.path("error").asText("").contains("pip install wandb") ? ""
                    : ". Check the W&B settings (project, entity, WANDB_API_KEY, or WANDB_MODE=offline)"));
        }
        Map<String, Object> id = new LinkedHashMap<>();
        JsonNode ident = reply.path("identity");
        for (String key : List.of("id", "project", "entity", "name")) {
            String v = ident.path(key).isNull() || ident.path(key).isMissingNode() ? null : ident.path(key).asText();
            id.put(key, v == null || v.isEmpty() ? null : v); // offline runs have no entity
        }
        this.identity = java.util.Collections.unmodifiableMap(id);
        this.runDir = reply.path("dir").asText(null);
        this.writer = new Thread(this::writeLoop, "wandb-bridge-writer");
        writer.setDaemon(true);
        writer.start();
        Thread watchdog = new Thread(this::watchStalls, "wandb-bridge-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    /**
     * The bridge command for the Python in {@code COMLRL_WANDB_PYTHON} (else {@code python3}): the
     * bridge script is written once under {@code cacheDir}.
     */
    public static List<String> pythonCommand(Path cacheDir) {
        String python = System.getenv("COMLRL_WANDB_PYTHON");
        return pythonCommand(cacheDir, python == null || python.isBlank() ? "python3" : python);
    }

    /** The bridge command for {@code python}, the bridge script written once under {@code cacheDir}. */
    public static List<String> pythonCommand(Path cacheDir, String python) {
        Path script = cacheDir.resolve("wandb_bridge.py");
        try (InputStream src = WandbSink.class.getResourceAsStream("wandb_bridge.py")) {
            byte[] bytes = src.readAllBytes();
            if (!Files.isRegularFile(script) || !java.util.Arrays.equals(Files.readAllBytes(script), bytes)) {
                Files.createDirectories(cacheDir);
                Path tmp = Files.createTempFile(cacheDir, "wandb_bridge", ".py");
                Files.write(tmp, bytes);
                Files.move(tmp, script, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the W&B bridge script to " + script + ": " + e.getMessage(), e);
        }
        return List.of(python, "-u", script.toString());
    }

    /**
     * Fails, naming {@code pip install wandb}, unless the Python of {@code command} (its first element)
     * imports {@code wandb}: run before any model loads, so that a run with {@code wandb_config} and
     * no SDK stops at once.
     */
    public static void requireSdk(List<String> command) {
        String python = command.get(0);
        try {
            Process p = new ProcessBuilder(python, "-c", "import wandb").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(python + " took over 120 s to import wandb");
            }
            if (p.exitValue() != 0) {
                String last = out.isEmpty() ? "" : out.substring(out.lastIndexOf('\n') + 1);
                throw new IllegalStateException("wandb_config needs the W&B SDK, but " + python + " cannot import wandb ("
                        + last + "): pip install wandb, or set COMLRL_WANDB_PYTHON to a Python that has it, or remove "
                        + "the wandb section");
            }
        } catch (IOException e) {
            throw new IllegalStateException("wandb_config needs Python with the W&B SDK, but " + python + " cannot be "
                    + "started (" + e.getMessage() + "): pip install wandb, and set COMLRL_WANDB_PYTHON to that Python", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while checking the W&B SDK", e);
        }
    }

    @Override
    public Map<String, Object> identity() {
        return identity;
    }

    /** The run's local directory (W&amp;B's {@code run.dir}), or null. */
    public String runDir() {
        return runDir;
    }

    /** Whether the bridge failed (reported once) and events are being dropped. */
    public boolean broken() {
        return broken.get();
    }

    @Override
    public void log(long envStep, Map<String, Double> metrics) {
        send(pending.add(envStep, metrics));
    }

    /** Sends a combined row ({@link SameStepRows}); nothing for null. */
    private void send(SameStepRows.Row row) {
        if (row == null) {
            return;
        }
        long envStep = row.step();
        Map<String, Double> metrics = row.metrics();
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("env_step", envStep);
        metrics.forEach((k, v) -> data.put(k, jsonNumber(v)));
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("op", "log");
        message.put("step", envStep);
        message.put("data", data);
        enqueue(message);
    }

    /** JSON has no NaN or infinity: W&amp;B's own strings for them ({@code "NaN"}, {@code "Infinity"}). */
    private static Object jsonNumber(Double v) {
        if (v == null || Double.isFinite(v)) {
            return v;
        }
        return v.isNaN() ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    }

    @Override
    public void summary(Map<String, Object> values) {
        enqueue(Map.of("op", "summary", "data", values));
    }

    /** Adds values to the run's config ({@code run.config.update}). */
    public void config(Map<String, Object> values) {
        enqueue(Map.of("op", "config", "data", values));
    }

    @Override
    public void markFailed() {
        failed = true;
    }

    private void enqueue(Map<String, ?> message) {
        if (broken.get() || closed) {
            return;
        }
        String line;
        try {
            line = comlrl.net.Secrets.scrub(JSON.writeValueAsString(message));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (!queue.offer(line) && dropped.compareAndSet(false, true)) {
            console.println("W&B: the bridge is not keeping up (" + QUEUE_LIMIT + " events waiting); dropping W&B events "
                    + "until it does (metrics.jsonl has every event)");
        }
    }

    private void writeLoop() {
        OutputStream in = process.getOutputStream();
        try {
            while (true) {
                String line = queue.take();
                if (line.equals(FINISH)) {
                    String msg = "{\"op\": \"finish\", \"exit_code\": " + (failed ? 1 : 0) + "}\n";
                    writingSince = System.nanoTime();
                    in.write(msg.getBytes(StandardCharsets.UTF_8));
                    in.flush();
                    in.close();
                    writingSince = NOT_WRITING;
                    return;
                }
                if (broken.get()) {
                    continue;
                }
                writingSince = System.nanoTime(); // blocks while the bridge's stdin pipe is full
                in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                if (queue.isEmpty()) {
                    in.flush();
                }
                writingSince = NOT_WRITING;
            }
        } catch (IOException e) {
            // a closed pipe usually means the bridge ended: report it as the reader does, with its status
            String exit = exitNote();
            fail(exit.isEmpty() ? "W&B: the bridge stopped reading (" + e.getMessage() + ")" + GOES_ON
                    : "W&B: the bridge exited" + exit + GOES_ON);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The watchdog: gives the bridge up when the writer has been blocked on its stdin for
     * {@code stall_timeout_s} (the pipe is full and the bridge reads nothing), checking a few times
     * per timeout; ends when the bridge is given up on or the sink is closed.
     */
    private void watchStalls() {
        long stallNanos = stallTimeout.toNanos();
        long pollMillis = Math.max(10, Math.min(1000, stallTimeout.toMillis() / 4));
        try {
            while (!broken.get() && !(closed && finished.isDone())) {
                Thread.sleep(pollMillis);
                long since = writingSince;
                if (since != NOT_WRITING && System.nanoTime() - since >= stallNanos) {
                    fail("W&B bridge stopped reading for " + seconds(stallTimeout) + " s; W&B logging disabled for the "
                            + "rest of the run (metrics.jsonl and the other sinks keep every event"
                            + (runDir == null ? "" : "; `wandb sync " + runDir + "` uploads what the bridge kept") + ")");
                    process.destroyForcibly(); // a hung bridge: its pipe breaks and the writer ends
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@code 60}, {@code 0.5}: a duration in seconds as a user writes it. */
    private static String seconds(Duration d) {
        return java.math.BigDecimal.valueOf(d.toMillis(), 3).stripTrailingZeros().toPlainString();
    }

    private void readReplies(BufferedReader replies, CompletableFuture<JsonNode> init) {
        try {
            String line;
            while ((line = replies.readLine()) != null) {
                JsonNode reply;
                try {
                    reply = JSON.readTree(line);
                } catch (IOException e) {
                    continue; // not a protocol line
                }
                switch (reply.path("op").asText()) {
                    case "init" -> init.complete(reply);
                    case "finish" -> finished.complete(true);
                    case "error" -> console.println("W&B: " + reply.path("message").asText());
                    default -> { }
                }
            }
        } catch (IOException e) {
            // the process ended; handled below
        }
        init.completeExceptionally(new IOException("the bridge exited" + exitNote()));
        if (!finished.isDone()) {
            if (!closed) {
                fail("W&B: the bridge exited" + exitNote() + GOES_ON);
            }
            finished.complete(false);
        }
    }

    private String exitNote() {
        try {
            return process.waitFor(2, TimeUnit.SECONDS) ? " with status " + process.exitValue() : "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** How a report of a failed bridge ends. */
    private static final String GOES_ON = "; training goes on without W&B (metrics.jsonl and the other sinks keep "
            + "every event)";

    /** Reports a failure once ({@code message}); from then on W&amp;B events are dropped and training goes on. */
    private void fail(String message) {
        if (broken.compareAndSet(false, true)) {
            console.println(message);
            queue.clear();
            gaveUp.complete(null);
        }
    }

    /** Finishes the run (exit code 1 after {@link #markFailed()}) and waits for the bridge up to the finish timeout. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        send(pending.flush());
        closed = true;
        if (!broken.get()) { // a bridge given up on is not waited on again
            try {
                long deadline = System.nanoTime() + finishTimeout.toNanos();
                while (!queue.offer(FINISH, 100, TimeUnit.MILLISECONDS)) {
                    if (broken.get()) {
                        break;
                    }
                    if (System.nanoTime() - deadline > 0) {
                        throw new TimeoutException("the bridge did not take the finish message");
                    }
                }
                // the watchdog gives up on a bridge that stops reading the last events meanwhile
                CompletableFuture.anyOf(finished, gaveUp).get(finishTimeout.toMillis(), TimeUnit.MILLISECONDS);
                if (!broken.get() && !finished.getNow(false)) {
                    console.println("W&B: the bridge exited before the run finished" + exitNote());
                }
            } catch (TimeoutException e) {
                broken.set(true);
                console.println(String.format(Locale.ROOT, "W&B: the run did not finish within %d s; stopping the "
                        + "bridge (run `wandb sync %s` to upload what it kept)", finishTimeout.toSeconds(),
                        runDir == null ? "<run dir>" : runDir));
            } catch (ExecutionException e) {
                console.println("W&B: finishing the run failed: " + e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            if (broken.get() || !process.waitFor(finishTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        writer.interrupt();
    }

    /** Copies the bridge's stderr (W&amp;B's own messages) to the console, line by line. */
    private static void pump(InputStream err, PrintStream console) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(err, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    console.println(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "wandb-bridge-stderr");
        t.setDaemon(true);
        t.start();
    }
}
