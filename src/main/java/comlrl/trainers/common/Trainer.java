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
     * As above, first resuming from {@code resumeFromCheckpoint} when given ({@link #resumeFrom});
     * {@code num_train_epochs} counts the whole run. Checkpoints beyond {@code save_total_limit} are
     * deleted oldest first; a resumed run continues exactly as the uninterrupted one.
     */
    void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint);

    /** Trains until {@code epochs} epochs are complete in all (for a trainer running this one in stages). */
    default void trainUntil(int epochs, Path checkpointDir, int checkpointInterval) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not train in stages");
    }

    /**
     * Restores a {@code checkpoint-N} directory of this kind of trainer ({@link TrainerCheckpoint#restore})
     * and cuts {@code metrics.jsonl} back to the events logged before it; fails, changing nothing, on a
     * checkpoint of another algorithm, agent count or model shape.
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

    /** Writes {@code checkpoint-E} (E = epochs completed) under {@code root} now; returns its directory. */
    Path saveCheckpoint(Path root);

    /** The directory the trainer chose for its outputs (a resumed preference run's {@code resume-*}), else null. */
    default Path outputDir() {
        return null;
    }

    /** Each agent's generate settings, with the source of every value. */
    List<GenerationSettings.Resolved> generationSettings();

    @Override
    void close();
}
