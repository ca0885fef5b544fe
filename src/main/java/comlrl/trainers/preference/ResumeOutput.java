package comlrl.trainers.preference;

import comlrl.trainers.common.MetricsLogger;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The output directory of a preference-learning run across a resume: when it already had files
 * before the trainer was built, a resumed run writes its outputs (metrics, reward model) into a
 * fresh {@code resume-<checkpoint name>} subdirectory (then {@code -2}, {@code -3}, … when taken),
 * leaving the earlier run's files as they were.
 */
final class ResumeOutput {
    private final boolean hadFiles;
    private Path dir;
    private boolean relocated;

    /** Looks at {@code dir} now: call before anything of this run is written there. */
    ResumeOutput(Path dir) {
        this.dir = dir;
        this.hadFiles = hasFiles(dir);
    }

    /** Where outputs go now (null without an output directory). */
    Path dir() {
        return dir;
    }

    /**
     * On resuming from {@code checkpoint}: moves the outputs (and {@code logger}'s metrics file) to the
     * subdirectory if needed. In a ddp run rank 0, which writes the run's files, decides, and every
     * process takes its output directory (in the agents split each saves its agents there).
     */
    void onResume(Path checkpoint, MetricsLogger logger, comlrl.trainers.common.RankWork work) {
        String chosen = work.onMain("choosing the resumed run's output directory", () -> {
            if (hadFiles && !relocated) {
                dir = subdirectory(dir, checkpoint);
                logger.relocate(dir);
                relocated = true;
            }
            return dir == null ? "" : dir.toString();
        }, comlrl.distributed.Codecs.STRING);
        if (!work.isMain() && !chosen.isEmpty()) {
            dir = Path.of(chosen);
        }
    }

    static Path subdirectory(Path dir, Path checkpoint) {
        String base = "resume-" + checkpoint.toAbsolutePath().normalize().getFileName();
        Path candidate = dir.resolve(base);
        for (int n = 2; Files.exists(candidate); n++) {
            candidate = dir.resolve(base + "-" + n);
        }
        try {
            Files.createDirectories(candidate);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create " + candidate + ": " + e.getMessage(), e);
        }
        return candidate;
    }

    private static boolean hasFiles(Path dir) {
        if (dir == null || !Files.isDirectory(dir)) {
            return false;
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.findAny().isPresent();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read the output directory " + dir + ": " + e.getMessage(), e);
        }
    }
}
