package comlrl.trainers.reinforce;

import comlrl.model.DecoderLm;
import comlrl.trainers.ExternalTransition;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerSettings;
import java.util.function.BiConsumer;

/**
 * What the MAGRPO family's builders ({@link MAGRPOTrainer.Builder}) take beyond {@link TrainerBuilder}:
 * the external transition and the run config (the setters every family shares are {@link TrainerBuilder}'s).
 * Names follow the reference's constructor keywords; every value but {@code args} is a key of the one
 * {@link TrainerSettings}.
 */
public abstract class ReinforceBuilder<B extends ReinforceBuilder<B>> extends TrainerBuilder<B> {
    MAGRPOConfig args;
    BiConsumer<Integer, DecoderLm> gradientObserver;

    ReinforceBuilder() {
    }

    /** {@code external_transition}: the next turn's prompts (required when {@code num_turns > 1}). */
    public B externalTransition(ExternalTransition externalTransition) {
        return set(TrainerSettings.EXTERNAL_TRANSITION, externalTransition);
    }

    public B args(MAGRPOConfig args) {
        this.args = args;
        return self();
    }

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
        if (args != null && !type.isInstance(args)) {
            String name = algorithm.configTypeName();
            throw new IllegalArgumentException(algorithm.displayName() + "Trainer requires a " + name
                    + " (advantage_mode \"" + algorithm.defaultAdvantageMode() + "\" by default), got a "
                    + args.algorithm().configTypeName() + "; build one with " + name + ".builder() or "
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
