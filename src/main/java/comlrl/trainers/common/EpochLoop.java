package comlrl.trainers.common;

import comlrl.data.TaskItem;
import comlrl.data.TaskSet;
import comlrl.logging.ConsoleProgress;
import comlrl.rl.EvalSchedule;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The outer loop every item-based trainer shares: for each remaining epoch, for each task item b
 * in order (no reshuffle per epoch): evaluate first when {@code b % eval_interval == 0} and there is
 * an evaluation set, then train on the item; at the end of the epoch flush what is buffered and
 * report the epoch done (where the trainer checkpoints). {@code num_train_epochs} counts the
 * whole run, so a resumed run trains only the epochs left.
 */
public final class EpochLoop {
    /** What the trainer does at each point of the loop. */
    public interface Body {
        void evaluate();

        /** Trains on one item; {@code label} names it in messages ("train item 3 of epoch 1"). */
        void trainItem(TaskItem item, String label);

        /** Updates from what is still buffered at the end of an epoch. */
        void flush();

        /** Epoch {@code epochsDone} is complete (1-based count). */
        void epochDone(int epochsDone);

        /** A body of four steps. */
        static Body of(Runnable evaluate, java.util.function.BiConsumer<TaskItem, String> trainItem, Runnable flush,
                java.util.function.IntConsumer epochDone) {
            return new Body() {
                @Override
                public void evaluate() {
                    evaluate.run();
                }

                @Override
                public void trainItem(TaskItem item, String label) {
                    trainItem.accept(item, label);
                }

                @Override
                public void flush() {
                    flush.run();
                }

                @Override
                public void epochDone(int epochsDone) {
                    epochDone.accept(epochsDone);
                }
            };
        }
    }

    /**
     * What {@code epochDone} does in every trainer: records the epochs done, then writes a checkpoint
     * when {@code checkpointDir} is set, every {@code interval} epochs and after the last.
     */
    public static java.util.function.IntConsumer checkpointing(java.util.function.IntConsumer record, Path checkpointDir,
            int interval, int epochs, TrainerCheckpoint checkpoint, java.util.function.LongSupplier envStep) {
        if (interval < 1) {
            throw new IllegalArgumentException("checkpoint_interval must be >= 1, got " + interval);
        }
        return done -> {
            record.accept(done);
            if (checkpointDir != null && (done % interval == 0 || done == epochs)) {
                checkpoint.save(checkpointDir, new TrainerCheckpoint.Progress(done, envStep.getAsLong()));
            }
        };
    }

    private EpochLoop() {
    }

    /**
     * Runs epochs {@code epochsDone + 1 .. epochs}; prints why nothing is trained when none is left.
     *
     * @param progress console progress (items and logged metrics), or null
     */
    public static void run(TaskSet train, boolean evaluates, int evalInterval, int epochsDone, int epochs,
            PrintStream console, MetricsLogger logger, boolean progress, Body body) {
        if (epochsDone >= epochs) {
            console.printf(Locale.ROOT, "Nothing to train: %d of num_train_epochs=%d epochs are already done "
                    + "(the checkpoint's progress); raise num_train_epochs to train further.%n", epochsDone, epochs);
            return;
        }
        long totalItems = train.knownSize().isPresent() ? (long) train.knownSize().getAsInt() * (epochs - epochsDone) : -1;
        ConsoleProgress bar = progress ? new ConsoleProgress(console, totalItems) : null;
        if (bar != null) {
            logger.addSink(bar);
        }
        try {
            for (int epoch = epochsDone; epoch < epochs; epoch++) {
                long b = 0;
                for (TaskItem item : train) {
                    if (evaluates && EvalSchedule.shouldEvaluate(b, evalInterval)) {
                        body.evaluate();
                    }
                    body.trainItem(item, "train item " + b + " of epoch " + (epoch + 1));
                    b++;
                    if (bar != null) {
                        bar.advance(1);
                    }
                }
                body.flush();
                body.epochDone(epoch + 1);
            }
        } catch (RuntimeException | Error e) {
            logger.markFailed(); // the tracker run ends as failed when the trainer closes
            throw e;
        } finally {
            if (bar != null) {
                logger.removeSink(bar);
            }
        }
    }
}
