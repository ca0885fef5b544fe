package comlrl.trainers.reinforce;

import comlrl.model.DecoderLm;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerSettings;
import java.util.function.BiConsumer;

/**
 * The MAGRPO family's builders ({@link MAGRPOTrainer.Builder}, {@link CentralizedMAGRPOTrainer.Builder}),
 * with the setters of {@link TrainerBuilder}.
 */
public abstract class ReinforceBuilder<B extends ReinforceBuilder<B>> extends TrainerBuilder<MAGRPOConfig, B> {
    BiConsumer<Integer, DecoderLm> gradientObserver;

    ReinforceBuilder() {
    }

    /** The trainer of every setting given. */
    public abstract ReinforceTrainer build();

    /** Sees each agent's accumulated gradients just before its optimizer step (for tests). */
    B gradientObserver(BiConsumer<Integer, DecoderLm> observer) {
        this.gradientObserver = observer;
        return self();
    }

    /**
     * For the variants' constructors: fails unless the args are of the variant's config type
     * (a null args fails later with the common message).
     */
    B requireConfig(Class<? extends MAGRPOConfig> type, ReinforceAlgorithm algorithm) {
        if (args() != null && !type.isInstance(args())) {
            String name = algorithm.configTypeName();
            throw new IllegalArgumentException(algorithm.displayName() + "Trainer requires a " + name + " ("
                    + (algorithm == ReinforceAlgorithm.CENTRALIZED_MAGRPO ? "num_turns 1, collaboration_mode \"centralized\""
                    : "advantage_mode \"" + algorithm.defaultAdvantageMode() + "\" by default") + "), got a "
                    + args().algorithm().configTypeName() + "; build one with " + name + ".builder() or "
                    + name + ".fromMap(...)");
        }
        return self();
    }

    /** The MAGRPO family trains no critic and uses its agents' own tokenizers. */
    void refuseCritics() {
        settings().refuse("The MAGRPO family", "it trains no critic and uses each agent's own tokenizer",
                TrainerSettings.CRITIC_MODEL, TrainerSettings.CRITICS, TrainerSettings.CRITIC_LORA,
                TrainerSettings.TOKENIZERS);
    }
}
