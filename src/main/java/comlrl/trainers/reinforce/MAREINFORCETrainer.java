package comlrl.trainers.reinforce;

/**
 * MAREINFORCE (reference §3.4): {@link MAGRPOTrainer} with the no baseline, A_k = R_k, the default
 * {@code advantage_mode = "raw"} of {@link MAREINFORCEConfig}. Everything else (rollout tree, returns,
 * loss, logging, checkpoints) is MAGRPO's. With the default {@code advantage_normalization = true} the
 * normalised advantages equal MAGRPO's; the baseline matters only with normalisation off.
 *
 * <pre>{@code
 * MAGRPOTrainer trainer = MAREINFORCETrainer.builder()
 *         .agentModel("Qwen/Qwen2.5-0.5B").numAgents(2)
 *         .args(MAREINFORCEConfig.builder().advantageNormalization(false).build())
 *         .rewardFunc(reward).trainDataset(train).build();   // a MAREINFORCETrainer
 * }</pre>
 */
public class MAREINFORCETrainer extends MAGRPOTrainer {
    /** The reference's {@code algorithm_name}. */
    public static final String ALGORITHM_NAME = "MAREINFORCE";

    protected MAREINFORCETrainer(Builder b) {
        super(b.requireConfig(MAREINFORCEConfig.class, ReinforceAlgorithm.MAREINFORCE), ALGORITHM_NAME);
    }

    /** A builder whose {@code build()} returns a {@code MAREINFORCETrainer}; {@code args} must be a {@link MAREINFORCEConfig}. */
    public static Builder builder() {
        return new Builder(MAREINFORCETrainer::new);
    }
}
