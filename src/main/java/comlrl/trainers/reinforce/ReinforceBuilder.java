package comlrl.trainers.reinforce;

import comlrl.model.DecoderLm;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.ExternalTransition;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerSettings;
import java.util.function.BiConsumer;

/**
 * What the MAGRPO family's builders ({@link MAGRPOTrainer.Builder}) take beyond {@link TrainerBuilder}:
 * the homogeneous agent shortcut, the agent count, the external transition, custom evaluation metrics
 * and the run config. Names follow the reference's constructor keywords; every value but {@code args}
 * is a key of the one {@link TrainerSettings}.
 */
public abstract class ReinforceBuilder<B extends ReinforceBuilder<B>> extends TrainerBuilder<B> {
    MAGRPOConfig args;
    BiConsumer<Integer, DecoderLm> gradientObserver;

    ReinforceBuilder() {
    }

    /** Homogeneous agents: one model id or directory, loaded once per agent. */
    public B agentModel(String agentModel) {
        return set(TrainerSettings.AGENT_MODEL, agentModel);
    }

    public B numAgents(int numAgents) {
        return set(TrainerSettings.NUM_AGENTS, numAgents);
    }

    public B externalTransition(ExternalTransition externalTransition) {
        return set(TrainerSettings.EXTERNAL_TRANSITION, externalTransition);
    }

    public B evalLogger(EvalLogger evalLogger) {
        return set(TrainerSettings.EVAL_LOGGER, evalLogger);
    }

    public B evalAggregator(EvalAggregator evalAggregator) {
        return set(TrainerSettings.EVAL_AGGREGATOR, evalAggregator);
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
