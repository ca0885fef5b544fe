package comlrl.reward;

import comlrl.sandbox.ExecutionResult;
import comlrl.sandbox.Job;
import comlrl.sandbox.Sandbox;
import comlrl.sandbox.SandboxConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sandbox of a code reward ({@link CodeReward}, {@link CoderTesterReward}): runs the programs of one
 * reward call at once on the sandbox's worker pool, counts them, and reads the {@code sandbox:} section of
 * a reward config.
 */
final class CodeRuns implements AutoCloseable {
    private final Sandbox sandbox;
    private final AtomicLong executions = new AtomicLong();
    private final AtomicLong sandboxNanos = new AtomicLong();

    CodeRuns(SandboxConfig config) {
        this.sandbox = Sandbox.create(Objects.requireNonNull(config, "sandboxConfig"));
    }

    /** The pass@k criterion: the program ran to its end and passed every one of its (at least one) tests. */
    static boolean solved(comlrl.sandbox.Status status, int passed, int total) {
        return status == comlrl.sandbox.Status.OK && total > 0 && passed == total;
    }

    /**
     * A sandbox config from a section {@code {isolation, timeout_s, memory_mb, parallelism}} of reward
     * {@code owner}: {@code isolation} ({@code namespaces}, the default, or the weaker {@code process}),
     * {@code timeout_s} (wall and CPU time of one program with all its tests; default 10), {@code memory_mb}
     * (default 1024) and {@code parallelism} (programs at once; default the number of cores).
     */
    static SandboxConfig config(String owner, Map<String, Object> box) {
        comlrl.utils.ConfigMaps.requireKnownKeys(owner + " sandbox", box,
                List.of("isolation", "timeout_s", "memory_mb", "parallelism"), Map.of());
        SandboxConfig.Builder b = SandboxConfig.builder();
        if (box.get("isolation") != null) {
            b.isolation(comlrl.sandbox.Isolation.fromKey(String.valueOf(box.get("isolation"))));
        }
        if (box.get("timeout_s") != null) {
            double seconds = comlrl.utils.ConfigMaps.toDouble(owner + " sandbox", "timeout_s", box.get("timeout_s"));
            if (!(seconds > 0)) {
                throw new IllegalArgumentException(owner + " sandbox timeout_s must be > 0, got " + seconds);
            }
            java.time.Duration limit = java.time.Duration.ofMillis(Math.round(seconds * 1000));
            b.wallTime(limit).cpuTime(limit);
        }
        if (box.get("memory_mb") != null) {
            b.memoryBytes((long) comlrl.utils.ConfigMaps.toInt(owner + " sandbox", "memory_mb", box.get("memory_mb")) << 20);
        }
        if (box.get("parallelism") != null) {
            b.parallelism(comlrl.utils.ConfigMaps.toInt(owner + " sandbox", "parallelism", box.get("parallelism")));
        }
        return b.build();
    }

    /** The mapping {@code map.get(key)} with string keys, {@code {}} when absent. */
    static Map<String, Object> section(String owner, Map<String, Object> map, String key) {
        Object value = map.get(key);
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException(owner + " " + key + " must be a mapping, got " + value);
        }
        return comlrl.utils.ConfigMaps.stringKeys(owner + " " + key, m);
    }

    /** The verdicts of {@code jobs} in order; a job the sandbox could not run at all gives null. */
    List<ExecutionResult> run(List<Job> jobs) {
        long start = System.nanoTime();
        List<ExecutionResult> results;
        try {
            results = sandbox.runAll(jobs);
        } catch (RuntimeException failed) {
            results = new ArrayList<>(jobs.size()); // find the job that failed; the others still count
            for (Job job : jobs) {
                ExecutionResult r;
                try {
                    r = sandbox.run(job.code(), job.tests());
                } catch (RuntimeException e) {
                    r = null;
                }
                results.add(r);
            }
        }
        executions.addAndGet(jobs.size());
        sandboxNanos.addAndGet(System.nanoTime() - start);
        return results;
    }

    /**
     * Programs run so far and the wall time spent waiting for them:
     * {@code {executions, sandbox_seconds, executions_per_second}} (cached verdicts count as executions).
     */
    Map<String, Double> stats() {
        Map<String, Double> stats = new LinkedHashMap<>();
        double seconds = sandboxNanos.get() / 1e9;
        stats.put("executions", (double) executions.get());
        stats.put("sandbox_seconds", seconds);
        stats.put("executions_per_second", seconds > 0 ? executions.get() / seconds : 0.0);
        return stats;
    }

    /** Stops the sandbox's workers, logging {@link #stats()} (level INFO) when programs ran. */
    @Override
    public void close() {
        sandbox.close();
        Map<String, Double> stats = stats();
        if (stats.get("executions") > 0) {
            System.getLogger(CodeReward.class.getName()).log(System.Logger.Level.INFO, String.format(java.util.Locale.ROOT,
                    "code reward: %.0f programs run in %.1f s waiting for the sandbox (%.1f per second)",
                    stats.get("executions"), stats.get("sandbox_seconds"), stats.get("executions_per_second")));
        }
    }
}
