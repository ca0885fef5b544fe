package comlrl.utils;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A long-lived child process spoken to in JSON lines: one request line on its stdin, one reply line
 * on its stdout. The transport under the {@code type: command} extension points (the command reward,
 * the command external transition); what the lines mean is up to the caller.
 *
 * <p><b>Call order.</b> {@link #builder} → {@link Builder#build()} (nothing starts) → {@link #call}
 * any number of times (the process starts on the first call and is kept alive) → {@link #close()}.
 * A protocol layer that finds a reply unusable calls {@link #fail(String)}, which kills the process
 * like any other failure.
 *
 * <p><b>Lines.</b> UTF-8; a request must be a single line (JSON writers escape newlines). Blank reply
 * lines are skipped; stdout is reserved for replies, so the process should log to stderr. Its
 * environment gets {@code PYTHONUNBUFFERED=1} (so a Python child flushes each line). When stdin
 * closes (end of input), the process should exit: that is how {@link #close()} asks it to.
 *
 * <p><b>Tied to this JVM.</b> A child never outlives the JVM that started it, even one that
 * ignores the end of its input: a shutdown hook kills live children (and their descendants) when
 * the JVM exits normally or on SIGTERM/SIGINT/SIGHUP, and for a SIGKILL or a crash, when no hook
 * runs, a guard process started beside each child notices the JVM's death through a pipe the
 * kernel closes and kills the child. The child's stdin, stdout, stderr, pid and exit code are its
 * own, untouched; the package-private {@code ChildProcesses} describes the mechanism and its limits.
 *
 * <p><b>Failures.</b> No reply within the timeout (default 60 s), the process exiting, a broken
 * pipe or a failed start throw an {@link ExternalProcessException} naming the command, the working
 * directory, the exit code when it exited, and the last {@value #STDERR_TAIL_LINES} lines of its
 * stderr; the process (and its children) is killed (a grandchild forked in the very instant of the
 * kill can escape it). The process is then unusable: later calls fail at once, without a restart,
 * so a broken helper cannot silently skew training. Calls are serialised ({@code synchronized}).
 *
 * <p>Close it (try-with-resources) when done: stdin is closed, the process gets 2 s to exit, then it
 * is destroyed. Calling after {@code close()} is an {@link IllegalStateException}.
 *
 * <pre>{@code
 * try (JsonLinesProcess p = JsonLinesProcess.builder("reward", List.of("python3", "reward.py"))
 *         .timeout(Duration.ofSeconds(10)).build()) {
 *     String reply = p.call("{\"x\": 1}");
 * }
 * }</pre>
 */
public final class JsonLinesProcess implements AutoCloseable {
    /** Default time to wait for one reply. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    /** How many of the last stderr lines are kept for error messages. */
    public static final int STDERR_TAIL_LINES = 20;

    private static final long EXIT_GRACE_MILLIS = 2000;
    /** Longest wait for the stderr reader to reach the end of a dead process's stream (it returns at once when it has). */
    private static final long READER_JOIN_MILLIS = 5000;
    private static final long FAIL_GRACE_MILLIS = 200;

    private final String name;
    private final List<String> command;
    private final Path workingDirectory;
    private final Duration timeout;
    private final Map<String, String> environment;
    private final Consumer<String> stderrSink;
    private final boolean guarded;

    private final Deque<String> stderrTail = new ArrayDeque<>();   // guarded by itself
    private final BlockingQueue<StdoutLine> stdoutLines = new LinkedBlockingQueue<>();
    private Process process;
    private ChildProcesses.Child child;
    private Writer stdin;
    private Thread stdoutReader;
    private Thread stderrReader;
    private int calls;
    private String failure;
    private boolean closed;

    private JsonLinesProcess(Builder<?> builder) {
        this.name = builder.name;
        this.command = builder.command;
        this.workingDirectory = builder.workingDirectory;
        this.timeout = builder.timeout;
        this.environment = Map.copyOf(builder.environment);
        this.stderrSink = builder.stderrSink;
        this.guarded = builder.guarded;
    }

    /**
     * A builder for {@code command} (program and arguments, not split by a shell).
     *
     * @param name what the process is, lower case, for messages: {@code "reward"} gives "Reward
     *     command [python3, reward.py] timed out ..." and "Could not start the reward command ..."
     */
    public static Builder<JsonLinesProcess> builder(String name, List<String> command) {
        return new Builder<>(name, command, process -> process);
    }

    /**
     * Options for a callback built on a process ({@code ExternalCommandReward},
     * {@code ExternalCommandTransition}): {@link Builder#build()} hands the process to {@code wrap}.
     */
    public static <T> Builder<T> builder(String name, List<String> command, java.util.function.Function<JsonLinesProcess, T> wrap) {
        return new Builder<>(name, command, wrap);
    }

    /**
     * Sends {@code requestLine} (one line, without its newline) and returns the next non-blank line
     * the process writes to stdout. Starts the process on the first call.
     *
     * @throws ExternalProcessException the process could not start, timed out, exited, or failed earlier
     * @throws IllegalStateException after {@link #close()}
     */
    public synchronized String call(String requestLine) {
        Objects.requireNonNull(requestLine, "requestLine");
        if (closed) {
            throw new IllegalStateException(title() + " " + command + " is closed.");
        }
        if (failure != null) {
            throw new ExternalProcessException(title() + " " + command + " failed earlier and is not restarted: "
                    + failure);
        }
        if (requestLine.indexOf('\n') >= 0 || requestLine.indexOf('\r') >= 0) {
            throw new IllegalArgumentException("a JSON-lines request must be one line; got a line break in: "
                    + shorten(requestLine));
        }
        if (process == null) {
            start();
        }
        calls++;
        try {
            stdin.write(requestLine);
            stdin.write('\n');
            stdin.flush();
        } catch (IOException e) {
            throw fail("could not receive call " + calls + " (" + e.getMessage() + ")" + exitDescription());
        }
        return awaitReply();
    }

    /**
     * Rejects the process (for a protocol layer that found the last reply unusable): kills it, marks
     * it failed so later calls fail at once, and returns (does not throw) an exception whose message is
     * "{Name} command [cmd] (working directory D) {what}. Last stderr lines: ...".
     *
     * @param what what went wrong, as a predicate: "replied with malformed output (...)"
     */
    public synchronized ExternalProcessException fail(String what) {
        // end its input first and give it a moment: a process that exits on EOF flushes its stderr,
        // which killing it could cut off before the reader has taken the last lines
        if (endInput(FAIL_GRACE_MILLIS)) {
            // it exited: its stderr ends by itself; read it to the end before the kill closes the streams
            joinQuietly(stderrReader);
        }
        kill();
        joinQuietly(stderrReader);
        String message = title() + " " + command + where() + " " + what + ". " + stderrReport();
        failure = what;
        return new ExternalProcessException(message);
    }

    /** Whether the child process is running (false before the first call and after close or a failure). */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** The command, as given. */
    public List<String> command() {
        return command;
    }

    /** The directory the process runs in; null = this JVM's working directory. */
    public Path workingDirectory() {
        return workingDirectory;
    }

    /** The longest wait for one reply. */
    public Duration timeout() {
        return timeout;
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
        if (endInput(EXIT_GRACE_MILLIS)) {
            ChildProcesses.unregister(child);
        } else {
            kill();
        }
    }

    /** Closes the process's stdin and waits up to {@code graceMillis} for it to exit; true if it did. */
    private boolean endInput(long graceMillis) {
        if (process == null) {
            return true;
        }
        try {
            stdin.close();
        } catch (IOException ignored) {
            // the process may already be gone
        }
        try {
            return process.waitFor(graceMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public String toString() {
        return "JsonLinesProcess[" + name + "]" + command;
    }

    /**
     * Checks, before anything starts, that {@code command} can run in {@code workingDirectory}, so a
     * config mistake fails while the config is read rather than at the first call, after the models
     * have loaded:
     * <ul>
     *   <li>the working directory exists;</li>
     *   <li>the program ({@code command[0]}) is an executable file: a name with a '/' is resolved
     *       against the working directory (as the process start does), a bare name is looked up on
     *       this JVM's {@code PATH};</li>
     *   <li>when {@code command[1]} looks like a script path (a relative or absolute path ending in
     *       .py, .sh, .js, .rb, ... or holding a '/', not an option or a URL) it exists, relative
     *       to the working directory: {@code [python3, reward.py]}.</li>
     * </ul>
     *
     * @param owner what the command belongs to, for messages: {@code "reward command"}
     * @param workingDirectory where it runs; null = this JVM's working directory
     * @throws IllegalArgumentException naming the missing file, where it was looked for, and the fix
     */
    public static void checkCommand(String owner, List<String> command, Path workingDirectory) {
        Objects.requireNonNull(command, "command");
        if (command.isEmpty()) {
            throw new IllegalArgumentException(owner + " needs at least the program to run");
        }
        Path dir = workingDirectory == null ? Path.of("").toAbsolutePath() : workingDirectory.toAbsolutePath();
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException(owner + " working_dir " + dir + " does not exist or is not a directory; "
                    + "fix working_dir (relative paths are resolved against the config file's directory)");
        }
        String program = command.get(0);
        if (program.indexOf('/') >= 0) {
            Path file = dir.resolve(program).normalize();
            if (!Files.exists(file)) {
                throw new IllegalArgumentException(owner + " program '" + program + "' (run[0]) does not exist: looked for "
                        + file + " (a relative path is resolved against the working directory " + dir + ")");
            }
            if (!Files.isRegularFile(file) || !Files.isExecutable(file)) {
                throw new IllegalArgumentException(owner + " program '" + program + "' (run[0]) is not an executable file: "
                        + file + "; make it executable (chmod +x " + file + ") or run it through its interpreter, e.g. "
                        + "run: [bash, " + program + "]");
            }
        } else if (findOnPath(program) == null) {
            Path local = dir.resolve(program);
            String hint = Files.isRegularFile(local)
                    ? "; " + local + " exists, but a bare name is looked up on PATH only: write ./" + program
                        + " (and make it executable), or run it through its interpreter, e.g. run: [bash, " + program + "]"
                    : "; install it, add its directory to PATH, or give its full path";
            throw new IllegalArgumentException(owner + " program '" + program + "' (run[0]) was not found on PATH ("
                    + System.getenv().getOrDefault("PATH", "") + ")" + hint);
        }
        if (command.size() > 1 && looksLikeScriptPath(command.get(1))) {
            String script = command.get(1);
            Path file = dir.resolve(script).normalize();
            if (!Files.exists(file)) {
                throw new IllegalArgumentException(owner + " script '" + script + "' (run[1]) does not exist: looked for "
                        + file + " (relative to the working directory " + dir + "); fix the path, or set working_dir "
                        + "to the script's directory");
            }
        }
    }

    private static final java.util.Set<String> SCRIPT_EXTENSIONS = java.util.Set.of(
            "py", "sh", "bash", "zsh", "js", "mjs", "cjs", "ts", "rb", "pl", "php", "lua", "r", "jl", "jar");

    private static boolean looksLikeScriptPath(String argument) {
        if (argument.isEmpty() || argument.startsWith("-") || argument.contains("://") || argument.contains("=")
                || argument.chars().anyMatch(Character::isWhitespace)) {
            return false;
        }
        int dot = argument.lastIndexOf('.');
        boolean scriptExtension = dot > 0 && dot > argument.lastIndexOf('/')
                && SCRIPT_EXTENSIONS.contains(argument.substring(dot + 1).toLowerCase(Locale.ROOT));
        return scriptExtension || argument.indexOf('/') >= 0;
    }

    /** The executable {@code program} in a directory of {@code PATH}, or null. */
    private static Path findOnPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String entry : path.split(java.io.File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            try {
                Path candidate = Path.of(entry).resolve(program);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate;
                }
            } catch (java.nio.file.InvalidPathException ignored) {
                // an unusable PATH entry cannot hold the program
            }
        }
        return null;
    }

    /** A reply or request text cut to 200 characters for an error message. */
    public static String shorten(String text) {
        return text.length() > 200 ? text.substring(0, 200) + "…" : text;
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
            throw new ExternalProcessException("Could not start the " + name + " command " + command + where() + ": "
                    + e.getMessage() + ". Check that the program exists and is on PATH.", e);
        }
        child = ChildProcesses.register(process, guarded);
        stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Process started = process;
        String threadName = name.replace(' ', '-') + "-command";
        stdoutReader = daemon(threadName + "-stdout", () -> readStdout(started));
        stderrReader = daemon(threadName + "-stderr", () -> readStderr(started));
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
                        + " (raise timeout_s if the " + name + " is slow)");
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
        child.killAll();
        try {
            process.waitFor(EXIT_GRACE_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ChildProcesses.unregister(child);
    }

    /** "Reward command", "External transition command": the subject of every message. */
    private String title() {
        return name.substring(0, 1).toUpperCase(Locale.ROOT) + name.substring(1) + " command";
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

    /**
     * The settings of a {@code {type: command, run: [...], working_dir: ., timeout_s: 60}} config
     * section (the command reward, the command external transition), validated, the command
     * checked with {@link #checkCommand}.
     *
     * @param run the program and its arguments
     * @param workingDirectory where it runs (absolute)
     * @param timeout the longest wait for one reply
     */
    public record CommandConfig(List<String> run, Path workingDirectory, Duration timeout) {
        /** The keys of a command section. */
        public static final List<String> KEYS = List.of("type", "run", "working_dir", "timeout_s");

        /**
         * Reads {@code map} (which holds {@code type: command}): {@code run} is a list (a single
         * string is one program without arguments, never split by a shell; numbers and booleans
         * are arguments as their text); {@code working_dir} is resolved against {@code baseDirectory}
         * (the config file's directory) and defaults to it; {@code timeout_s} defaults to 60.
         *
         * @param owner the section, for messages: {@code "reward command"}
         * @param example a {@code run} value for messages: {@code "[python3, reward.py]"}
         * @param baseDirectory directory relative paths are resolved against; null = the current directory
         * @throws IllegalArgumentException an unknown key (with the closest valid one), a missing or
         *     malformed value, a missing program or script
         */
        public static CommandConfig fromMap(String owner, Map<String, Object> map, Path baseDirectory, String example) {
            ConfigMaps.requireKnownKeys(owner, map, KEYS, Map.of("command", "use 'run' (a list: " + example + ").",
                    "cwd", "use 'working_dir'.", "timeout", "use 'timeout_s' (seconds)."));
            List<String> command = ConfigMaps.toNullableArgumentList(owner, "run", map.get("run"));
            if (command == null || command.isEmpty()) {
                throw new IllegalArgumentException(owner + " needs 'run': the program and its arguments, e.g. run: "
                        + example);
            }
            Path base = baseDirectory == null ? Path.of("").toAbsolutePath() : baseDirectory.toAbsolutePath();
            Object dir = map.get("working_dir");
            Path workingDirectory = ConfigMaps.isNullLike(dir) ? base
                    : base.resolve(ConfigMaps.toStr(owner, "working_dir", dir)).normalize();
            double seconds = ConfigMaps.toDouble(owner, "timeout_s",
                    map.getOrDefault("timeout_s", (double) DEFAULT_TIMEOUT.toSeconds()));
            if (!(seconds > 0) || Double.isInfinite(seconds)) {
                throw new IllegalArgumentException(owner + " timeout_s must be a positive number of seconds, got "
                        + seconds);
            }
            checkCommand(owner, command, workingDirectory);
            return new CommandConfig(command, workingDirectory, Duration.ofNanos((long) (seconds * 1e9)));
        }
    }

    /**
     * The child process failed: it could not start, timed out, exited, or its reply was rejected. The
     * message names the command, the working directory, the exit code when known and the stderr tail.
     */
    public static final class ExternalProcessException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public ExternalProcessException(String message) {
            super(message);
        }

        public ExternalProcessException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Options of a {@link JsonLinesProcess}; {@link #build()} returns it, or what wraps it. */
    public static final class Builder<T> {
        private final java.util.function.Function<JsonLinesProcess, T> wrap;
        private final String name;
        private final List<String> command;
        private Path workingDirectory;
        private Duration timeout = DEFAULT_TIMEOUT;
        private final Map<String, String> environment = new LinkedHashMap<>();
        private Consumer<String> stderrSink = line -> { };
        private boolean guarded = true;

        private Builder(String name, List<String> command, java.util.function.Function<JsonLinesProcess, T> wrap) {
            this.wrap = Objects.requireNonNull(wrap, "wrap");
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("the process needs a name for its messages, e.g. \"reward\"");
            }
            this.name = name;
            Objects.requireNonNull(command, "command");
            if (command.isEmpty()) {
                throw new IllegalArgumentException("the " + name + " command needs at least the program to run");
            }
            for (String part : command) {
                Objects.requireNonNull(part, "command element");
            }
            this.command = List.copyOf(command);
        }

        /** Directory the process runs in; default (null): this JVM's working directory. */
        public Builder<T> workingDirectory(Path workingDirectory) {
            this.workingDirectory = workingDirectory;
            return this;
        }

        /** Longest wait for one reply (default 60 s); must be positive. */
        public Builder<T> timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("the " + name + " command timeout must be positive, got " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /** An extra environment variable for the process (added after {@code PYTHONUNBUFFERED=1}). */
        public Builder<T> environment(String variable, String value) {
            environment.put(Objects.requireNonNull(variable, "variable"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Receives every stderr line as it arrives, on a background thread (default: dropped; the last
         * lines are always kept for error messages).
         */
        public Builder<T> stderrSink(Consumer<String> stderrSink) {
            this.stderrSink = Objects.requireNonNull(stderrSink, "stderrSink");
            return this;
        }

        /**
         * Starts the process without its guard process, so that only the shutdown hook ties it to
         * the JVM (for the test of that hook alone).
         */
        Builder<T> withoutGuard() {
            this.guarded = false;
            return this;
        }

        /** The process (not yet started), or the callback wrapping it. */
        public T build() {
            return wrap.apply(new JsonLinesProcess(this));
        }
    }
}
