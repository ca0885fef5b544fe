package comlrl.distributed;

import comlrl.tensor.ProcessGroup;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Reader;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Starts one JVM per rank on this machine, as torchrun does: each runs the same main class with the
 * same arguments and JVM options, with {@code WORLD_SIZE}, {@code RANK}, {@code LOCAL_RANK},
 * {@code LOCAL_WORLD_SIZE}, {@code GROUP_RANK}, {@code MASTER_ADDR} and {@code MASTER_PORT} set
 * (so {@link DistributedContext#fromEnvironment()} finds its place). Each output line of a child
 * is copied to ours, prefixed with {@code [rank r] }.
 *
 * <p>When a child exits with a non-zero code (or dies), the others are stopped: asked to
 * ({@code SIGTERM}), then, after the grace period, killed, with their own child processes (a
 * stopped child, which could not act on the request, is killed at once); the launcher returns that
 * child's code. When the launcher's JVM exits (Ctrl-C included), a shutdown
 * hook stops the children the same way, and a child whose launcher died exits on its own
 * (it watches the process {@link #LAUNCHER_PID} names). The natives are extracted once, here, before the children start.
 */
public final class Launcher {
    /** Set in each child's environment: the launcher's process id: a child exits when that process does. */
    public static final String LAUNCHER_PID = "COMLRL_LAUNCHER_PID";

    /**
     * What to start.
     *
     * @param nprocPerNode processes on this machine, at least 1
     * @param nnodes machines in the run, at least 1
     * @param nodeRank this machine's index, 0 .. nnodes-1 (its ranks are nodeRank·nprocPerNode + 0 .. nprocPerNode-1)
     * @param masterAddr rank 0's host; null for 127.0.0.1 (one machine only)
     * @param masterPort the rendezvous port; 0 to pick a free one (one machine only)
     * @param gracePeriod how long a child may take to stop when asked before it is killed
     */
    public record Spec(int nprocPerNode, int nnodes, int nodeRank, String masterAddr, int masterPort, Duration gracePeriod) {
        public Spec {
            if (nprocPerNode < 1) {
                throw new IllegalArgumentException("--nproc-per-node must be at least 1, got " + nprocPerNode);
            }
            if (nnodes < 1) {
                throw new IllegalArgumentException("--nnodes must be at least 1, got " + nnodes);
            }
            if (nodeRank < 0 || nodeRank >= nnodes) {
                throw new IllegalArgumentException("--node-rank must be in [0, " + nnodes + "), got " + nodeRank);
            }
            if (masterPort < 0 || masterPort > 65535) {
                throw new IllegalArgumentException("--master-port must be in 1..65535, got " + masterPort);
            }
            if (nnodes > 1 && (masterAddr == null || masterPort == 0)) {
                throw new IllegalArgumentException("With --nnodes " + nnodes + ", give every machine the same --master-addr "
                        + "(the address of the machine with --node-rank 0) and --master-port");
            }
            if (gracePeriod == null || gracePeriod.isNegative()) {
                throw new IllegalArgumentException("The grace period must be zero or positive, got " + gracePeriod);
            }
        }

        /** {@code n} processes on this machine, rendezvous on a free local port, 5 s to stop. */
        public static Spec local(int n) {
            return new Spec(n, 1, 0, null, 0, Duration.ofSeconds(5));
        }

        public int worldSize() {
            return nprocPerNode * nnodes;
        }
    }

    private final List<String> javaCommand;
    private final PrintStream out;
    private final PrintStream err;
    private final Map<String, String> environment = new java.util.LinkedHashMap<>();

    /**
     * @param javaCommand the command line that starts a child up to its arguments (java, JVM
     *     options, class path, main class: {@link #javaCommand(String)})
     * @param out where the children's standard output goes, line by line
     * @param err where their standard error and the launcher's own messages go
     */
    public Launcher(List<String> javaCommand, PrintStream out, PrintStream err) {
        if (javaCommand.isEmpty()) {
            throw new IllegalArgumentException("javaCommand must name at least the java executable");
        }
        this.javaCommand = List.copyOf(javaCommand);
        this.out = out;
        this.err = err;
    }

    /**
     * Variables set in every child's environment besides torchrun's (e.g. {@code OMP_NUM_THREADS}:
     * BLAS and OpenMP threads are fixed when a process starts). Returns this.
     */
    public Launcher environment(Map<String, String> variables) {
        environment.putAll(variables);
        return this;
    }

    /**
     * This JVM's own command line for {@code mainClass}: its java executable, JVM options (less a
     * debugger agent, whose port the children would fight over) and class path.
     */
    public static List<String> javaCommand(String mainClass) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-agentlib:jdwp") && !arg.startsWith("-Xrunjdwp")) {
                cmd.add(arg);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        return cmd;
    }

    /** A TCP port free on this machine now (the children's rank 0 binds it a moment later). */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("Cannot find a free port: " + e.getMessage() + "; pass --master-port", e);
        }
    }

    /** One started child. */
    private record Child(int rank, Process process, Thread stdout, Thread stderr) {
    }

    /**
     * Runs {@code args} in {@code spec.nprocPerNode} children and waits for them: 0 when all exit
     * with 0, else the code of the first that did not (the others stopped).
     */
    public int run(Spec spec, List<String> args) throws InterruptedException {
        String addr = spec.masterAddr() != null ? spec.masterAddr() : "127.0.0.1";
        int port = spec.masterPort() != 0 ? spec.masterPort() : freePort();
        ProcessGroup.loadNatives(); // extracted once here, so that the children do not race to extract them
        List<Child> children = new ArrayList<>();
        BlockingQueue<Child> exited = new LinkedBlockingQueue<>();
        Thread hook = new Thread(() -> stop(children, spec.gracePeriod(), null), "comlrl-launch-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            List<String> started = new ArrayList<>();
            for (int local = 0; local < spec.nprocPerNode(); local++) {
                int rank = spec.nodeRank() * spec.nprocPerNode() + local;
                RankInfo info = new RankInfo(rank, spec.worldSize(), local, addr, port);
                Child child = start(info, spec, args);
                synchronized (children) {
                    children.add(child);
                }
                child.process().onExit().thenRun(() -> exited.add(child));
                started.add("rank " + rank + " (pid " + child.process().pid() + ")");
            }
            err.println("launch: started " + String.join(", ", started));
            int remaining = children.size();
            while (remaining > 0) {
                Child done = exited.take();
                remaining--;
                int code = done.process().exitValue();
                if (code != 0) {
                    err.println("launch: rank " + done.rank() + " " + describeExit(code) + "; stopping the other ranks");
                    stop(children, spec.gracePeriod(), err);
                    return code;
                }
            }
            return 0;
        } catch (IOException e) {
            err.println("launch: cannot start a child process: " + e.getMessage());
            stop(children, spec.gracePeriod(), err);
            return 1;
        } finally {
            stop(children, spec.gracePeriod(), err);
            for (Child c : children) {
                c.stdout().join(2000);
                c.stderr().join(2000);
            }
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is already shutting down: the hook runs anyway
            }
        }
    }

    private Child start(RankInfo info, Spec spec, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>(javaCommand);
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> env = pb.environment();
        env.putAll(environment);
        env.putAll(info.toEnvironment());
        env.put("LOCAL_WORLD_SIZE", Integer.toString(spec.nprocPerNode()));
        env.put("GROUP_RANK", Integer.toString(spec.nodeRank()));
        env.put(LAUNCHER_PID, Long.toString(ProcessHandle.current().pid()));
        pb.redirectInput(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        String prefix = "[rank " + info.rank() + "] ";
        Thread o = forward(p.getInputStream(), out, prefix, "comlrl-launch-out-" + info.rank());
        Thread e = forward(p.getErrorStream(), err, prefix, "comlrl-launch-err-" + info.rank());
        return new Child(info.rank(), p, o, e);
    }

    /**
     * Copies {@code in} to {@code to} with {@code prefix} at the start of every line (a line ends at
     * {@code \n}, or at {@code \r} for progress lines that rewrite themselves).
     */
    static Thread forward(InputStream in, PrintStream to, String prefix, String name) {
        Thread t = new Thread(() -> {
            try (Reader r = new InputStreamReader(in, StandardCharsets.UTF_8)) {
                StringBuilder line = new StringBuilder();
                boolean afterCr = false;
                int c;
                while ((c = r.read()) != -1) {
                    if (c == '\n' && afterCr && line.length() == 0) {
                        emit(to, "\n"); // the \n of a \r\n whose line went out at the \r
                    } else if (c == '\n' || c == '\r') {
                        emit(to, prefix + line + (char) c);
                        line.setLength(0);
                    } else {
                        line.append((char) c);
                    }
                    afterCr = c == '\r';
                }
                if (line.length() > 0) {
                    emit(to, prefix + line + "\n");
                }
            } catch (IOException e) {
                // the child is gone
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void emit(PrintStream to, String text) {
        synchronized (to) {
            to.print(text);
            to.flush();
        }
    }

    /**
     * Asks every live child (and its descendants) to stop, then kills what is left after
     * {@code grace}. A stopped process ({@code SIGSTOP}, a debugger) cannot act on the request until
     * it is continued, so it is killed at once, and said so on {@code report} (when not null).
     */
    private static void stop(List<Child> children, Duration grace, PrintStream report) {
        List<ProcessHandle> alive = new ArrayList<>();
        synchronized (children) {
            for (Child c : children) {
                ProcessHandle h = c.process().toHandle();
                h.descendants().forEach(alive::add); // before the child goes: orphans are re-parented away
                if (h.isAlive()) {
                    if (isStopped(h.pid()) && report != null) {
                        report.println("launch: rank " + c.rank() + " (pid " + h.pid() + ") is stopped (SIGSTOP or a "
                                + "debugger) and cannot stop by itself: killing it");
                    }
                    alive.add(h);
                }
            }
        }
        if (alive.isEmpty()) {
            return;
        }
        for (ProcessHandle h : alive) {
            if (isStopped(h.pid())) {
                h.destroyForcibly();
            } else {
                h.destroy();
            }
        }
        long deadline = System.nanoTime() + grace.toNanos();
        for (ProcessHandle h : alive) {
            long left = deadline - System.nanoTime();
            try {
                if (left > 0) {
                    h.onExit().get(left, TimeUnit.NANOSECONDS);
                }
            } catch (Exception e) {
                // still alive: killed below
            }
        }
        for (ProcessHandle h : alive) {
            if (h.isAlive()) {
                h.destroyForcibly();
            }
        }
        for (ProcessHandle h : alive) {
            try {
                h.onExit().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                // a process that survives SIGKILL this long is beyond our reach
            }
        }
    }

    /**
     * Whether process {@code pid} is stopped ({@code T}: a {@code SIGSTOP} or {@code SIGTSTP}; {@code t}:
     * a debugger holds it), as {@code /proc/PID/stat} says; false where there is no {@code /proc}.
     */
    static boolean isStopped(long pid) {
        try {
            String stat = java.nio.file.Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int afterName = stat.lastIndexOf(')'); // the command name may hold spaces and parentheses
            char state = afterName >= 0 && afterName + 2 < stat.length() ? stat.charAt(afterName + 2) : '?';
            return state == 'T' || state == 't';
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** "exited with code 3", or "was killed by signal 9 (exit code 137)". */
    static String describeExit(int code) {
        return code > 128 && code < 160 ? String.format(Locale.ROOT, "was killed by signal %d (exit code %d)", code - 128, code)
                : "exited with code " + code;
    }
}
