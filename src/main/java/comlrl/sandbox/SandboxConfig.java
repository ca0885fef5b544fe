package comlrl.sandbox;

import java.time.Duration;
import java.util.List;

/**
 * How programs run in a {@link Sandbox}. Built with {@link #builder()}; every field is validated here.
 *
 * @param isolation       {@link Isolation#NAMESPACES} (default) or the weaker {@link Isolation#PROCESS}, chosen explicitly
 * @param interpreter     the interpreter: a name looked up on the sandbox's {@code PATH}
 *                        ({@code /usr/local/bin:/usr/bin:/bin}) or an absolute path; default {@code python3}. It must
 *                        run the harness (Python 3.8 or later)
 * @param interpreterArgs arguments before the harness's {@code -c}; default none (e.g. {@code -I}, {@code -X utf8})
 * @param wallTime        wall-clock limit of one execution, sandbox start-up included; default 10 s
 * @param cpuTime         CPU-time limit ({@code RLIMIT_CPU}, rounded up to whole seconds); default 10 s
 * @param memoryBytes     address-space limit of each process ({@code RLIMIT_AS}); default 1 GiB
 * @param maxProcesses    processes and threads ({@code RLIMIT_NPROC}; in the namespaces mode they are counted in
 *                        the run's own user namespace); default 64
 * @param maxOpenFiles    open file descriptors ({@code RLIMIT_NOFILE}); default 64
 * @param maxFileBytes    size of any one file written ({@code RLIMIT_FSIZE}); default 16 MiB
 * @param maxOutputBytes  stdout and stderr together; beyond it the run is killed ({@link Status#OUTPUT_LIMIT}); default 1 MiB
 * @param scratchBytes    size of the private {@code /tmp} (the working directory) and {@code /dev/shm} file systems
 *                        in the namespaces mode; default 64 MiB
 * @param parallelism     executions at once in {@link Sandbox#runAll}; default the number of cores
 * @param cacheSize       verdicts of distinct (code, tests) pairs kept (least recently used dropped first); 0 turns
 *                        the cache off; default 4096
 */
public record SandboxConfig(Isolation isolation, String interpreter, List<String> interpreterArgs, Duration wallTime,
        Duration cpuTime, long memoryBytes, int maxProcesses, int maxOpenFiles, long maxFileBytes, long maxOutputBytes,
        long scratchBytes, int parallelism, int cacheSize) {

    public SandboxConfig {
        check(isolation != null, "isolation must be set (namespaces or process)");
        check(interpreter != null && !interpreter.isBlank(), "interpreter must be set (e.g. python3 or /usr/bin/python3)");
        interpreterArgs = List.copyOf(interpreterArgs == null ? List.of() : interpreterArgs);
        check(wallTime != null && !wallTime.isNegative() && !wallTime.isZero(), "wall time must be positive, got " + wallTime);
        check(cpuTime != null && cpuTime.toMillis() >= 1, "cpu time must be positive, got " + cpuTime);
        check(memoryBytes >= 32L << 20, "memory must be at least 32 MiB (the interpreter needs it to start), got "
                + memoryBytes + " bytes");
        check(maxProcesses >= 2, "max processes must be at least 2 (the interpreter and its parent), got " + maxProcesses);
        check(maxOpenFiles >= 8, "max open files must be at least 8, got " + maxOpenFiles);
        check(maxFileBytes >= 0, "max file bytes must be >= 0, got " + maxFileBytes);
        check(maxOutputBytes >= 1024, "max output bytes must be at least 1024, got " + maxOutputBytes);
        check(scratchBytes >= 1L << 20, "scratch bytes must be at least 1 MiB, got " + scratchBytes);
        check(parallelism >= 1, "parallelism must be at least 1, got " + parallelism);
        check(cacheSize >= 0, "cache size must be >= 0 (0 turns the cache off), got " + cacheSize);
    }

    /** CPU seconds for {@code RLIMIT_CPU}: the limit rounded up. */
    public long cpuSeconds() {
        return (cpuTime.toMillis() + 999) / 1000;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this config. */
    public Builder toBuilder() {
        return new Builder().isolation(isolation).interpreter(interpreter).interpreterArgs(interpreterArgs)
                .wallTime(wallTime).cpuTime(cpuTime).memoryBytes(memoryBytes).maxProcesses(maxProcesses)
                .maxOpenFiles(maxOpenFiles).maxFileBytes(maxFileBytes).maxOutputBytes(maxOutputBytes)
                .scratchBytes(scratchBytes).parallelism(parallelism).cacheSize(cacheSize);
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Builder with the documented defaults. */
    public static final class Builder {
        private Isolation isolation = Isolation.NAMESPACES;
        private String interpreter = "python3";
        private List<String> interpreterArgs = List.of();
        private Duration wallTime = Duration.ofSeconds(10);
        private Duration cpuTime = Duration.ofSeconds(10);
        private long memoryBytes = 1L << 30;
        private int maxProcesses = 64;
        private int maxOpenFiles = 64;
        private long maxFileBytes = 16L << 20;
        private long maxOutputBytes = 1L << 20;
        private long scratchBytes = 64L << 20;
        private int parallelism = Runtime.getRuntime().availableProcessors();
        private int cacheSize = 4096;

        public Builder isolation(Isolation v) { isolation = v; return this; }
        public Builder interpreter(String v) { interpreter = v; return this; }
        public Builder interpreterArgs(List<String> v) { interpreterArgs = v; return this; }
        public Builder wallTime(Duration v) { wallTime = v; return this; }
        public Builder cpuTime(Duration v) { cpuTime = v; return this; }
        public Builder memoryBytes(long v) { memoryBytes = v; return this; }
        public Builder maxProcesses(int v) { maxProcesses = v; return this; }
        public Builder maxOpenFiles(int v) { maxOpenFiles = v; return this; }
        public Builder maxFileBytes(long v) { maxFileBytes = v; return this; }
        public Builder maxOutputBytes(long v) { maxOutputBytes = v; return this; }
        public Builder scratchBytes(long v) { scratchBytes = v; return this; }
        public Builder parallelism(int v) { parallelism = v; return this; }
        public Builder cacheSize(int v) { cacheSize = v; return this; }

        public SandboxConfig build() {
            return new SandboxConfig(isolation, interpreter, interpreterArgs, wallTime, cpuTime, memoryBytes, maxProcesses,
                    maxOpenFiles, maxFileBytes, maxOutputBytes, scratchBytes, parallelism, cacheSize);
        }
    }
}
