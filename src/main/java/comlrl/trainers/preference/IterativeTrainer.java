package comlrl.trainers.preference;

import comlrl.data.TaskSet;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.reinforce.Centralization;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * The iterative trainers (reference §7.4: MADPOIter, MARLHFIter): {@code num_iterations} rounds of
 * preference collection against a comparator ({@link IterationRounds}), each followed by the
 * training of their stage; a subclass says what one iteration trains ({@link #runIteration}).
 *
 * @param <C> the trainer's config
 */
abstract class IterativeTrainer<C extends IterativePreferenceConfig> extends StagedTrainer {
    final C args;
    /** What the builder was given besides {@code args}. */
    final TrainerSettings settings;
    final IterationRounds rounds;
    final TaskSet trainDataset;
    final PrintStream console;

    /**
     * Checks {@code b}'s {@code args} and the training set and sets up the rounds (their checks run before any
     * model loads); the subclass then builds its stage, closing {@link #rounds} if that fails.
     */
    IterativeTrainer(PreferenceBuilder<C, ?> b, String configName) {
        this.args = b.requireArgs(configName);
        this.settings = b.settings();
        if (b.trainDataset() == null) {
            throw new IllegalArgumentException("train_dataset must be provided");
        }
        this.trainDataset = b.trainDataset();
        this.console = b.console();
        this.rounds = new IterationRounds(args, b.outputDir(), b.rewardFunc(), b.wandbConfig(),
                b.get(Centralization.ADAPTER));
    }

    public C args() {
        return args;
    }

    public TrainerSettings settings() {
        return settings;
    }

    /** Iterations completed (restored by a resume). */
    public abstract int iterationsDone();

    /** Where the replay shards are. */
    public Path replayDir() {
        return rounds.replayDir();
    }

    /**
     * Runs iterations {@code done+1 .. num_iterations}, writing {@code checkpoint-N} every
     * {@code checkpointInterval} iterations and after the last.
     */
    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        if (resumeFromCheckpoint != null) {
            resumeFrom(resumeFromCheckpoint);
        }
        logger().timeRun(() -> rounds.runIterations(iterationsDone(), checkpointDir, checkpointInterval, console, this,
                this::runIteration));
    }

    /** The run's logger (its stage's). */
    abstract comlrl.trainers.common.MetricsLogger logger();

    /** Iteration {@code iteration} (from 1): its pairs, the stage's training on them, its metrics. */
    abstract void runIteration(int iteration);

    /** Refuses a checkpoint extension: an iterative trainer is not run as another's stage. */
    static void refuseExtension(TrainerSettings settings, String algorithm) {
        settings.refuse(algorithm, "it is not run as another trainer's stage; its checkpoints hold its own rounds",
                TrainerSettings.CHECKPOINT_EXTENSION);
    }
}
