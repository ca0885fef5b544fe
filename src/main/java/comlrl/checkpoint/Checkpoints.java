package comlrl.checkpoint;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.model.io.StaleTemps;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Training checkpoints written atomically: the content goes into a hidden temporary directory
 * beside the target ({@code .checkpoint-N.tmp-PID}), which is renamed into place only when complete
 * (an existing {@code checkpoint-N} is first renamed to {@code .checkpoint-N.old-PID}, deleted after);
 * then the {@code latest} file is replaced (write + atomic rename). A crash at any moment leaves the
 * previous checkpoint whole and {@code latest} pointing at a complete one. What a killed writer
 * leaves behind is removed, or renamed back, by {@link #cleanUp} (called by every {@link #write}
 * and by {@code train} on start).
 */
public final class Checkpoints {
    public static final String METADATA = "metadata.json";
    public static final String LATEST = "latest";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The name of a checkpoint directory: {@code checkpoint-N}. */
    private static final java.util.regex.Pattern CHECKPOINT_NAME = java.util.regex.Pattern.compile("checkpoint-\\d{1,18}");

    private Checkpoints() {
    }

    /**
     * Writes checkpoint {@code name} under {@code root} with {@code writer} filling a fresh directory.
     * On any failure the temporary files are removed and what was there before is as it was (a
     * previous {@code name} renamed away is renamed back).
     *
     * @throws UncheckedIOException naming the checkpoint when a write or rename fails
     */
    public static Path write(Path root, String name, Consumer<Path> writer) {
        Path target = root.resolve(name);
        Path tmp = root.resolve(StaleTemps.tmpName("." + name));
        Path latestTmp = root.resolve(StaleTemps.tmpName("." + LATEST));
        try {
            Files.createDirectories(root);
            cleanUp(root);
            deleteTree(tmp);
            Files.createDirectories(tmp);
            writer.accept(tmp);
            if (Files.exists(target)) {
                Path old = root.resolve(StaleTemps.oldName(name));
                deleteTree(old);
                Files.move(target, old, StandardCopyOption.ATOMIC_MOVE);
                try {
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException e) {
                    restore(old, target, e);
                    throw e;
                }
                deleteTree(old);
            } else {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            }
            Files.writeString(latestTmp, name + "\n");
            Files.move(latestTmp, root.resolve(LATEST), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            removeLeftovers(e, tmp, latestTmp);
            throw new UncheckedIOException("Cannot write checkpoint " + target + ": " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            removeLeftovers(e, tmp, latestTmp);
            throw e;
        }
    }

    /** Leaves nothing half-written behind after {@code failure}. */
    private static void removeLeftovers(Throwable failure, Path... leftovers) {
        for (Path leftover : leftovers) {
            try {
                deleteTree(leftover);
            } catch (IOException cleanup) {
                failure.addSuppressed(cleanup);
            }
        }
    }

    /** Renames the previous checkpoint {@code old} back to {@code target} after a failed replacement. */
    private static void restore(Path old, Path target, IOException failure) {
        try {
            Files.move(old, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * The checkpoint {@code latest} names under {@code root}, if any.
     *
     * @throws IllegalArgumentException naming the file when it holds anything but the name of a
     *     {@code checkpoint-N} directory in {@code root} (a path such as {@code ../x} or {@code /x},
     *     a name of another kind, or one whose directory is missing)
     */
    public static java.util.Optional<Path> latest(Path root) {
        Path f = root.resolve(LATEST);
        if (!Files.isRegularFile(f)) {
            return java.util.Optional.empty();
        }
        String name;
        try {
            name = Files.readString(f).trim();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + f + ": " + e.getMessage(), e);
        }
        String fix = "; write the name of one of its checkpoint-N directories into it, or resume from a checkpoint-N "
                + "directory directly";
        if (!CHECKPOINT_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(f + " must hold the name of a checkpoint-N directory in " + root
                    + ", but holds '" + name + "'" + fix);
        }
        Path checkpoint = root.resolve(name);
        if (!Files.isDirectory(checkpoint, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new IllegalArgumentException(f + " names " + name + ", but " + checkpoint + " is "
                    + (Files.exists(checkpoint, java.nio.file.LinkOption.NOFOLLOW_LINKS) ? "not a plain directory"
                    : "missing") + fix);
        }
        return java.util.Optional.of(checkpoint);
    }

    /**
     * Removes what writers killed mid-checkpoint left in {@code root} ({@code .checkpoint-N.tmp-PID},
     * {@code .latest.tmp-PID} of processes no longer alive), and renames a {@code .checkpoint-N.old-PID}
     * back to {@code checkpoint-N} when the writer died between its two renames, so that {@code latest}
     * names a whole checkpoint again. A missing {@code root} has nothing to clean.
     *
     * @return what was removed or restored
     */
    public static List<StaleTemps.Cleaned> cleanUp(Path root) {
        return StaleTemps.clean(root);
    }

    /**
     * The metadata of a checkpoint ({@code read_checkpoint_metadata}): algorithm, progress and the
     * saved logging-run identity under {@code "wandb"} (null when none).
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> readMetadata(Path checkpoint) {
        Path f = checkpoint.resolve(METADATA);
        if (!Files.isRegularFile(f)) {
            throw new IllegalArgumentException("Not a checkpoint: " + checkpoint + " has no " + METADATA
                    + " (checkpoints are the checkpoint-N directories written by train(checkpointDir, ...))");
        }
        Object parsed;
        try {
            parsed = JSON.readValue(f.toFile(), Object.class);
        } catch (IOException e) {
            throw new IllegalArgumentException("Malformed checkpoint metadata " + f + ": " + e.getMessage()
                    + "; resume from an intact checkpoint", e);
        }
        if (!(parsed instanceof Map<?, ?> map)) {
            throw new IllegalArgumentException("Malformed checkpoint metadata " + f + ": it must hold a JSON object, got "
                    + (parsed == null ? "null" : parsed.getClass().getSimpleName()) + "; resume from an intact checkpoint");
        }
        return (Map<String, Object>) map;
    }

    /**
     * Keeps the newest {@code keep} {@code checkpoint-N} directories under {@code root} (by N) and
     * deletes the others, as transformers' {@code save_total_limit} does; the one {@code latest}
     * names is always kept.
     *
     * @return the checkpoints deleted
     */
    public static List<Path> prune(Path root, int keep) {
        if (keep < 1) {
            throw new IllegalArgumentException("save_total_limit must be >= 1, got " + keep);
        }
        List<Path> all = new ArrayList<>();
        try (Stream<Path> s = Files.list(root)) {
            s.filter(p -> Files.isDirectory(p) && number(p) >= 0).forEach(all::add);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot list checkpoints in " + root + ": " + e.getMessage(), e);
        }
        all.sort(Comparator.comparingLong(Checkpoints::number));
        Path newest = latest(root).map(p -> p.toAbsolutePath().normalize()).orElse(null);
        List<Path> deleted = new ArrayList<>();
        for (int i = 0; i < all.size() - keep; i++) {
            Path old = all.get(i);
            if (old.toAbsolutePath().normalize().equals(newest)) {
                continue;
            }
            try {
                deleteTree(old);
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot delete old checkpoint " + old + ": " + e.getMessage(), e);
            }
            deleted.add(old);
        }
        return deleted;
    }

    /** N of a {@code checkpoint-N} directory, or −1. */
    private static long number(Path p) {
        String name = p.getFileName().toString();
        if (!CHECKPOINT_NAME.matcher(name).matches()) {
            return -1;
        }
        return Long.parseLong(name.substring("checkpoint-".length()));
    }

    /**
     * A non-negative integer field of checkpoint metadata, failing with the file and the field when
     * it is missing or of another type (a hand-edited or truncated metadata.json).
     */
    public static long requireCount(Map<String, Object> meta, String key, Path checkpoint) {
        Object v = meta.get(key);
        if (v instanceof Number n && (n instanceof Integer || n instanceof Long || n instanceof java.math.BigInteger)
                && n.longValue() >= 0) {
            return n.longValue();
        }
        throw new IllegalArgumentException("Malformed checkpoint metadata " + checkpoint.resolve(METADATA) + ": '" + key
                + "' must be a non-negative integer, got " + (v == null ? "nothing" : v + " (" + v.getClass().getSimpleName()
                + ")") + "; resume from an intact checkpoint");
    }

    /** A string field of checkpoint metadata, failing like {@link #requireCount}. */
    public static String requireString(Map<String, Object> meta, String key, Path checkpoint) {
        Object v = meta.get(key);
        if (v instanceof String str) {
            return str;
        }
        throw new IllegalArgumentException("Malformed checkpoint metadata " + checkpoint.resolve(METADATA) + ": '" + key
                + "' must be a string, got " + v + "; resume from an intact checkpoint");
    }

    /**
     * Writes {@code file} by {@code writer} filling a hidden temporary file beside it, renamed into place: a
     * reader sees the old file or the new one, never a part (replay shards, reward histograms).
     */
    public static void writeAtomically(Path file, Consumer<Path> writer) {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp-" + ProcessHandle.current().pid());
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            writer.accept(tmp);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException cleanup) {
                e.addSuppressed(cleanup);
            }
            // named after the file, not its hidden temporary (a full disk fails the run with this message)
            IOException io = e instanceof IOException x ? x : e instanceof UncheckedIOException u ? u.getCause() : null;
            throw io != null ? new UncheckedIOException("Cannot write " + file + ": " + io.getMessage(), io)
                    : (RuntimeException) e;
        }
    }

    /**
     * Writes {@code value} as pretty-printed JSON to {@code file}, every registered secret replaced
     * by {@code ***} ({@link comlrl.net.Secrets}): run configs, replay shards, checkpoint metadata.
     */
    public static void writeJson(Path file, Object value) {
        try {
            String json = JSON.writerWithDefaultPrettyPrinter().writeValueAsString(value);
            Files.writeString(file, comlrl.net.Secrets.scrub(json) + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Makes {@code to} a copy of the directory tree {@code from}, removing what was at {@code to}
     * first. Files are copied, not linked: a checkpoint never changes when its source is rewritten.
     */
    public static void copyTree(Path from, Path to) {
        try {
            deleteTree(to);
            try (Stream<Path> s = Files.walk(from)) {
                for (Path p : (Iterable<Path>) s::iterator) {
                    Path target = to.resolve(from.relativize(p).toString());
                    if (Files.isDirectory(p)) {
                        Files.createDirectories(target);
                    } else {
                        Files.copy(p, target);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot copy " + from + " to " + to + ": " + e.getMessage(), e);
        }
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(x);
            }
        }
    }
}
