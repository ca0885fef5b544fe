package comlrl.trainers.preference;

import comlrl.generation.CausalLm;
import comlrl.generation.GenerationSettings;
import comlrl.trainers.common.Trainer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A trainer that runs another as its training stage (MARLHF its RL backend, MADPOIter its DPO
 * trainer, MARLHFIter its MARLHF trainer): the agents, steps, evaluation and checkpoints are that
 * stage's; the subclass adds what it does around it.
 *
 * @param <C> the trainer's config
 */
abstract class StagedTrainer<C extends PreferenceConfig> extends PreferenceTrainer<C> {
    StagedTrainer(PreferenceBuilder<C, ?> b, String configName) {
        super(b, configName);
    }

    /** The trainer this one runs as its stage. */
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

    /** The stage's evaluation (for MARLHF and its iterative version: on the task reward). */
    @Override
    public Map<String, Double> evaluate() {
        return stage().evaluate();
    }

    /**
     * Moves the outputs as {@link PreferenceTrainer} says ({@link #relocateOutput}), then restores the
     * stage's checkpoint, which holds this trainer's state too (MARLHF: the preference set, reward
     * model and stage reached).
     */
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
