package comlrl.trainers.reinforce;

/**
 * MAREINFORCE (reference §3.4): {@link MAGRPOTrainer} with no baseline, A_k = R_k ({@link
 * MAREINFORCEConfig}'s default {@code advantage_mode: raw}); everything else is MAGRPO's.
 */
public class MAREINFORCETrainer extends MAGRPOTrainer {
    /** The reference's {@code algorithm_name}. */
    public static final String ALGORITHM_NAME = "MAREINFORCE";

    protected MAREINFORCETrainer(Builder b) {
        super(b.requireConfig(MAREINFORCEConfig.class, ReinforceAlgorithm.MAREINFORCE), ALGORITHM_NAME);
    }

    /** {@code args} must be a {@link MAREINFORCEConfig}. */
    public static Builder builder() {
        return new Builder(MAREINFORCETrainer::new);
    }
}
