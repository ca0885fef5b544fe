package comlrl.trainers.common;

import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.data.TaskItem;
import comlrl.data.TaskSet;
import comlrl.logging.ConsoleProgress;
import comlrl.logging.MetricsLogger;
import comlrl.rl.EvalSchedule;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.BiConsumer;
import java.util.function.IntConsumer;

/**
 * Where a trainer that trains item by item stands (epochs done, {@code env_step}, checkpointed by
 * {@link #save}, {@link #resume}) and the outer loop it shares ({@link #trainUntil}); the trainer keeps
 * only its algorithm: one item's rollouts and updates, its evaluation.
 */
public final class EpochProgress {
    /** What the outer loop runs besides the trainer's items: the training set, evaluation, console, logger. */
    public record Loop(TaskSet train, boolean evaluates, int evalInterval, PrintStream console, MetricsLogger logger,
            boolean progressBar) {
    }

    private final Loop loop;
    private final TrainerCheckpoint checkpoint;
    private final AgentSet actors; // no checkpoint directory may overwrite them
    private final Runnable evaluate;
    private final BiConsumer<TaskItem, String> trainItem;
    private final Runnable flush;
    private int epochsDone;
    private long envStep;

    /**
     * {@code evaluate} runs on the {@code eval_interval} schedule, {@code trainItem} one item's rollouts and
     * updates (labelled "train item 3 of epoch 1"), {@code flush} the updates still buffered at an epoch's end.
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

    public MetricsLogger logger() {
        return loop.logger();
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

    /** Restores a checkpoint ({@link TrainerCheckpoint#restore}) with its progress. */
    public void resume(Path checkpointDir) {
        TrainerCheckpoint.Progress p = checkpoint.restore(checkpointDir);
        epochsDone = p.epochsDone();
        envStep = p.envStep();
    }

    /** {@code Trainer.train}: resumes from {@code resumeFrom} when given, then trains the whole run's epochs. */
    public void train(Path resumeFrom, Path checkpointDir, int checkpointInterval) {
        if (resumeFrom != null) {
            resume(resumeFrom);
        }
        trainUntil(checkpoint.numTrainEpochs(), checkpointDir, checkpointInterval);
    }

    /**
     * Trains epochs {@code done+1 .. epochs} (the whole run's, so a resumed run trains those left; with
     * none left, says so). Per epoch, per task item b in order (no reshuffle): {@code evaluate} when
     * {@code b % eval_interval == 0} and there is an evaluation set, then {@code trainItem(item, label)};
     * at the epoch's end {@code flush}, then a checkpoint on schedule ({@link TrainerCheckpoint#epochDone}).
     * The time taken (evaluations and checkpoints included) and the items trained go to {@code run.json}.
     */
    public void trainUntil(int epochs, Path checkpointDir, int checkpointInterval) {
        IntConsumer epochDone = checkpoint.epochDone(done -> epochsDone = done, checkpointDir, checkpointInterval,
                epochs, () -> envStep);
        actors.requireOutside(checkpointDir, "checkpoint directory");
        if (epochsDone >= epochs) {
            loop.console().printf(Locale.ROOT, "Nothing to train: %d of num_train_epochs=%d epochs are already done "
                    + "(the checkpoint's progress); raise num_train_epochs to train further.%n", epochsDone, epochs);
            return;
        }
        TaskSet train = loop.train();
        long totalItems = train.knownSize().isPresent() ? (long) train.knownSize().getAsInt() * (epochs - epochsDone)
                : -1;
        ConsoleProgress bar = loop.progressBar() ? new ConsoleProgress(loop.console(), totalItems, null,
                loop.logger().rewardLabel()) : null;
        if (bar != null) {
            loop.logger().addSink(bar);
        }
        double started = comlrl.report.RunTimes.now();
        long trained = 0;
        try {
            for (int epoch = epochsDone; epoch < epochs; epoch++) {
                long b = 0;
                for (TaskItem item : train) {
                    if (loop.evaluates() && EvalSchedule.shouldEvaluate(b, loop.evalInterval())) {
                        evaluate.run();
                    }
                    trainItem.accept(item, "train item " + b + " of epoch " + (epoch + 1));
                    b++;
                    trained++;
                    if (bar != null) {
                        bar.advance(1);
                    }
                }
                flush.run();
                epochDone.accept(epoch + 1);
            }
            loop.logger().trained(comlrl.report.RunTimes.now() - started, trained); // run.json's training time
        } catch (RuntimeException | Error e) {
            loop.logger().markFailed(); // the tracker run ends as failed when the trainer closes
            throw e;
        } finally {
            if (bar != null) {
                loop.logger().removeSink(bar);
            }
        }
    }

    /** The epochs done (restored by {@link #resume}, counted by {@link #trainUntil}). */
    public int epochsDone() {
        return epochsDone;
    }

    /** Sets the epochs done (MADPOIter's DPO stage records the rounds done). */
    public void epochsDone(int done) {
        epochsDone = done;
    }
}
