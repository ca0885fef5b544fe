package comlrl.utils;

import comlrl.checkpoint.Checkpoints;
import java.nio.file.Path;
import java.util.Map;

/** Helpers around training checkpoints, named as in the Python library's {@code comlrl.utils}. */
public final class Checkpointing {
    private Checkpointing() {
    }

    /**
     * {@code read_checkpoint_metadata}: the metadata of a {@code checkpoint-N} directory: algorithm,
     * progress ({@code epochs_completed}, {@code env_step}), saved component states, and under
     * {@code "wandb"} the logging-run identity to merge into {@code wandb_config} when resuming
     * (null when the run had none).
     */
    public static Map<String, Object> readCheckpointMetadata(Path checkpoint) {
        return Checkpoints.readMetadata(checkpoint);
    }
}
