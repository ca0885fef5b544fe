package comlrl.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The host programs the sandbox starts, resolved to absolute paths once: {@code setsid}, {@code unshare} and
 * {@code setpriv} (util-linux) and {@code /bin/sh}; {@code unshare} and {@code setpriv} only for
 * {@link Isolation#NAMESPACES}.
 */
record HostTools(String setsid, String unshare, String setpriv, String sh) {

    /** Finds the tools the isolation needs, or says which are missing and what to do. */
    static HostTools find(Isolation isolation) {
        List<String> missing = new ArrayList<>();
        String setsid = locate("setsid", missing);
        String sh = locate("sh", missing);
        String unshare = isolation == Isolation.NAMESPACES ? locate("unshare", missing) : null;
        String setpriv = isolation == Isolation.NAMESPACES ? locate("setpriv", missing) : null;
        if (!missing.isEmpty()) {
            throw new SandboxException("the sandbox (isolation " + isolation.key() + ") needs " + String.join(", ", missing)
                    + " from util-linux, not found on PATH (" + System.getenv("PATH") + "): install util-linux"
                    + (isolation == Isolation.NAMESPACES ? ", or choose isolation process explicitly (weaker: no network "
                    + "or file-system isolation)" : ""));
        }
        return new HostTools(setsid, unshare, setpriv, sh);
    }

    /**
     * The interpreter as the sandbox will run it: an absolute path as given, or a name found on the sandbox's
     * {@code PATH} (not the JVM's: a version manager's shims there are not what the sandbox sees).
     */
    static String interpreter(SandboxConfig config) {
        String name = config.interpreter();
        String childPath = Isolation.ENVIRONMENT.get("PATH");
        if (name.contains("/")) {
            if (Files.isExecutable(Path.of(name))) {
                return name;
            }
        } else {
            for (String dir : childPath.split(":")) {
                Path candidate = Path.of(dir, name);
                if (Files.isExecutable(candidate)) {
                    return candidate.toString();
                }
            }
        }
        throw new SandboxException("the sandbox's interpreter '" + name + "' was not found"
                + (name.contains("/") ? "" : " on the sandbox PATH (" + childPath + ")")
                + ": install Python 3 (e.g. apt-get install python3) or set the interpreter to the full path of a "
                + "Python 3.8+ (SandboxConfig.builder().interpreter(...), CLI --interpreter)");
    }

    /** Whether the JVM runs as uid 0 (read from /proc/self/status: the real uid). */
    static boolean runningAsRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    return line.split("\\s+")[1].equals("0");
                }
            }
        } catch (IOException e) {
            // not Linux: no namespaces either; the process mode does not need to know
        }
        return false;
    }

    private static String locate(String name, List<String> missing) {
        String path = System.getenv("PATH");
        List<String> dirs = new ArrayList<>(List.of((path == null ? "" : path).split(":")));
        dirs.addAll(List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin"));
        for (String dir : dirs) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
                return Path.of(dir, name).toString();
            }
        }
        missing.add(name);
        return null;
    }
}
