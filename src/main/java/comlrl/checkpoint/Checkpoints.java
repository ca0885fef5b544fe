package comlrl.checkpoint;

import com.fasterxml.jackson.databind.ObjectMapper;
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
 * beside the target, which is renamed into place only when complete; then the {@code latest}
 * file is replaced (write + atomic rename). A crash at any moment leaves the previous checkpoint
 * whole and {@code latest} pointing at a complete one.
 */
public final class Checkpoints {
    public static final String METADATA = "metadata.json";
    public static final String LATEST = "latest";
    private static final ObjectMapper JSON = new ObjectMapper();

    private Checkpoints() {
    }

    /** Writes checkpoint {@code name} under {@code root} with {@code writer} filling a fresh directory. */
    public static Path write(Path root, String name, Consumer<Path> writer) {
        Path target = root.resolve(name);
        Path tmp = root.resolve("." + name + ".tmp-" + ProcessHandle.current().pid());
        try {
            Files.createDirectories(root);
            deleteTree(tmp);
            Files.createDirectories(tmp);
            try {
                writer.accept(tmp);
            } catch (RuntimeException | Error e) {
                try {
                    deleteTree(tmp); // leave nothing half-written behind
                } catch (IOException cleanup) {
                    e.addSuppressed(cleanup);
                }
                throw e;
            }
            if (Files.exists(target)) {
                Path old = root.resolve("." + name + ".old-" + ProcessHandle.current().pid());
                deleteTree(old);
                Files.move(target, old, StandardCopyOption.ATOMIC_MOVE);
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
                deleteTree(old);
            } else {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            }
            Path latestTmp = root.resolve("." + LATEST + ".tmp-" + ProcessHandle.current().pid());
            Files.writeString(latestTmp, name + "\n");
            Files.move(latestTmp, root.resolve(LATEST), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write checkpoint " + target + ": " + e.getMessage(), e);
        }
    }

    /** The checkpoint {@code latest} names under {@code root}, if any. */
    public static java.util.Optional<Path> latest(Path root) {
        Path f = root.resolve(LATEST);
        if (!Files.isRegularFile(f)) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(root.resolve(Files.readString(f).trim()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
        if (!name.matches("checkpoint-\\d{1,18}")) {
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
