package comlrl.trainers.reinforce;

/**
 * MARLOO (reference §3.4): {@link MAGRPOTrainer} with the leave-one-out baseline, A_k = R_k − mean_{l≠k} R_l, the default
 * {@code advantage_mode = "rloo"} of {@link MARLOOConfig}. Everything else (rollout tree, returns,
 * loss, logging, checkpoints) is MAGRPO's. With the default {@code advantage_normalization = true} the
 * normalised advantages equal MAGRPO's; the baseline matters only with normalisation off.
 *
 * <pre>{@code
 * MAGRPOTrainer trainer = MARLOOTrainer.builder()
 *         .agentModel("Qwen/Qwen2.5-0.5B").numAgents(2)
 *         .args(MARLOOConfig.builder().advantageNormalization(false).build())
 *         .rewardFunc(reward).trainDataset(train).build();   // a MARLOOTrainer
 * }</pre>
 */
public class MARLOOTrainer extends MAGRPOTrainer {
    /** The reference's {@code algorithm_name}. */
    public static final String ALGORITHM_NAME = "MARLOO";

    protected MARLOOTrainer(Builder b) {
        super(b.requireConfig(MARLOOConfig.class, ReinforceAlgorithm.MARLOO), ALGORITHM_NAME);
    }

    /** A builder whose {@code build()} returns a {@code MARLOOTrainer}; {@code args} must be a {@link MARLOOConfig}. */
    public static Builder builder() {
        return new Builder(MARLOOTrainer::new);
    }
}
