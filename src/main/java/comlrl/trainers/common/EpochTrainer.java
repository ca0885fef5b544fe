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

    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        progress().train(resumeFromCheckpoint, checkpointDir, checkpointInterval);
    }

    @Override
    public void trainUntil(int epochs, Path checkpointDir, int checkpointInterval) {
        progress().trainUntil(epochs, checkpointDir, checkpointInterval);
    }

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
     * The latest metric events logged, oldest first, each with its {@code env_step}: at most
     * {@code log_history_limit} of them; {@code metrics.jsonl} has every event.
     */
    public List<Map<String, Double>> logHistory() {
        return progress().logger().history();
    }
}
