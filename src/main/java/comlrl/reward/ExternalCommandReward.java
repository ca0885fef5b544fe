package comlrl.reward;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import comlrl.data.TaskItem;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A reward computed by a long-lived child process (config {@code type: command}), so rewards can be
 * written in any language, e.g. {@code [python3, reward.py]}.
 *
 * <p><b>Protocol</b> (JSON lines, UTF-8). The process is started on the first call and kept alive.
 * For each call it receives one line on stdin:
 * <pre>{"batch_items": [{...task item...}], "agent_completions": [["a0 c0", "a0 c1"], ["a1 c0", "a1 c1"]], "num_agents": 2}</pre>
 * and must answer with one line on stdout, flushed: either a JSON array of numbers
 * {@code [1.0, 0.5]} or an object {@code {"rewards": [1.0, 0.5]}} (NaN/Infinity as Python's
 * {@code json} writes them are accepted). Blank lines are skipped; stdout is reserved for replies,
 * so the process should log to stderr. Its environment gets {@code PYTHONUNBUFFERED=1}. When
 * stdin closes, the process should exit.
 *
 * <pre>{@code
 * # reward.py
 * import json, sys
 * for line in sys.stdin:
 *     req = json.loads(line)
 *     briefs, detaileds = req["agent_completions"]
 *     print(json.dumps([float(len(d) > len(b)) for b, d in zip(briefs, detaileds)]), flush=True)
 * }</pre>
 *
 * <p><b>Failures.</b> No reply within the timeout (default 60 s), the process exiting, unreadable
 * output or a failed start throw a {@link RewardFunctionException} naming the command, the working
 * directory and the last ~20 lines of the process's stderr; the process (and its children) is
 * killed (a grandchild forked in the very instant of the kill can escape it). The reward is then
 * unusable: later calls fail at once, without a restart, so a broken
 * reward cannot silently skew training. Calls are serialised ({@code synchronized}).
 *
 * <p>Close it (try-with-resources) when done: stdin is closed, the process gets 2 s to exit, then it
 * is destroyed.
 */
public final class ExternalCommandReward implements RewardFunction, AutoCloseable {
    /** Default time to wait for one reply. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    /** How many of the last stderr lines are kept for error messages. */
    public static final int STDERR_TAIL_LINES = 20;

    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .build();
    private static final long EXIT_GRACE_MILLIS = 2000;
    private static final long READER_JOIN_MILLIS = 1000;

    private final List<String> command;
    private final Path workingDirectory;
    private final Duration timeout;
    private final Map<String, String> environment;
    private final Consumer<String> stderrSink;

    private final Deque<String> stderrTail = new ArrayDeque<>();   // guarded by itself
    private final BlockingQueue<StdoutLine> stdoutLines = new LinkedBlockingQueue<>();
    private Process process;
    private Writer stdin;
    private Thread stdoutReader;
    private Thread stderrReader;
    private int calls;
    private String failure;
    private boolean closed;

    private ExternalCommandReward(Builder builder) {
        this.command = List.copyOf(builder.command);
        this.workingDirectory = builder.workingDirectory;
        this.timeout = builder.timeout;
        this.environment = Map.copyOf(builder.environment);
        this.stderrSink = builder.stderrSink;
    }

    /** A builder for {@code command} (program and arguments, not split by a shell). */
    public static Builder builder(List<String> command) {
        return new Builder(command);
    }

    /** A reward running {@code command} with the defaults (current directory, 60 s timeout). */
    public static ExternalCommandReward of(String... command) {
        return builder(List.of(command)).build();
    }

