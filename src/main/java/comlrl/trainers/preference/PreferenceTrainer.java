package comlrl.trainers.preference;

import comlrl.data.TaskSet;
import comlrl.trainers.common.MetricsLogger;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerSettings;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What every preference trainer has (MADPO, MARLHF and the iterative trainers): its config, what its
 * builder was given besides (a centralized actor's, after the wrapper), the training set, the console,
 * and what an iterative trainer uses of its stage: the preference collector, the logger and the
 * output directory's resume rule.
 *
 * @param <C> the trainer's config
 */
abstract class PreferenceTrainer<C extends PreferenceConfig> implements Trainer {
    final C args;
    final TrainerSettings settings;
    final TaskSet trainDataset;
    final PrintStream console;

    /** Takes {@code b}'s {@code args} (failing naming {@code configName} when none was given) and settings. */
    PreferenceTrainer(PreferenceBuilder<C, ?> b, String configName) {
        this.args = b.requireArgs(configName);
        this.settings = b.settings();
        this.trainDataset = b.trainDataset();
        this.console = b.console();
    }

    public C args() {
        return args;
    }

    public TrainerSettings settings() {
        return settings;
    }

    /** Where outputs go now: the output directory, or its {@code resume-*} subdirectory after a resume. */
    public abstract Path outputDir();

    public List<Map<String, Double>> logHistory() {
        return logger().history();
    }

    /** The run's logger. */
    abstract MetricsLogger logger();

    /** The preference-set builder over the agents, their sampling and the task reward. */
    abstract PreferenceCollector collector();

    /** The first step of {@link #resumeFrom}: the output directory's resume rule (idempotent). */
    abstract void relocateOutput(Path checkpoint);
}
