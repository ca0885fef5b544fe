package comlrl.model.io;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The temporary files and directories the project's writers leave beside what they write, named
 * after the writing process so that a later run can tell those of a process that was killed
 * ({@code kill -9}, a lost node) from those of one still writing:
 * <ul>
 *   <li>{@code NAME.tmp-PID} (a file or directory being written: checkpoints and their
 *       {@code latest} pointer, built-in models, replay shards, {@code report.html});</li>
 *   <li>{@code .NAME.saving-PID-R} (a model directory being saved, {@link ModelDirs#replace}; beside it, or
 *       inside it where it cannot be renamed);</li>
 *   <li>{@code .NAME.old-PID} and {@code .NAME.old-PID-R} (the previous {@code NAME}, renamed away
 *       for the moment between two renames).</li>
 * </ul>
 * {@link #clean} removes those whose process is gone ({@link ProcessHandle#of} finds no live
 * process with that id on this machine); a {@code .NAME.old-*} whose {@code NAME} is missing (the
 * writer died between its two renames) is renamed back to {@code NAME} instead, so the previous
 * checkpoint or model is whole again. A process id alive on this machine keeps its entries, so two
 * runs of one machine never remove each other's work; runs of several machines writing the same
 * directory (a shared file system) should not rely on it.
 */
public final class StaleTemps {
    /** {@code NAME.tmp-PID}. */
    private static final Pattern TMP = Pattern.compile("(.+)\\.tmp-(\\d{1,18})");
    /** {@code .NAME.saving-PID-R}. */
    private static final Pattern SAVING = Pattern.compile("\\.(.+)\\.saving-(\\d{1,18})-[0-9a-z]+");
    /** {@code .NAME.old-PID} or {@code .NAME.old-PID-R}. */
    private static final Pattern OLD = Pattern.compile("\\.(.+)\\.old-(\\d{1,18})(-[0-9a-z]+)?");

    private StaleTemps() {
    }

    /** {@code NAME.tmp-PID} for this process: the name a writer gives what it is writing. */
    public static String tmpName(String name) {
        return name + ".tmp-" + ProcessHandle.current().pid();
    }

    /** {@code .NAME.old-PID} for this process: the name of the previous {@code NAME} while it is replaced. */
    public static String oldName(String name) {
        return "." + name + ".old-" + ProcessHandle.current().pid();
    }

    /** {@code .NAME.saving-PID-} for this process: the prefix of a model directory being saved. */
    static String savingPrefix(String name) {
        return "." + name + ".saving-" + ProcessHandle.current().pid() + "-";
    }

    /** {@code .NAME.old-PID-} for this process: the prefix of {@link #oldName} with a random suffix. */
    static String oldPrefix(String name) {
        return oldName(name) + "-";
    }

    /** Whether {@code fileName} is one of the temporary names above, of any process. */
    public static boolean isTemp(String fileName) {
        return TMP.matcher(fileName).matches() || SAVING.matcher(fileName).matches() || OLD.matcher(fileName).matches();
    }

    /** What {@link #clean} did to one entry. */
    public record Cleaned(Path path, boolean restored) {
        @Override
        public String toString() {
            return restored ? path + " (restored)" : path.toString();
        }
    }

    /**
     * Removes the leftovers of dead processes among the entries of {@code dir} (not below them; a
     * missing directory has none), and renames back a previous {@code NAME} whose replacement never
     * arrived.
     *
     * @return what was removed or restored, in name order
     * @throws UncheckedIOException naming the entry when one cannot be removed or restored
     */
    public static List<Cleaned> clean(Path dir) {
        return clean(dir, null);
    }

    /**
     * As {@link #clean(Path)}, for the leftovers of writers of {@code name} only ({@code name.tmp-PID},
     * {@code .name.saving-PID-R}, {@code .name.old-PID[-R]}), or of any name when null.
     */
    public static List<Cleaned> clean(Path dir, String name) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Path> entries;
        try (Stream<Path> list = Files.list(dir)) {
            entries = list.sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot list " + dir + " for leftovers of interrupted runs: " + e.getMessage(), e);
        }
        List<Cleaned> done = new ArrayList<>();
        for (Path entry : entries) {
            String entryName = entry.getFileName().toString();
            Matcher old = OLD.matcher(entryName);
            Matcher tmp = TMP.matcher(entryName);
            Matcher saving = SAVING.matcher(entryName);
            boolean ofName = name == null || (old.matches() && old.group(1).equals(name))
                    || (tmp.matches() && tmp.group(1).equals(name))
                    || (saving.matches() && saving.group(1).equals(name));
            try {
                if (!ofName) {
                    continue;
                }
                if (old.matches() && isDead(old.group(2))) {
                    Path previous = dir.resolve(old.group(1));
                    if (Files.exists(previous, LinkOption.NOFOLLOW_LINKS)) {
                        ModelDirs.deleteRecursively(entry);
                        requireGone(entry);
                        done.add(new Cleaned(entry, false));
                    } else {
                        Files.move(entry, previous, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                        done.add(new Cleaned(previous, true));
                    }
                } else if ((tmp.matches() && isDead(tmp.group(2))) || (saving.matches() && isDead(saving.group(2)))) {
                    ModelDirs.deleteRecursively(entry);
                    requireGone(entry);
                    done.add(new Cleaned(entry, false));
                }
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot clean up " + entry + ", left by an interrupted run: "
                        + e.getMessage() + "; remove it by hand", e);
            }
        }
        return done;
    }

    /**
     * {@link #clean(Path, String)} where a leftover that stays is harmless (a read-only cache, a
     * permission problem the write that follows reports itself): failures are ignored.
     */
    public static void cleanQuietly(Path dir, String name) {
        try {
            clean(dir, name);
        } catch (UncheckedIOException e) {
            // never read by anyone: what follows goes on beside it
        }
    }

    private static void requireGone(Path entry) throws IOException {
        if (Files.exists(entry, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("it could not be deleted (permissions?)");
        }
    }

    /** Whether no live process on this machine has id {@code pid}. */
    private static boolean isDead(String pid) {
        long id = Long.parseLong(pid);
        return ProcessHandle.of(id).map(p -> !p.isAlive()).orElse(true);
    }
}