    @Override
    public synchronized List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        if (closed) {
            throw new IllegalStateException("Reward command " + command + " is closed.");
        }
        if (failure != null) {
            throw new RewardFunctionException("Reward command " + command + " failed earlier and is not restarted: "
                    + failure);
        }
        String request = request(agentCompletions, batchItems);
        if (process == null) {
            start();
        }
        calls++;
        try {
            stdin.write(request);
            stdin.write('\n');
            stdin.flush();
        } catch (IOException e) {
            throw fail("could not receive call " + calls + " (" + e.getMessage() + ")" + exitDescription());
        }
        return parse(awaitReply());
    }

    /** Whether the child process is running (false before the first call and after close or a failure). */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** The command, as given. */
    public List<String> command() {
        return command;
    }

    /** Closes stdin, gives the process 2 s to exit, then destroys it (and its children). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (process == null) {
            return;
        }
        try {
            stdin.close();
        } catch (IOException ignored) {
            // the process may already be gone
        }
        try {
            if (!process.waitFor(EXIT_GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
                kill();
            }
        } catch (InterruptedException e) {
            kill();
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "ExternalCommandReward" + command;
    }

    private String request(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        List<Map<String, Object>> items = new ArrayList<>(batchItems.size());
        for (TaskItem item : batchItems) {
            items.add(item.asMap());
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("batch_items", items);
        request.put("agent_completions", agentCompletions);
        request.put("num_agents", agentCompletions.size());
        try {
            return JSON.writeValueAsString(request);
        } catch (JsonProcessingException e) {
            throw new RewardFunctionException("Could not write the reward request as JSON for " + command + ": "
                    + e.getOriginalMessage(), e);
        }
    }

    private void start() {
        ProcessBuilder builder = new ProcessBuilder(command);
        if (workingDirectory != null) {
            builder.directory(workingDirectory.toFile());
        }
        builder.environment().put("PYTHONUNBUFFERED", "1");
        builder.environment().putAll(environment);
        try {
            process = builder.start();
        } catch (IOException e) {
            failure = "could not start (" + e.getMessage() + ")";
            throw new RewardFunctionException("Could not start the reward command " + command + where() + ": "
                    + e.getMessage() + ". Check that the program exists and is on PATH.", e);
        }
        stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Process started = process;
        stdoutReader = daemon("reward-command-stdout", () -> readStdout(started));
        stderrReader = daemon("reward-command-stderr", () -> readStderr(started));
    }

    private String awaitReply() {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long remaining = deadline - System.nanoTime();
            StdoutLine line;
            try {
                line = remaining > 0 ? stdoutLines.poll(remaining, TimeUnit.NANOSECONDS) : stdoutLines.poll();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw fail("was interrupted while waiting for the reply to call " + calls);
            }
            if (line == null) {
                throw fail("timed out after " + seconds(timeout) + " s waiting for the reply to call " + calls
                        + " (raise timeout_s if the reward is slow)");
            }
            if (line.text == null) {
                String reason = line.error == null ? "closed its stdout" : "stdout failed (" + line.error + ")";
                throw fail(reason + " before replying to call " + calls + exitDescription());
            }
            if (!line.text.isBlank()) {
                return line.text;
            }
        }
    }

    private List<Double> parse(String reply) {
        JsonNode node;
        try {
            node = JSON.readTree(reply);
        } catch (JsonProcessingException e) {
            throw fail(malformed(reply, "it is not JSON"));
        }
        JsonNode array = node;
        if (node != null && node.isObject()) {
            array = node.get("rewards");
        }
        if (array == null || !array.isArray()) {
            throw fail(malformed(reply, "it is neither an array nor an object with a \"rewards\" array"));
        }
        List<Double> rewards = new ArrayList<>(array.size());
        for (int k = 0; k < array.size(); k++) {
            JsonNode value = array.get(k);
            if (!value.isNumber()) {
                throw fail(malformed(reply, "element " + k + " is not a number"));
            }
            rewards.add(value.doubleValue());
        }
        return rewards;
    }

    private static String malformed(String reply, String problem) {
        String shown = reply.length() > 200 ? reply.substring(0, 200) + "…" : reply;
        return "replied with malformed output (" + problem + "): " + shown
                + "; expected one JSON line: an array of numbers or {\"rewards\": [...]}";
    }

    /** Kills the process, records the failure and builds the exception with the stderr tail. */
    private RewardFunctionException fail(String what) {
        kill();
        joinQuietly(stderrReader);
        String message = "Reward command " + command + where() + " " + what + ". " + stderrReport();
        failure = what;
        return new RewardFunctionException(message);
    }

    private String exitDescription() {
        try {
            if (process.waitFor(EXIT_GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
                return "; the process exited with code " + process.exitValue();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "; the process is still running";
    }

    private void kill() {
        if (process == null) {
            return;
        }
        // children first: once the parent dies they are no longer its descendants
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(EXIT_GRACE_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String where() {
        return workingDirectory == null ? "" : " (working directory " + workingDirectory + ")";
    }

    private String stderrReport() {
        synchronized (stderrTail) {
            if (stderrTail.isEmpty()) {
                return "No stderr output.";
            }
            return "Last stderr lines:\n  " + String.join("\n  ", stderrTail);
        }
    }

    private void readStdout(Process source) {
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(source.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                stdoutLines.add(new StdoutLine(line, null));
            }
            stdoutLines.add(new StdoutLine(null, null));
        } catch (IOException e) {
            stdoutLines.add(new StdoutLine(null, e.getMessage()));
        }
    }

    private void readStderr(Process source) {
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(source.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                synchronized (stderrTail) {
                    if (stderrTail.size() == STDERR_TAIL_LINES) {
                        stderrTail.removeFirst();
                    }
                    stderrTail.addLast(line);
                }
                stderrSink.accept(line);
            }
        } catch (IOException | RuntimeException ignored) {
            // stream closed by a kill, or a failing sink: nothing more to capture
        }
    }

    private static Thread daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static void joinQuietly(Thread thread) {
        if (thread == null) {
            return;
        }
        try {
            thread.join(READER_JOIN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String seconds(Duration duration) {
        return String.valueOf(duration.toMillis() / 1000.0);
    }

    /** One stdout line; {@code text == null} marks the end of the stream ({@code error} when it failed). */
    private record StdoutLine(String text, String error) {}

    /** Options of an {@link ExternalCommandReward}. */
    public static final class Builder {
        private final List<String> command;
        private Path workingDirectory;
        private Duration timeout = DEFAULT_TIMEOUT;
        private final Map<String, String> environment = new LinkedHashMap<>();
        private Consumer<String> stderrSink = line -> { };

        private Builder(List<String> command) {
            Objects.requireNonNull(command, "command");
            if (command.isEmpty()) {
                throw new IllegalArgumentException("the reward command needs at least the program to run");
            }
            for (String part : command) {
                Objects.requireNonNull(part, "command element");
            }
            this.command = List.copyOf(command);
        }

        /** Directory the process runs in; default: this JVM's working directory. */
        public Builder workingDirectory(Path workingDirectory) {
            this.workingDirectory = workingDirectory;
            return this;
        }

        /** Longest wait for one reply (default 60 s); must be positive. */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("the reward command timeout must be positive, got " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /** An extra environment variable for the process. */
        public Builder environment(String name, String value) {
            environment.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Receives every stderr line as it arrives, on a background thread (default: dropped; the last
         * lines are always kept for error messages). The command line passes {@code System.err::println}.
         */
        public Builder stderrSink(Consumer<String> stderrSink) {
            this.stderrSink = Objects.requireNonNull(stderrSink, "stderrSink");
            return this;
        }

        public ExternalCommandReward build() {
            return new ExternalCommandReward(this);
        }
    }
}
