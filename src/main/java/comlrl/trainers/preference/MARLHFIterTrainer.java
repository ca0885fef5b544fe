package comlrl.trainers.preference;

import comlrl.data.Stateful;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerCheckpoint;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Iterative multi-agent RLHF (reference §7.4): {@code num_iterations} rounds of
 * <ol>
 *   <li>current-vs-comparator preference pairs (ranked by the task reward, or with
 *       {@code preference_scoring_reward: reward_model} by the previous iteration's reward model),
 *       replay shards and the training pairs sampled from them ({@link IterationRounds});</li>
 *   <li>a fresh joint reward model loaded from {@code reward_model_name} (or the first actor)
 *       and trained on those pairs for {@code reward_num_train_epochs} (Bradley–Terry);</li>
 *   <li>{@code num_train_epochs} epochs of the {@code rl_algorithm} backend against it
 *       ({@link MARLHFTrainer}'s backend: evaluation on the task reward).</li>
 * </ol>
 * Checkpoints ({@code checkpoint-E}, E = RL epochs done, written every {@code checkpoint_interval}
 * iterations and after the last) hold the backend's state, the reward model and its optimizer, the
 * replay shards and the seed streams (with the history comparator, the policy snapshots it will
 * still read), and the iterations done.
 *
 * With {@code collaboration_mode: centralized} one actor answers the adapter's joint prompt (as in
 * {@link MARLHFTrainer}).
 */
public final class MARLHFIterTrainer extends IterativeTrainer<MARLHFIterConfig> {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MARLHFIter";

    private final MARLHFTrainer marlhf;
    private int iterationsDone;

    private MARLHFIterTrainer(Builder b) {
        super(b, "MARLHFIterConfig");
        MARLHFTrainer inner = null;
        try {
            // MARLHF receives this builder's settings whole, plus the rounds' checkpoint state
            MARLHFTrainer.Builder stage = MARLHFTrainer.builder().settings(b.settings()).args(args.marlhf())
                    .checkpointExtension(extension());
            stage.runName = ALGORITHM_NAME; // the run's config.json, run.json and W&B run name MARLHFIter
            inner = stage.build();
            rounds.in(inner.work()).comparators.loadFixedComparators(inner.collector().agents(), b.dtype()); // a ddp run: MARLHF's processes
        } catch (RuntimeException | Error e) {
            if (inner != null) {
                inner.close();
            }
            rounds.close();
            throw e;
        }
        this.marlhf = inner;
    }

    /** The iteration rounds' state and the iterations done, joined to MARLHF's in every checkpoint. */
    private TrainerCheckpoint.Extension extension() {
        TrainerCheckpoint.Extension replay = rounds.extension(ALGORITHM_NAME, () -> iterationsDone);
        Map<String, Stateful> states = new LinkedHashMap<>(replay.states());
        states.put("marlhf_iter_progress", Counters.of("iterations_done", () -> iterationsDone,
                done -> iterationsDone = Math.toIntExact(done)));
        return new TrainerCheckpoint.Extension(ALGORITHM_NAME, replay.parts(), states);
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public int iterationsDone() {
        return iterationsDone;
    }

    /** The current reward model (the one trained in the last iteration). */
    public JointRewardModel rewardModel() {
        return marlhf.rewardModel();
    }

    /** The policy-learning trainer ({@code rl_algorithm}). */
    public Trainer rlTrainer() {
        return marlhf.rlTrainer();
    }

    public Path outputDir() {
        return marlhf.outputDir();
    }

    public List<Map<String, Double>> logHistory() {
        return marlhf.logHistory();
    }

    /** One iteration: pairs, a fresh reward model trained on the replayed ones, then the backend's epochs. */
    @Override
    void runIteration(int iteration) {
        boolean byModel = args.preferenceScoringReward() == PreferenceScoringReward.REWARD_MODEL && iteration > 1;
        IterationRounds.Iteration it = rounds.collect(iteration,
                byModel ? marlhf.learnedCollector() : marlhf.collector(), trainDataset);
        if (!it.training().isEmpty()) {
            marlhf.reloadRewardModel();
            marlhf.trainRewardModel(it.training());
            marlhf.rlTrainer().trainUntil(iteration * args.numTrainEpochs(), null, 1);
        }
        iterationsDone = iteration;
        rounds.finish(iteration, it, marlhf.logger(), envStep(), console, outputDir(), this);
    }

    @Override
    comlrl.trainers.common.MetricsLogger logger() {
        return marlhf.logger();
    }

    @Override
    public void resumeFrom(Path checkpoint) {
        marlhf.relocateOutput(checkpoint);
        rounds.followOutput(marlhf.outputDir());
        marlhf.resumeFrom(checkpoint);
    }

    @Override
    Trainer stage() {
        return marlhf;
    }

    @Override
    public void close() {
        rounds.close();
        marlhf.close();
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
