package comlrl.trainers.preference;

import java.util.Set;

/**
 * Iterative multi-agent DPO (reference §7.4): the rounds of {@link IterativeTrainer}, the pairs
 * scored by the task reward, each iteration training {@code num_train_epochs} epochs of
 * {@link MADPOTrainer}'s update on its sampled pairs. Checkpoints ({@code checkpoint-N}, N =
 * iterations done) hold MADPO's state and the rounds'.
 */
public final class MADPOIterTrainer extends IterativeTrainer<MADPOIterConfig, MADPOTrainer> {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MADPOIter";

    /** The MADPO fields the DPO stage does not take from this config (the iterations pair index by index). */
    private static final Set<String> NOT_MAPPED = Set.of("pair_selection", "preference_pairs_per_sample");

    private MADPOIterTrainer(Builder b) {
        super(b, "MADPOIterConfig", self -> {
            MADPOTrainer.Builder stage = MADPOTrainer.builder().settings(b.settings()).args(dpoConfig(self.args))
                    .checkpointExtension(self.extension(ALGORITHM_NAME, self::iterationsDone, java.util.Map.of()));
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

    @Override
    void runIteration(int iteration) {
        Iteration it = collect(iteration, collector());
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
