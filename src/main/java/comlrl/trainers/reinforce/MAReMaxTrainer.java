package comlrl.trainers.reinforce;

/**
 * MAReMax (reference §3.4): {@link MAGRPOTrainer} with the group-max baseline, A_k = R_k − max(R)
 * ({@link MAReMaxConfig}'s default {@code advantage_mode: max}); everything else is MAGRPO's.
 */
public class MAReMaxTrainer extends MAGRPOTrainer {
    /** The reference's {@code algorithm_name}. */
    public static final String ALGORITHM_NAME = "MAReMax";

    protected MAReMaxTrainer(Builder b) {
        super(b.requireConfig(MAReMaxConfig.class, ReinforceAlgorithm.MAREMAX), ALGORITHM_NAME);
    }

    /** {@code args} must be a {@link MAReMaxConfig}. */
    public static Builder builder() {
        return new Builder(MAReMaxTrainer::new);
    }
}
