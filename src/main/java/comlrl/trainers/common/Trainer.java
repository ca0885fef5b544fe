package comlrl.trainers.common;

import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** What every trainer offers, whatever its algorithm: train, evaluate, resume, save, close. */
public interface Trainer extends AutoCloseable {
    /** Trains for {@code num_train_epochs} without checkpoints. */
    default void train() {
        train(null, 1, null);
    }

    /** Trains, saving a checkpoint every {@code checkpointInterval} epochs and at the end. */
    default void train(Path checkpointDir, int checkpointInterval) {
        train(checkpointDir, checkpointInterval, null);
    }

    /**
     * Trains, saving a checkpoint every {@code checkpointInterval} epochs and at the end, optionally
     * resuming from {@code resumeFromCheckpoint} first.
     */
    void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint);

    /**
     * Trains until {@code epochs} epochs are complete in all (for a trainer that runs this one in
     * stages), with checkpoints as {@link #train(Path, int, Path)}.
     *
     * @throws UnsupportedOperationException for trainers that do not count epochs this way
     */
    default void trainUntil(int epochs, Path checkpointDir, int checkpointInterval) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not train in stages");
    }

    /** Restores a checkpoint written by this kind of trainer. */
    void resumeFrom(Path checkpoint);

    /** Evaluates on the first {@code eval_num_samples} evaluation items ({@code eval/...} metrics). */
    Map<String, Double> evaluate();

    /** Saves the trained models in the reference's layout. */
    void saveModel(Path dir);

    /** The environment steps taken so far ({@code env_step}, the x axis of every logged metric). */
    long envStep();

    /** Each agent's causal LM (without value heads), in actor order; owned by the trainer. */
    List<CausalLm> policies();

    /**
     * Writes a checkpoint of the current state under {@code root} ({@code checkpoint-E}, E = epochs
     * completed), as {@link #train(Path, int, Path)} does at epoch ends; returns its directory.
     */
    Path saveCheckpoint(Path root);

    /** Each agent's generate settings, with the source of every value. */
    List<GenerationSettings.Resolved> generationSettings();

    @Override
    void close();
}
