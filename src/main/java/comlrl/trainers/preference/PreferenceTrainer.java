package comlrl.trainers.preference;

import comlrl.data.TaskSet;
import comlrl.distributed.Codecs;
import comlrl.logging.MetricsLogger;
import comlrl.distributed.RankWork;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What every preference trainer has: its config and settings, the training set, the console, its
 * collector and logger, and the resume rule: when the output directory had files before the trainer
 * was built, a resumed run writes its outputs into a fresh {@code resume-<checkpoint name>}
 * subdirectory (then {@code -2}, {@code -3}, … when taken), leaving the earlier run's files as they were.
 *
 * @param <C> the trainer's config
 */
abstract class PreferenceTrainer<C extends PreferenceConfig> implements Trainer {
    final C args;
    final TrainerSettings settings;
    final TaskSet trainDataset;
    final PrintStream console;
    /** Whether the output directory had files when this trainer was built. */
    private final boolean hadFiles;
    private Path outputDir;
    private boolean relocated;

    /** Takes {@code b}'s {@code args} (failing naming {@code configName} when none was given) and settings. */
    PreferenceTrainer(PreferenceBuilder<C, ?> b, String configName) {
        this.args = b.requireArgs(configName);
        this.settings = b.settings();
        this.trainDataset = settings.get(TrainerSettings.TRAIN_DATASET);
        this.console = settings.console();
        this.outputDir = settings.get(TrainerSettings.OUTPUT_DIR);
        this.hadFiles = hasFiles(outputDir);
    }

    public C args() {
        return args;
    }

    public TrainerSettings settings() {
        return settings;
    }

    /** Where outputs go now: the output directory, or its {@code resume-*} subdirectory after a resume. */
    public Path outputDir() {
        return outputDir;
    }

    public List<Map<String, Double>> logHistory() {
        return logger().history();
    }

    abstract MetricsLogger logger();

    abstract PreferenceCollector collector();

    /**
     * The first step of {@link #resumeFrom} (idempotent): moves the outputs and the logger's metrics
     * file to the {@code resume-*} subdirectory if needed; in a ddp run rank 0 decides for every process.
     */
    void relocateOutput(Path checkpoint) {
        RankWork work = collector().work();
        String chosen = work.onMain("choosing the resumed run's output directory", () -> {
            if (hadFiles && !relocated) {
                Path sub = subdirectory(outputDir, checkpoint);
                logger().relocate(sub);
                outputDir = sub;
                relocated = true;
            }
            return outputDir == null ? "" : outputDir.toString();
        }, Codecs.STRING);
        if (!work.isMain() && !chosen.isEmpty()) {
            outputDir = Path.of(chosen);
        }
    }

    private static Path subdirectory(Path dir, Path checkpoint) {
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
