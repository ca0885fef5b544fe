package comlrl.model.io;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Model directories as units: saving one atomically, and telling whether a directory overlaps a
 * model's directory.
 *
 * <p><b>Atomic saves</b> ({@link #replace}): the whole new directory is written into a temporary
 * sibling {@code .NAME.saving-PID-XXXX}; only when every file is complete is the old directory renamed
 * away ({@code .NAME.old-PID-XXXX}), the new one renamed into place, and the old one deleted. A failure
 * at any point (full disk, permissions) leaves the old directory whole and removes the temporary
 * one. Files of the old directory that the save does not write (notes, a training's other outputs)
 * are carried over (hard links), except stale weight files ({@code model.safetensors}, its index
 * and {@code model-*-of-*.safetensors} shards). Where the directory is not a plain model directory
 * (it has subfolders, or is the working directory or one above it), where no sibling can be made
 * or where the directory cannot be renamed (a read-only parent, a mount point), the new files are
 * instead staged in a temporary folder inside the directory and each renamed into place, old
 * weights deleted only after the new ones are in: a failure while writing still changes nothing.
 * (A process killed between the two renames leaves the previous model at {@code .NAME.old-PID-XXXX}.)
 * The temporary names carry the writer's process id, and the next save of {@code NAME} removes those
 * of dead processes, or renames a {@code .NAME.old-PID-XXXX} back when {@code NAME} is missing
 * ({@link StaleTemps}).
 *
 * <p><b>Files beside a model</b> ({@link #replaceFiles}): a set of files (a value head's) written
 * into a directory all or nothing, its other files untouched.
 */
public final class ModelDirs {
    /** Writes the files of a model directory into {@code dir}, a new empty directory. */
    @FunctionalInterface
    public interface Writer {
        void write(Path dir) throws IOException;
    }

    /** How a directory lies relative to a model directory. */
    public enum Overlap {
        /** Neither is inside the other. */
        NONE,
        /** They are the same directory (after resolving symlinks). */
        SAME,
        /** The directory is inside the model directory. */
        INSIDE,
        /** The directory contains the model directory. */
        CONTAINS
    }

    /** False makes {@link #replace} stage inside the directory, as where no sibling can be made (tests). */
    static volatile boolean siblings = true;

    private ModelDirs() {
    }

    // ------------------------------------------------------------------ overlap

    /** How {@code dir} lies relative to {@code modelDir}, symlinks resolved (neither need exist). */
    public static Overlap overlap(Path dir, Path modelDir) {
        Path a = canonical(dir);
        Path b = canonical(modelDir);
        if (a.equals(b)) {
            return Overlap.SAME;
        }
        if (a.startsWith(b)) {
            return Overlap.INSIDE;
        }
        if (b.startsWith(a)) {
            return Overlap.CONTAINS;
        }
        return Overlap.NONE;
    }

    /**
     * Fails when {@code outputDir} is {@code modelDir} or lies inside it, where writing a run's
     * outputs (its {@code config.json}, checkpoints, saved agents) would overwrite or delete the
     * model's own files.
     *
     * @param outputName how the user set the directory, for the message ({@code "output_dir"})
     * @param modelName which model, for the message ({@code "agent_model of agent 0"})
     * @throws IllegalArgumentException naming both directories and the fix
     */
    public static void requireNotInside(Path outputDir, String outputName, Path modelDir, String modelName) {
        Overlap o = overlap(outputDir, modelDir);
        if (o == Overlap.SAME || o == Overlap.INSIDE) {
            throw new IllegalArgumentException(outputName + " " + outputDir + (o == Overlap.SAME ? " is " : " is inside ")
                    + "the model directory " + modelDir + " (" + modelName + "): writing there would overwrite the "
                    + "model's config.json and weights. Choose an " + outputName + " outside " + modelDir + ".");
        }
    }

    /** {@link #requireNotInside(Path, String, Path, String)} with generic names. */
    public static void requireNotInside(Path outputDir, Path modelDir) {
        requireNotInside(outputDir, "output directory", modelDir, "a loaded model");
    }

    /** The absolute path with symlinks of its existing part resolved and {@code .}/{@code ..} removed. */
    static Path canonical(Path p) {
        Path abs = p.toAbsolutePath().normalize();
        Path existing = abs;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return abs;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(abs)).normalize();
        } catch (IOException e) {
            return abs;
        }
    }

    // ------------------------------------------------------------------ atomic replacement

    /**
     * Writes a model directory at {@code target} with {@code writer}, atomically as the class
     * describes: on success {@code target} holds exactly what {@code writer} wrote (plus carried-over
     * files that are not weights); on failure it is as before and no temporary directory remains.
     *
     * @throws UncheckedIOException naming {@code target} and the cause (full disk, permissions)
     */
    public static void replace(Path target, Writer writer) {
        Path dir = canonical(target);
        Path parent = dir.getParent();
        if (parent == null) {
            throw new IllegalArgumentException("Cannot save a model as the root directory " + dir);
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            String message = "Cannot save a model into " + target + ": it exists and is not a directory; remove it or "
                    + "choose another path";
            throw new UncheckedIOException(message, new IOException(message));
        }
        try {
            Files.createDirectories(parent);
        } catch (IOException e) {
            throw failure(target, e, false);
        }
        String name = dir.getFileName().toString();
        StaleTemps.cleanQuietly(parent, name);
        StaleTemps.cleanQuietly(dir, name);
        Path staging;
        boolean sibling = true;
        try {
            if (Files.isDirectory(dir) && (!siblings || !isFlat(dir) || canonical(Path.of("")).startsWith(dir))) {
                // not a plain model directory (subfolders, the working directory): never rename it away
                throw new java.nio.file.AccessDeniedException(parent.toString());
            }
            staging = createUnique(parent, StaleTemps.savingPrefix(name));
        } catch (IOException e) {
            if (!Files.isDirectory(dir)) {
                throw failure(target, e, false);
            }
            sibling = false;
            try {
                staging = createUnique(dir, StaleTemps.savingPrefix(name));
            } catch (IOException inner) {
                throw failure(target, inner, true);
            }
        }
        try {
            writer.write(staging);
            copyPermissions(dir, staging);
            if (sibling) {
                swapIn(dir, staging);
            } else {
                moveFilesIn(dir, staging);
            }
        } catch (IOException | UncheckedIOException e) {
            deleteRecursively(staging);
            throw failure(target, e, Files.isDirectory(dir));
        } finally {
            if (Files.exists(staging, LinkOption.NOFOLLOW_LINKS)) {
                deleteRecursively(staging);
            }
        }
    }

    /** The name {@link #replaceFiles} gives its temporary folder ({@code .files.saving-PID-XXXX}). */
    private static final String FILES = "files";

    /**
     * Writes a set of files into the directory {@code dir} (created if needed) all or nothing,
     * leaving its other files alone (a value head beside its backbone's model files): {@code writer}
     * writes them into a temporary folder {@code dir/.files.saving-PID-XXXX} (removed by the next call
     * once its process is gone, {@link StaleTemps}), and only when every one is
     * complete is each renamed over its namesake in {@code dir}. A failure while writing (full disk,
     * permissions) leaves every previous file whole and removes the temporary folder.
     *
     * @throws UncheckedIOException naming the file that failed, at its place in {@code dir}, and the cause
     */
    public static void replaceFiles(Path dir, Writer writer) {
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            String message = "Cannot write into " + dir + ": it exists and is not a directory; remove it or choose "
                    + "another path";
            throw new UncheckedIOException(message, new IOException(message));
        }
        Path staging = null;
        try {
            Files.createDirectories(dir);
            StaleTemps.cleanQuietly(dir, FILES);
            staging = createUnique(dir, StaleTemps.savingPrefix(FILES));
            writer.write(staging);
            List<Path> written = new ArrayList<>();
            try (var list = Files.list(staging)) {
                list.forEach(written::add);
            }
            for (Path p : written) {
                if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    throw new IOException("only plain files are written this way, got " + p.getFileName());
                }
            }
            for (Path p : written) {
                moveReplacing(p, dir.resolve(p.getFileName().toString()));
            }
        } catch (IOException | UncheckedIOException e) {
            IOException io = e instanceof UncheckedIOException u ? u.getCause() : (IOException) e;
            String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            if (staging != null) {
                reason = reason.replace(staging.toString(), dir.toString());
            }
            throw new UncheckedIOException("Cannot save into " + dir + ": " + reason + " (the files there before are "
                    + "unchanged)", io);
        } finally {
            if (staging != null) {
                deleteRecursively(staging);
            }
        }
    }

    /** Whether {@code dir} holds only files (and links), as a model directory does. */
    private static boolean isFlat(Path dir) {
        try (var list = Files.list(dir)) {
            return list.noneMatch(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS));
        } catch (IOException e) {
            return false;
        }
    }

    private static UncheckedIOException failure(Path target, Exception e, boolean existed) {
        IOException io = e instanceof UncheckedIOException u ? u.getCause() : (IOException) e;
        String reason = e.getMessage() == null ? e.getClass().getSimpleName()
                : e instanceof AccessDeniedException ? "permission denied: " + e.getMessage() : e.getMessage();
        return new UncheckedIOException("Cannot save the model to " + target + ": " + reason
                + (existed ? " (what was there before is unchanged)" : ""), io);
    }

    /** Renames {@code dir} away, {@code staging} in, deletes the old; falls back to per-file moves. */
    private static void swapIn(Path dir, Path staging) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            atomicMove(staging, dir);
            return;
        }
        carryOver(dir, staging);
        Path old = uniqueName(dir.getParent(), StaleTemps.oldPrefix(dir.getFileName().toString()));
        try {
            atomicMove(dir, old);
        } catch (IOException e) {
            moveFilesIn(dir, staging); // a mount point or a busy directory cannot be renamed
            return;
        }
        try {
            atomicMove(staging, dir);
        } catch (IOException e) {
            try {
                atomicMove(old, dir);
            } catch (IOException restore) {
                e.addSuppressed(restore);
                throw new IOException(e.getMessage() + "; the previous model was left at " + old, e);
            }
            throw e;
        }
        deleteRecursively(old);
    }

    /** Staged files renamed into {@code dir} one by one; stale weights deleted after. */
    private static void moveFilesIn(Path dir, Path staging) throws IOException {
        Set<String> written = new HashSet<>();
        try (var list = Files.list(staging)) {
            for (Path p : (Iterable<Path>) list::iterator) {
                written.add(p.getFileName().toString());
            }
        }
        // shards and other files first, the single file and the index (what loaders look for) last
        for (int pass = 0; pass < 2; pass++) {
            for (String name : written) {
                boolean entry = name.equals(Safetensors.SINGLE_FILE) || name.equals(Safetensors.INDEX_FILE);
                if (entry == (pass == 1)) {
                    Path to = dir.resolve(name);
                    if (Files.isDirectory(to, LinkOption.NOFOLLOW_LINKS)) {
                        deleteRecursively(to);
                    }
                    moveReplacing(staging.resolve(name), to);
                }
            }
        }
        try (var list = Files.list(dir)) {
            for (Path p : (Iterable<Path>) list::iterator) {
                String name = p.getFileName().toString();
                if (Safetensors.isWeightFile(name) && !written.contains(name)) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** Files of {@code dir} the new save did not write, except stale weights, linked (or copied) into staging. */
    private static void carryOver(Path dir, Path staging) throws IOException {
        try (var list = Files.list(dir)) {
            for (Path p : (Iterable<Path>) list::iterator) {
                String name = p.getFileName().toString();
                Path to = staging.resolve(name);
                if (Safetensors.isWeightFile(name) || Files.exists(to, LinkOption.NOFOLLOW_LINKS)
                        || StaleTemps.isTemp(name)) {
                    continue;
                }
                copyTree(p, to);
            }
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        if (Files.isSymbolicLink(from)) {
            Files.createSymbolicLink(to, Files.readSymbolicLink(from));
        } else if (Files.isDirectory(from)) {
            Files.createDirectory(to);
            try (var list = Files.list(from)) {
                for (Path p : (Iterable<Path>) list::iterator) {
                    copyTree(p, to.resolve(p.getFileName().toString()));
                }
            }
        } else {
            try {
                Files.createLink(to, from);
            } catch (IOException | UnsupportedOperationException e) {
                Files.copy(from, to, StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }

    private static void copyPermissions(Path from, Path to) {
        try {
            PosixFileAttributeView src = Files.getFileAttributeView(from, PosixFileAttributeView.class);
            PosixFileAttributeView dst = Files.getFileAttributeView(to, PosixFileAttributeView.class);
            if (src != null && dst != null && Files.isDirectory(from)) {
                dst.setPermissions(src.readAttributes().permissions());
            }
        } catch (IOException | UnsupportedOperationException e) {
            // the new directory keeps the default (umask) permissions
        }
    }

    private static void atomicMove(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
    }

    private static void moveReplacing(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** A new directory {@code parent/prefixXXXX} with default (umask) permissions. */
    private static Path createUnique(Path parent, String prefix) throws IOException {
        for (int attempt = 0; ; attempt++) {
            Path p = uniqueName(parent, prefix);
            try {
                return Files.createDirectory(p);
            } catch (FileAlreadyExistsException e) {
                if (attempt > 100) {
                    throw e;
                }
            }
        }
    }

    private static Path uniqueName(Path parent, String prefix) {
        long r = ThreadLocalRandom.current().nextLong() >>> 1;
        return parent.resolve(prefix + Long.toString(r, 36));
    }

    /** Deletes a tree without following symlinks; best effort. */
    public static void deleteRecursively(Path root) {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    try {
                        Files.deleteIfExists(d);
                    } catch (DirectoryNotEmptyException e) {
                        // something we could not delete remains; leave the folder
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            // leftovers of a temporary folder are harmless
        }
    }
}
