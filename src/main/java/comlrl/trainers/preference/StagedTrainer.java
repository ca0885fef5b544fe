package comlrl.trainers.preference;

import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.trainers.common.Trainer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A trainer that runs another as its training stage (MARLHF its RL backend, MADPOIter its DPO
 * trainer, MARLHFIter its MARLHF trainer): the agents, steps, evaluation and checkpoints are that stage's.
 *
 * @param <C> the trainer's config
 */
abstract class StagedTrainer<C extends PreferenceConfig> extends PreferenceTrainer<C> {
    StagedTrainer(PreferenceBuilder<C, ?> b, String configName) {
        super(b, configName);
    }

    abstract Trainer stage();

    @Override
    public long envStep() {
        return stage().envStep();
    }

    @Override
    public List<CausalLm> policies() {
        return stage().policies();
    }

    @Override
    public List<GenerationSettings.Resolved> generationSettings() {
        return stage().generationSettings();
    }

    @Override
    public Map<String, Double> evaluate() {
        return stage().evaluate();
    }

    /** Moves the outputs ({@link #relocateOutput}), then restores the stage's checkpoint, which holds ours too. */
    @Override
    public void resumeFrom(Path checkpoint) {
        relocateOutput(checkpoint);
        stage().resumeFrom(checkpoint);
    }

    @Override
    public Path saveCheckpoint(Path root) {
        return stage().saveCheckpoint(root);
    }

    @Override
    public void saveModel(Path dir) {
        stage().saveModel(dir);
    }
}
