package comlrl.trainers.preference;

import comlrl.data.Stateful;
import comlrl.data.TaskSet;
import comlrl.trainers.common.Trainer;
import comlrl.trainers.common.TrainerCheckpoint;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.reinforce.Centralization;
import java.io.PrintStream;
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
public final class MARLHFIterTrainer extends StagedTrainer {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MARLHFIter";

    private final MARLHFIterConfig args;
    /** What the builder was given besides {@code args}. */
    private final TrainerSettings settings;
    private final MARLHFTrainer marlhf;
    private final IterationRounds rounds;
    private final TaskSet trainDataset;
    private final PrintStream console;
    private int iterationsDone;

    private MARLHFIterTrainer(Builder b) {
        if (b.args == null) {
            throw new IllegalArgumentException("args (a MARLHFIterConfig) must be provided");
        }
        this.args = b.args;
        this.settings = b.settings();
        if (b.trainDataset() == null) {
            throw new IllegalArgumentException("train_dataset must be provided");
        }
        this.trainDataset = b.trainDataset();
        this.console = b.console();
        this.rounds = new IterationRounds(args, b.outputDir(), b.rewardFunc(), b.wandbConfig()); // checks before any model loads
        if (b.get(Centralization.ADAPTER) != null) {
            rounds.centralizedAdapter(b.get(Centralization.ADAPTER));
        }
        MARLHFTrainer inner = null;
        try {
            // MARLHF receives this builder's settings whole, plus the rounds' checkpoint state
            inner = MARLHFTrainer.builder().settings(b.settings()).args(args.marlhf()).checkpointExtension(extension())
                    .build();
            rounds.in(inner.work()).loadFixedComparators(inner.policies(), b.dtype()); // a ddp run: MARLHF's processes
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
        states.put("marlhf_iter_progress", new Stateful() {
            @Override
            public Map<String, Object> stateDict() {
                return Map.of("iterations_done", iterationsDone);
            }

            @Override
            public void loadStateDict(Map<String, ?> state) {
                iterationsDone = ((Number) state.get("iterations_done")).intValue();
            }
        });
        return new TrainerCheckpoint.Extension(ALGORITHM_NAME, replay.parts(), states);
    }

    public static Builder builder() {
        return new Builder();
    }

    public MARLHFIterConfig args() {
        return args;
    }

    public TrainerSettings settings() {
        return settings;
    }

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

    public Path replayDir() {
        return rounds.replayDir();
    }

    public Path outputDir() {
        return marlhf.outputDir();
    }

    public List<Map<String, Double>> logHistory() {
        return marlhf.logHistory();
    }

    /** Runs iterations {@code done+1 .. num_iterations}, checkpointing every {@code checkpointInterval} iterations and after the last. */
    @Override
    public void train(Path checkpointDir, int checkpointInterval, Path resumeFromCheckpoint) {
        if (resumeFromCheckpoint != null) {
            resumeFrom(resumeFromCheckpoint);
        }
        rounds.runIterations(iterationsDone, checkpointDir, checkpointInterval, console, this, this::runIteration);
    }

    /** One iteration: pairs, a fresh reward model trained on the replayed ones, then the backend's epochs. */
    private void runIteration(int iteration) {
        boolean byModel = args.preferenceScoringReward() == PreferenceScoringReward.REWARD_MODEL && iteration > 1;
        IterationRounds.Iteration it = rounds.collect(iteration, policies(),
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
    public static final class Builder extends PreferenceBuilder.Rlhf<Builder> {
        MARLHFIterConfig args;

        private Builder() {
        }

        @Override
        protected Builder self() {
            return this;
        }

        public Builder args(MARLHFIterConfig args) {
            this.args = args;
            return this;
        }

        public MARLHFIterTrainer build() {
            settings().refuse(ALGORITHM_NAME, "it is not run as another trainer's stage; its checkpoints hold its "
                    + "own rounds", TrainerSettings.CHECKPOINT_EXTENSION);
            return new MARLHFIterTrainer(this);
        }
    }
}
