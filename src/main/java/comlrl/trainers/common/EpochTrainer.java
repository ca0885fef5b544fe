package comlrl.trainers.common;

import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** A trainer whose outer loop, progress and checkpoints are an {@link EpochProgress} (MAGRPO family, IAC, MAAC). */
public abstract class EpochTrainer implements Trainer {
    protected abstract EpochProgress progress();

    /** The agents, references, executor and logger this trainer loaded, all freed by {@link #close()}. */
    protected abstract TrainerParts parts();

    /** What the builder was given besides {@code args}, as this trainer received it. */
    public final TrainerSettings settings() {
        return parts().settings;
    }

    /** Each actor's causal LM (without value heads); null for other processes' agents in a ddp agents split. */
    @Override
    public List<CausalLm> policies() {
        return parts().agents.asList();
    }

    /** Each agent's generate settings (rollouts and evaluation) with the source of every value. */
    @Override
    public List<GenerationSettings.Resolved> generationSettings() {
        return parts().generation.asList();
    }

    /** Closes the logger, then frees the trainer's own parts, references and actors ({@link TrainerParts#close}). */
    @Override
    public void close() {
        parts().close();
    }

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

    /** The latest {@code log_history_limit} metric events, oldest first, each with its {@code env_step}. */
    public List<Map<String, Double>> logHistory() {
        return progress().logger().history();
    }
}
