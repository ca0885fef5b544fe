package comlrl.trainers.common;

import comlrl.data.TaskItem;
import comlrl.data.TaskSet;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.function.BiConsumer;

/**
 * Where a trainer that trains item by item (the MAGRPO family, IAC, MAAC) stands, and how it goes
 * on: the epochs done and {@code env_step}, written into its checkpoints ({@link #save}) and restored
 * from them ({@link #resume}), and {@link #trainUntil}, the outer loop ({@link EpochLoop}) with a
 * checkpoint every {@code checkpoint_interval} epochs and after the last. The trainer keeps only its
 * algorithm: what one item's rollouts and updates are, what an evaluation is.
 */
public final class EpochProgress {
    /** What the outer loop runs besides the trainer's items: the training set, evaluation, console, logger. */
    public record Loop(TaskSet train, boolean evaluates, int evalInterval, PrintStream console, MetricsLogger logger,
            boolean progressBar) {
    }

    private final Loop loop;
    private final TrainerCheckpoint checkpoint;
    /** The actors, which no checkpoint directory may overwrite. */
    private final AgentSet actors;
    private final Runnable evaluate;
    private final BiConsumer<TaskItem, String> trainItem;
    private final Runnable flush;
    private int epochsDone;
    private long envStep;

    /**
     * @param evaluate an evaluation (run on the {@code eval_interval} schedule)
     * @param trainItem the rollouts and updates of one item; the label names it ("train item 3 of epoch 1")
     * @param flush the updates from what is still buffered at an epoch's end
     */
    public EpochProgress(Loop loop, TrainerCheckpoint checkpoint, AgentSet actors, Runnable evaluate,
            BiConsumer<TaskItem, String> trainItem, Runnable flush) {
        this.loop = loop;
        this.checkpoint = checkpoint;
        this.actors = actors;
        this.evaluate = evaluate;
        this.trainItem = trainItem;
        this.flush = flush;
    }

    /** {@code env_step}: the environment steps taken so far (the x axis of every logged metric). */
    public long envStep() {
        return envStep;
    }

    /** Counts {@code steps} more environment steps; returns the new {@code env_step}. */
    public long advance(long steps) {
        envStep += steps;
        return envStep;
    }

    /** Writes {@code checkpoint-E} (E = epochs done) under {@code root} now; returns its directory. */
    public Path save(Path root) {
        return checkpoint.save(root, new TrainerCheckpoint.Progress(epochsDone, envStep));
    }

    /** Restores a checkpoint ({@link TrainerCheckpoint#restore}) and the progress it records. */
    public void resume(Path checkpointDir) {
        TrainerCheckpoint.Progress p = checkpoint.restore(checkpointDir);
        epochsDone = p.epochsDone();
        envStep = p.envStep();
    }

    /**
     * {@code Trainer.train}: resumes from {@code resumeFrom} when given, then trains until
     * {@code epochs} (the whole run's {@code num_train_epochs}).
     */
    public void train(Path resumeFrom, int epochs, Path checkpointDir, int checkpointInterval) {
        if (resumeFrom != null) {
            resume(resumeFrom);
        }
        trainUntil(epochs, checkpointDir, checkpointInterval);
    }

    /**
     * Trains epochs {@code done+1 .. epochs} ({@link EpochLoop#run}): per item {@code evaluate} on the
     * {@code eval_interval} schedule, then {@code trainItem(item, label)}; at each epoch's end
     * {@code flush} (what is still buffered), then a checkpoint in {@code checkpointDir} (when set) every
     * {@code checkpointInterval} epochs and after the last.
     */
    public void trainUntil(int epochs, Path checkpointDir, int checkpointInterval) {
        java.util.function.IntConsumer epochDone = EpochLoop.checkpointing(done -> epochsDone = done, checkpointDir,
                checkpointInterval, epochs, checkpoint, () -> envStep);
        actors.requireOutside(checkpointDir, "checkpoint directory");
        EpochLoop.run(loop.train(), loop.evaluates(), loop.evalInterval(), epochsDone, epochs, loop.console(),
                loop.logger(), loop.progressBar(), EpochLoop.Body.of(evaluate, trainItem, flush, epochDone));
    }
}
