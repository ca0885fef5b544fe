package comlrl.trainers.reinforce;

/**
 * MAReMax (reference §3.4): {@link MAGRPOTrainer} with the group-max baseline, A_k = R_k − max(R), the default
 * {@code advantage_mode = "max"} of {@link MAReMaxConfig}. Everything else (rollout tree, returns,
 * loss, logging, checkpoints) is MAGRPO's. With the default {@code advantage_normalization = true} the
 * normalised advantages equal MAGRPO's; the baseline matters only with normalisation off.
 *
 * <pre>{@code
 * MAGRPOTrainer trainer = MAReMaxTrainer.builder()
 *         .agentModel("Qwen/Qwen2.5-0.5B").numAgents(2)
 *         .args(MAReMaxConfig.builder().advantageNormalization(false).build())
 *         .rewardFunc(reward).trainDataset(train).build();   // a MAReMaxTrainer
 * }</pre>
 */
public class MAReMaxTrainer extends MAGRPOTrainer {
    /** The reference's {@code algorithm_name}. */
    public static final String ALGORITHM_NAME = "MAReMax";

    protected MAReMaxTrainer(Builder b) {
        super(b.requireConfig(MAReMaxConfig.class, ReinforceAlgorithm.MAREMAX), ALGORITHM_NAME);
    }

    /** A builder whose {@code build()} returns a {@code MAReMaxTrainer}; {@code args} must be a {@link MAReMaxConfig}. */
    public static Builder builder() {
        return new Builder(MAReMaxTrainer::new);
    }
}
