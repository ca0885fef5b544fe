package comlrl.trainers.common;

import java.nio.file.Path;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;

/** What every trainer does when an epoch is done: record it and checkpoint on schedule. */
public final class EpochLoop {
    /**
     * What {@code epochDone} does in every trainer: records the epochs done, then writes a checkpoint
     * when {@code checkpointDir} is set, every {@code interval} epochs and after the last.
     */
    public static IntConsumer checkpointing(IntConsumer record, Path checkpointDir,
            int interval, int epochs, TrainerCheckpoint checkpoint, LongSupplier envStep) {
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
}
