package comlrl.utils;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Ties the children of {@link JsonLinesProcess} to this JVM, so that a child that ignores the end
 * of its input cannot outlive the trainer, however the JVM ends.
 *
 * <ul>
 *   <li><b>Normal exit, SIGTERM, SIGINT, SIGHUP</b> (shutdown hooks run): one JVM shutdown hook
 *       kills every live child and its descendants ({@link #register}).</li>
 *   <li><b>SIGKILL, a JVM crash</b> (no hook runs): each child gets a <i>guard</i>, a small
 *       {@code /bin/sh} process started beside it (not around it: the child's stdin, stdout, stderr,
 *       pid and exit code stay exactly its own). The guard blocks reading a pipe whose only writer
 *       is this JVM and which the JVM never writes to. The kernel closes that pipe when the JVM
 *       dies, whatever kills it; the guard then reads end-of-file and kills the child and its
 *       descendants ({@code ps -A -o pid= -o ppid=} lists them; where {@code ps} is missing, the
 *       child alone) with SIGKILL. A guard detects the death at once, without polling and without
 *       the child's cooperation. When the child ends normally, the JVM kills the guard with
 *       SIGKILL first, so a guard never acts on a pid that may have been reused.</li>
 * </ul>
 *
 * Where {@code /bin/sh} cannot be started (not Linux or macOS), children have no guard and only the
 * shutdown hook applies. A JVM killed in the instant between starting a child and starting its
 * guard can leave that child behind.
 */
final class ChildProcesses {
    /**
     * The guard, run as {@code /bin/sh -c GUARD comlrl-guard PID}: wait for end-of-file on stdin,
     * then SIGKILL PID's descendants and PID. Terminal signals are ignored (the JVM's hook, or the
     * end-of-file, takes care of the child); the JVM stops a guard with SIGKILL.
     */
    static final String GUARD_SCRIPT = String.join("\n",
            "trap '' INT HUP",
            "while IFS= read -r _; do :; done",
            "pid=$1",
            "kill -0 \"$pid\" 2>/dev/null || exit 0",
            "tree=$(ps -A -o pid= -o ppid= 2>/dev/null | awk -v root=\"$pid\" '",
            "  { parent[$1] = $2; pids[NR] = $1 }",
            "  END {",
            "    want[root] = 1; changed = 1",
            "    while (changed) {",
            "      changed = 0",
            "      for (i = 1; i <= NR; i++) {",
            "        p = pids[i]",
            "        if (!(p in want) && (parent[p] in want)) { want[p] = 1; changed = 1 }",
            "      }",
            "    }",
            "    for (p in want) if (p != root) print p",
            "  }')",
            "kill -KILL $tree \"$pid\" 2>/dev/null",
            "exit 0");

    private static final Set<Child> LIVE = ConcurrentHashMap.newKeySet();

    private ChildProcesses() {}

    /** A started child and its guard (null when it has none). */
    record Child(Process process, Process guard) {
        /** SIGKILLs the guard (first, so it cannot act) and then the child's descendants and the child. */
        void killAll() {
            releaseGuard();
            // children first: once the parent dies they are no longer its descendants
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }

        /** SIGKILLs the guard, which then does nothing, and closes the JVM's end of its pipe. */
        void releaseGuard() {
            if (guard == null) {
                return;
            }
            guard.destroyForcibly();
            try {
                guard.getOutputStream().close();
            } catch (IOException ignored) {
                // the guard is gone either way
            }
        }
    }

    /**
     * Ties {@code process} to this JVM: starts its guard (when {@code withGuard} and {@code /bin/sh}
     * can be started) and registers both with the shutdown hook until {@link #unregister}.
     */
    static Child register(Process process, boolean withGuard) {
        Child child = new Child(process, withGuard ? startGuard(process.pid()) : null);
        HookHolder.ensureInstalled();
        LIVE.add(child);
        // a child that ends on its own releases its guard at once (also when it died before this line)
        process.onExit().thenRun(() -> unregister(child));
        return child;
    }

    /** Forgets {@code child} and stops its guard; idempotent (also run when the child exits). */
    static void unregister(Child child) {
        if (child != null) {
            LIVE.remove(child);
            child.releaseGuard();
        }
    }

    private static Process startGuard(long pid) {
        try {
            return new ProcessBuilder("/bin/sh", "-c", GUARD_SCRIPT, "comlrl-guard", Long.toString(pid))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException | UnsupportedOperationException e) {
            return null;  // no POSIX shell: the shutdown hook still applies
        }
    }

    private static void killAllLive() {
        for (Child child : LIVE) {
            try {
                child.killAll();
            } catch (RuntimeException ignored) {
                // best effort during shutdown
            }
        }
    }

    /** Installs the shutdown hook on first use (a JVM that never starts a child gets none). */
    private static final class HookHolder {
        static {
            try {
                Runtime.getRuntime().addShutdownHook(new Thread(ChildProcesses::killAllLive, "comlrl-child-reaper"));
            } catch (IllegalStateException alreadyShuttingDown) {
                // the JVM is exiting; the guard (if any) still ends the child
            }
        }

        static void ensureInstalled() {
            // loading this class installs the hook
        }
    }
}
