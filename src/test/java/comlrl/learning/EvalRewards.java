package comlrl.learning;

import comlrl.trainers.common.Trainer;

/** The learning tests' measure: the evaluation reward averaged over repeated evaluations (sampling is random). */
final class EvalRewards {
    private EvalRewards() {
    }

    /**
     * The mean over {@code seeds} of {@code run}'s evaluation reward before ([0]) and after ([1])
     * training: one run's gain on the tiny random model depends much on its seed.
     */
    static double[] overSeeds(java.util.function.LongFunction<double[]> run, long... seeds) {
        double[] mean = new double[2];
        for (long seed : seeds) {
            double[] r = run.apply(seed);
            mean[0] += r[0] / seeds.length;
            mean[1] += r[1] / seeds.length;
        }
        return mean;
    }

    /** Mean of {@code eval/turn_1/reward_mean} over {@code repeats} evaluations. */
    static double mean(Trainer trainer, int repeats) {
        double sum = 0;
        for (int r = 0; r < repeats; r++) {
            sum += trainer.evaluate().get("eval/turn_1/reward_mean") / repeats;
        }
        return sum;
    }
}
