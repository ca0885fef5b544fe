package comlrl.trainers.common;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A trainer whose outer loop, progress and checkpoint are an {@link EpochProgress} (the MAGRPO family,
 * IAC and MAAC): the {@link Trainer} entry points that only hand over to it are written here once;
 * the trainer itself keeps its algorithm (one item's rollouts and updates, its evaluation).
 */
public abstract class EpochTrainer implements Trainer {
    /** The trainer's epoch loop, made by its constructor. */
    protected abstract EpochProgress progress();

    /**
     * Trains, optionally resuming from {@code resumeFromCheckpoint} (a {@code checkpoint-N} directory,
     * see {@link #resumeFrom(Path)}); {@code num_train_epochs} counts the whole run, including completed
     * epochs. Checkpoints beyond {@code save_total_limit} are deleted oldest first; a resumed run
     * continues exactly as the uninterrupted one.
     */
    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        progress().train(resumeFromCheckpoint, checkpointDir, checkpointInterval);
    }

    /**
     * Trains epochs {@code done+1 .. epochs} (a trainer that runs this one in stages, such as an
     * iterative one, passes its own total), with checkpoints as {@link #train(Path, int, Path)}.
     */
    @Override
    public void trainUntil(int epochs, Path checkpointDir, int checkpointInterval) {
        progress().trainUntil(epochs, checkpointDir, checkpointInterval);
    }

    /**
     * Restores a {@code checkpoint-N} directory written by this kind of trainer: weights, optimizer
     * states, progress, seeds, the log gate and stateful parts ({@link TrainerCheckpoint#restore}); cuts
     * {@code metrics.jsonl} back to the events logged before the checkpoint (a run stopped later logged
     * more, which the resumed run repeats). Called by {@link #train(Path, int, Path)}; call it first to
     * evaluate the restored weights before training on. Fails, before changing anything, on a checkpoint
     * of another algorithm, agent count or model shape.
     */
    @Override
    public void resumeFrom(Path checkpoint) {
        progress().resume(checkpoint);
    }

    @Override
    public Path saveCheckpoint(Path root) {
        return progress().save(root);
    }

    @Override
    public long envStep() {
        return progress().envStep();
    }

    /**
     * The latest metric events logged (training and evaluation), oldest first, each with its
     * {@code env_step}: at most {@code log_history_limit} of them, so memory stays flat on long runs;
     * {@code metrics.jsonl} has every event ({@link MetricsLogger#history()}).
     */
    public List<Map<String, Double>> logHistory() {
        return progress().logger().history();
    }
}
