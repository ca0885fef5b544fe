package comlrl.learning;

import comlrl.trainers.common.Trainer;

/** The learning tests' measure: the evaluation reward averaged over repeated evaluations (sampling is random). */
final class EvalRewards {
    private EvalRewards() {
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
