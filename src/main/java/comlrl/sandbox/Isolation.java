package comlrl.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How one execution is isolated from the machine. Both modes run the interpreter in its own session and
 * process group ({@code setsid}), under the limits of {@link SandboxConfig}, with only {@code PATH},
 * {@code HOME} (the working directory) and {@code LANG} in its environment, behind a shell that is its parent
 * (so killing its parent does not reach the JVM).
 */
public enum Isolation {
    /**
     * New user, mount, PID, IPC and network namespaces ({@code unshare} from util-linux): no network interface
     * but a loopback that is down; every mount read-only; a private size-limited {@code /tmp} (holding the
     * working directory) and {@code /dev/shm}; a fresh {@code /proc} showing only the run's processes; no
     * capabilities. The shell is PID 1 of the namespace: when it ends, or when the run is killed, the kernel
     * kills every process left in it. A JVM running as root runs the sandbox as uid 65534 (nobody), so that
     * the process limit applies (the kernel does not count root's processes) and files only root may read
     * stay closed.
     */
    NAMESPACES {
        @Override
        List<String> command(HostTools tools, SandboxConfig config, List<String> interpreterCommand) {
            List<String> command = new ArrayList<>(List.of(tools.setsid()));
            if (HostTools.runningAsRoot()) {
                command.addAll(List.of(tools.setpriv(), "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups"));
            }
            command.addAll(List.of(tools.unshare(), "--user", "--map-root-user", "--net", "--mount", "--pid", "--ipc",
                    "--fork", "--kill-child", "--mount-proc", tools.sh(), "-c", SETUP_SCRIPT, "comlrl-sandbox",
                    Long.toString(config.scratchBytes()), tools.setpriv(), MOUNTS_SCRIPT));
            command.addAll(interpreterCommand);
            return command;
        }

        @Override
        String workdir(Path hostWorkdir) {
            return "/tmp/sandbox";
        }

        @Override
        boolean needsHostWorkdir() {
            return false;
        }
    },
    /**
     * The weaker mode, for machines without user namespaces, chosen explicitly: a separate process in its own
     * process group (killed as a group after each run), a fresh temporary working directory removed
     * afterwards, the limits and the minimal environment. It has NO network isolation and NO file-system
     * isolation (the program can read and write what the JVM's user can), a program that starts its own
     * session escapes the group kill, and the process limit counts all processes of the user (none for root).
     */
    PROCESS {
        @Override
        List<String> command(HostTools tools, SandboxConfig config, List<String> interpreterCommand) {
            List<String> command = new ArrayList<>(List.of(tools.setsid(), tools.sh(), "-c", "unset PWD OLDPWD; \"$@\"; exit $?",
                    "comlrl-sandbox"));
            command.addAll(interpreterCommand);
            return command;
        }

        @Override
        String workdir(Path hostWorkdir) {
            return hostWorkdir.toString();
        }

        @Override
        boolean needsHostWorkdir() {
            return true;
        }
    };

    /** The uid the namespaces mode runs as when the JVM is root. */
    static final int NOBODY = 65534;

    /** The only variables the program sees, besides {@code HOME}. */
    static final Map<String, String> ENVIRONMENT = Map.of("PATH", "/usr/local/bin:/usr/bin:/bin", "LANG", "C.UTF-8");

    private static final String SETUP_SCRIPT = resource("setup.sh");
    private static final String MOUNTS_SCRIPT = resource("mounts.py");

    /** The command line that starts the interpreter command (interpreter, its args, the harness) isolated. */
    abstract List<String> command(HostTools tools, SandboxConfig config, List<String> interpreterCommand);

    /** The program's working directory (and {@code HOME}) as the program sees it. */
    abstract String workdir(Path hostWorkdir);

    /** Whether each run needs a temporary directory on the host (removed afterwards). */
    abstract boolean needsHostWorkdir();

    /** The config name: {@code namespaces} or {@code process}. */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The mode of a config name ({@link #key()}). */
    public static Isolation fromKey(String key) {
        for (Isolation i : values()) {
            if (i.key().equalsIgnoreCase(key.trim())) {
                return i;
            }
        }
        throw new IllegalArgumentException("unknown sandbox isolation '" + key + "': use namespaces (the default) or "
                + "process (weaker: no network or file-system isolation)");
    }

    static String resource(String name) {
        try (InputStream in = Isolation.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource comlrl/sandbox/" + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Removes a run's directory, whatever the program did to its permissions. */
    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                    Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwx------"));
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    Files.delete(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the sandbox directory " + dir, e);
        }
    }
}
