package comlrl.trainers.common;

import comlrl.checkpoint.TrainerCheckpoint;
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
     * resuming from {@code resumeFromCheckpoint} first (a {@code checkpoint-N} directory, see
     * {@link #resumeFrom}); {@code num_train_epochs} counts the whole run, including completed epochs.
     * Checkpoints beyond {@code save_total_limit} are deleted oldest first; a resumed run continues
     * exactly as the uninterrupted one.
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

    /**
     * Restores a {@code checkpoint-N} directory written by this kind of trainer: weights, optimizer
     * states, progress, seeds, the log gate and stateful parts ({@link TrainerCheckpoint#restore}); cuts
     * {@code metrics.jsonl} back to the events logged before the checkpoint (a run stopped later logged
     * more, which the resumed run repeats). Called by {@link #train(Path, int, Path)}; call it first to
     * evaluate the restored weights before training on. Fails, before changing anything, on a checkpoint
     * of another algorithm, agent count or model shape.
     */
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

    /**
     * Where the trainer writes its outputs when it chose a directory of its own (a resumed
     * preference-learning run's {@code resume-*} directory), else null: the output directory given.
     */
    default Path outputDir() {
        return null;
    }

    /** Each agent's generate settings, with the source of every value. */
    List<GenerationSettings.Resolved> generationSettings();

    @Override
    void close();
}
