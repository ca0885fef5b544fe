package comlrl.trainers.preference;

import comlrl.trainers.common.MetricsLogger;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Iterative multi-agent DPO (reference §7.4): {@code num_iterations} rounds of preference
 * collection against a comparator policy, each followed by DPO training.
 * <ol>
 *   <li>Per item the agents sample {@code preference_num_candidates} candidates and the comparator
 *       ({@code comparator_policy}) {@code comparator_num_candidates}; both are scored by the task
 *       reward; candidate k of the current policy is paired with candidate k of the comparator (the
 *       higher processed reward wins, ties dropped), ordered by {@code pair_selection} and capped at
 *       {@code preference_pairs_per_sample}.</li>
 *   <li>The pairs are written as shard {@code iteration_NNNN.json} of the replay directory (text only).</li>
 *   <li>The training pairs are sampled from the shards ({@code preference_replay_mode}: weights
 *       over shards, then records without replacement, {@link PreferenceReplay}) and re-tokenised.</li>
 *   <li>{@code num_train_epochs} epochs of MADPO's update on them ({@link MADPOTrainer}, the same
 *       loss and evaluation schedule by updates seen).</li>
 *   <li>With {@code policy_checkpoint_dir} or the history comparator, the agents are saved as
 *       {@code initial/agent_i} (before iteration 1) and {@code iteration_NNNN/agent_i}.</li>
 * </ol>
 * Iterations are numbered from 1; the comparators, the replay and the iteration's metrics and
 * files are {@link IterativeTrainer}'s. Checkpoints ({@code checkpoint-N}, N = iterations done) hold
 * MADPO's state, the replay shards written so far, the seed streams and, with the history
 * comparator, the policy snapshots it will still read; a resumed run rewrites the replay directory
 * (and those snapshots) from them, so it repeats exactly what an uninterrupted run does.
 *
 * With {@code comparator_generation_mode: centralized} one comparator agent writes every role's
 * answer through the centralized adapter (§7.5).
 *
 * With {@code collaboration_mode: centralized} the DPO trainer has one actor answering the adapter's
 * joint prompt (as {@link MADPOTrainer}); the comparator answers the same prompt, the replay
 * stores it and the joint completions, and the task reward scores the roles' parts.
 */
public final class MADPOIterTrainer extends IterativeTrainer<MADPOIterConfig, MADPOTrainer> {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MADPOIter";

    /** The MADPO fields the per-iteration DPO training takes from this config (not the pair selection: that is aligned here). */
    private static final Set<String> NOT_MAPPED = Set.of("pair_selection", "preference_pairs_per_sample");

    private MADPOIterTrainer(Builder b) {
        super(b, "MADPOIterConfig", self -> {
            MADPOTrainer.Builder stage = MADPOTrainer.builder().settings(b.settings()).args(dpoConfig(self.args))
                    .checkpointExtension(self.extension(ALGORITHM_NAME, self::iterationsDone));
            // the DPO stage receives this builder's settings whole; it logs as this trainer, into its output directory
            stage.stageLogger = main -> b.stageLogger(ALGORITHM_NAME, main);
            return stage.build();
        });
    }

    /** MADPO's config for the per-iteration DPO epochs: this config's values of MADPO's fields. */
    static MADPOConfig dpoConfig(MADPOIterConfig args) {
        return MADPOConfig.fromMap(args.valuesOf(MADPOConfig.keys(), NOT_MAPPED));
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public int iterationsDone() {
        return stage.progress();
    }

    public List<Map<String, Double>> logHistory() {
        return stage.logHistory();
    }

    @Override
    public Path outputDir() {
        return stage.outputDir();
    }

    @Override
    PreferenceCollector collector(MADPOTrainer dpo) {
        return dpo.collector();
    }

    @Override
    MetricsLogger logger() {
        return stage.logger();
    }

    @Override
    void relocateOutput(Path checkpoint) {
        stage.relocateOutput(checkpoint);
    }

    @Override
    void runIteration(int iteration) {
        Iteration it = collect(iteration, stage.collector());
        stage.trainOn(it.training(), iteration);
        finish(iteration, it);
    }

    /** Builds a {@link MADPOIterTrainer}; names follow the reference's constructor keywords. */
    public static final class Builder extends PreferenceBuilder<MADPOIterConfig, Builder> {

        private Builder() {
        }

        public MADPOIterTrainer build() {
            refuseExtension(settings(), ALGORITHM_NAME);
            return new MADPOIterTrainer(this);
        }
    }
}
