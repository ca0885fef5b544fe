package comlrl.trainers.preference;

import comlrl.reward.JointRewardModel;
import comlrl.trainers.common.Trainer;
import comlrl.checkpoint.TrainerCheckpoint;
import java.util.Map;

/**
 * Iterative multi-agent RLHF (reference §7.4): the rounds of {@link IterativeTrainer}, the pairs
 * ranked by the task reward (or with {@code preference_scoring_reward: reward_model} by the previous
 * iteration's reward model), each iteration training a fresh joint reward model on its sampled pairs
 * for {@code reward_num_train_epochs}, then {@code num_train_epochs} epochs of the {@code rl_algorithm}
 * backend against it ({@link MARLHFTrainer}). Checkpoints ({@code checkpoint-E}, E = RL epochs done)
 * hold MARLHF's state, the rounds' state and the iterations done.
 */
public final class MARLHFIterTrainer extends IterativeTrainer<MARLHFIterConfig, MARLHFTrainer> {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MARLHFIter";

    private int iterationsDone;

    private MARLHFIterTrainer(Builder b) {
        // MARLHF receives this builder's settings whole, plus the iterations' checkpoint state
        super(b, "MARLHFIterConfig", self -> {
            MARLHFTrainer.Builder stage = MARLHFTrainer.builder().settings(b.settings()).args(self.args.marlhf())
                    .checkpointExtension(((MARLHFIterTrainer) self).extension());
            stage.runName = ALGORITHM_NAME; // the run's config.json, run.json and W&B run name MARLHFIter
            return stage.build();
        });
    }

    /** The iterations' state and the iterations done, joined to MARLHF's in every checkpoint. */
    private TrainerCheckpoint.Extension extension() {
        return extension(ALGORITHM_NAME, () -> iterationsDone, Map.of("marlhf_iter_progress", Counters.of(
                "iterations_done", () -> iterationsDone, done -> iterationsDone = Math.toIntExact(done))));
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public int iterationsDone() {
        return iterationsDone;
    }

    /** The reward model trained in the last iteration. */
    public JointRewardModel rewardModel() {
        return stage.rewardModel();
    }

    /** The policy-learning trainer ({@code rl_algorithm}). */
    public Trainer rlTrainer() {
        return stage.rlTrainer();
    }

    /** One iteration: pairs, a fresh reward model trained on the replayed ones, then the backend's epochs. */
    @Override
    void runIteration(int iteration) {
        boolean byModel = args.preferenceScoringReward() == PreferenceScoringReward.REWARD_MODEL && iteration > 1;
        Iteration it = collect(iteration, byModel ? stage.learnedCollector() : collector());
        if (!it.training().isEmpty()) {
            stage.reloadRewardModel();
            stage.trainRewardModel(it.training());
            stage.rlTrainer().trainUntil(iteration * args.numTrainEpochs(), null, 1);
        }
        iterationsDone = iteration;
        finish(iteration, it);
    }

    /** Builds a {@link MARLHFIterTrainer}; names follow the reference's constructor keywords. */
    public static final class Builder extends PreferenceBuilder.Rlhf<MARLHFIterConfig, Builder> {

        private Builder() {
        }

        public MARLHFIterTrainer build() {
            refuseExtension(settings(), ALGORITHM_NAME);
            return new MARLHFIterTrainer(this);
        }
    }
}
