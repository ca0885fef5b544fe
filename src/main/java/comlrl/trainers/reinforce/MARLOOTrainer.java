package comlrl.trainers.reinforce;

/**
 * MARLOO (reference §3.4): {@link MAGRPOTrainer} with the leave-one-out baseline, A_k = R_k −
 * mean_{l≠k} R_l ({@link MARLOOConfig}'s default {@code advantage_mode: rloo}); everything else is
 * MAGRPO's.
 */
public class MARLOOTrainer extends MAGRPOTrainer {
    /** The reference's {@code algorithm_name}. */
    public static final String ALGORITHM_NAME = "MARLOO";

    protected MARLOOTrainer(Builder b) {
        super(b.requireConfig(MARLOOConfig.class, ReinforceAlgorithm.MARLOO), ALGORITHM_NAME);
    }

    /** {@code args} must be a {@link MARLOOConfig}. */
    public static Builder builder() {
        return new Builder(MARLOOTrainer::new);
    }
}
