package comlrl.trainers.reinforce;

import java.util.function.Function;

/**
 * Multi-Agent Group Relative Policy Optimisation: {@link ReinforceTrainer} with group-relative
 * advantages ({@code advantage_mode: mean}, {@link MAGRPOConfig}). MAREINFORCE, MAReMax and MARLOO
 * are this trainer with another baseline.
 *
 * <pre>{@code
 * try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel("Qwen/Qwen2.5-0.5B").numAgents(2)
 *         .rewardFunc(new LengthRatioReward()).trainDataset(train).args(MAGRPOConfig.builder().build()).build()) {
 *     trainer.train();
 * }
 * }</pre>
 */
public class MAGRPOTrainer extends ReinforceTrainer {
    protected MAGRPOTrainer(Builder b, String algorithmName) {
        super(b, algorithmName);
    }

    public static Builder builder() {
        return new Builder(b -> new MAGRPOTrainer(b, "MAGRPO"));
    }

    /** The builder of {@code algorithm}'s trainer (the centralized one with the tagged adapter unless replaced). */
    public static ReinforceBuilder<?> builderFor(ReinforceAlgorithm algorithm) {
        return switch (algorithm) {
            case MAGRPO -> builder();
            case MAREINFORCE -> MAREINFORCETrainer.builder();
            case MAREMAX -> MAReMaxTrainer.builder();
            case MARLOO -> MARLOOTrainer.builder();
            case CENTRALIZED_MAGRPO -> CentralizedMAGRPOTrainer.builder();
        };
    }

    /** Builds a trainer; the names follow the reference's constructor keywords ({@link ReinforceBuilder}). */
    public static final class Builder extends ReinforceBuilder<Builder> {
        private final Function<Builder, ? extends MAGRPOTrainer> factory;

        Builder(Function<Builder, ? extends MAGRPOTrainer> factory) {
            this.factory = factory;
        }

        @Override
        public MAGRPOTrainer build() {
            refuseCritics();
            return factory.apply(this);
        }
    }
}
