package comlrl.sandbox;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs model-written programs and their assert tests, isolated as {@link SandboxConfig#isolation()} says.
 * {@link #create} checks once that the sandbox works here (tools, namespaces, interpreter) and fails with a
 * message that says how to fix it; {@link #run} executes one program on the calling thread;
 * {@link #runAll} executes many on a pool of {@link SandboxConfig#parallelism()} workers. Verdicts of
 * identical (code, tests) pairs are cached (least recently used dropped first), keyed by a SHA-256 of the pair.
 *
 * <pre>{@code
 * try (Sandbox sandbox = Sandbox.create(SandboxConfig.builder().wallTime(Duration.ofSeconds(5)).build())) {
 *     ExecutionResult r = sandbox.run("def add(a, b):\n    return a + b\n", "assert add(1, 2) == 3\n");
 *     // r.status() == Status.OK, r.testsPassed() == 1, r.testsTotal() == 1
 * }
 * }</pre>
 */
public final class Sandbox implements AutoCloseable {
    private final SandboxConfig config;
    private final Execution execution;
    private final ExecutorService workers;
    private final ExecutorService io;
    private final Map<String, ExecutionResult> cache;

    private Sandbox(SandboxConfig config) {
        this.config = config;
        HostTools tools = HostTools.find(config.isolation());
        String interpreter = HostTools.interpreter(config);
        this.workers = Executors.newFixedThreadPool(config.parallelism(), daemons("comlrl-sandbox-worker"));
        this.io = Executors.newCachedThreadPool(daemons("comlrl-sandbox-io"));
        this.execution = new Execution(config, tools, interpreter, io);
        this.cache = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, ExecutionResult> eldest) {
                return size() > config.cacheSize();
            }
        };
    }

    /**
     * A sandbox for this config, after a start-up check: a trivial program with one passing assert must come
     * back {@code ok, 1 of 1}. Throws {@link SandboxException} naming what is missing and how to fix it.
     */
    public static Sandbox create(SandboxConfig config) {
        Sandbox sandbox = new Sandbox(config);
        try {
            ExecutionResult probe = sandbox.execution.run(new Job("import sys\nassert sys.version_info >= (3, 8)\n",
                    "assert True\n"));
            if (probe.status() != Status.OK || probe.testsPassed() != 1) {
                throw new SandboxException("the sandbox start-up check failed (isolation " + config.isolation().key()
                        + ", interpreter " + config.interpreter() + "): " + probe.status().key() + ": " + probe.message()
                        + (probe.stderr().isBlank() ? "" : "; stderr: " + probe.stderr().strip()) + hint(config));
            }
        } catch (SandboxException e) {
            sandbox.close();
            throw e.getMessage().startsWith("the sandbox start-up") ? e
                    : new SandboxException(e.getMessage() + hint(config));
        } catch (RuntimeException e) {
            sandbox.close();
            throw e;
        }
        return sandbox;
    }

    public SandboxConfig config() {
        return config;
    }

    /** Runs one program and its tests on the calling thread (or answers from the cache). */
    public ExecutionResult run(String code, String tests) {
        Job job = new Job(code, tests);
        String key = key(job);
        ExecutionResult cached = cached(key);
        if (cached != null) {
            return cached;
        }
        return remember(key, execution.run(job));
    }

    /**
     * Runs many programs on the worker pool and returns their verdicts in the order of {@code jobs}; identical
     * jobs (and jobs whose verdict is cached) run once.
     */
    public List<ExecutionResult> runAll(List<Job> jobs) {
        Map<String, Future<ExecutionResult>> pending = new HashMap<>();
        List<String> keys = new ArrayList<>(jobs.size());
        for (Job job : jobs) {
            String key = key(job);
            keys.add(key);
            if (!pending.containsKey(key)) {
                ExecutionResult cached = cached(key);
                pending.put(key, cached != null ? java.util.concurrent.CompletableFuture.completedFuture(cached)
                        : workers.submit(() -> remember(key, execution.run(job))));
            }
        }
        List<ExecutionResult> results = new ArrayList<>(jobs.size());
        for (String key : keys) {
            results.add(await(pending.get(key)));
        }
        return results;
    }

    /** Stops the worker pool (runs in progress finish). */
    @Override
    public void close() {
        workers.shutdown();
        io.shutdown();
    }

    private static ExecutionResult await(Future<ExecutionResult> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for sandboxed programs", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    private ExecutionResult cached(String key) {
        synchronized (cache) {
            return cache.get(key);
        }
    }

    private ExecutionResult remember(String key, ExecutionResult result) {
        if (config.cacheSize() > 0) {
            synchronized (cache) {
                cache.put(key, result);
            }
        }
        return result;
    }

    /** SHA-256 of the pair, each part length-prefixed (so ("ab", "c") and ("a", "bc") differ). */
    static String key(Job job) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (String part : List.of(job.code(), job.tests())) {
                byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
                sha.update((bytes.length + ":").getBytes(StandardCharsets.US_ASCII));
                sha.update(bytes);
            }
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String hint(SandboxConfig config) {
        if (config.isolation() != Isolation.NAMESPACES) {
            return "";
        }
        return ". The namespaces isolation needs unprivileged user namespaces (check: unshare --user --map-root-user "
                + "--net --mount --pid --fork true; on Ubuntu 24.04 sysctl kernel.apparmor_restrict_unprivileged_userns=0, "
                + "elsewhere kernel.unprivileged_userns_clone=1 or user.max_user_namespaces > 0)"
                + (HostTools.runningAsRoot() ? "; as root the sandbox runs as uid " + Isolation.NOBODY
                + ", which must be able to read and run the interpreter" : "")
                + ". Where that is impossible, choose isolation process explicitly (weaker: no network or file-system "
                + "isolation)";
    }

    private static ThreadFactory daemons(String name) {
        AtomicInteger count = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
