package comlrl.utils;

/**
 * Transforms each raw reward before training ({@code reward_processor}; default identity). Trainers
 * call {@link #applyWithLength(double, int)} where the length of the scored text is known, and
 * {@link #apply(double)} otherwise; only {@link RewardProcessors#normalizeByLength(int)} uses the
 * length. See {@link RewardProcessors} for the built-in processors.
 */
@FunctionalInterface
public interface RewardProcessor {
    /** The processed reward. */
    double apply(double reward);

    /**
     * The processed reward when the scored text is known to be {@code textLength} characters long
     * (Unicode code points; for a joint response, the summed length of every agent's completion).
     * Defaults to {@link #apply(double)}.
     */
    default double applyWithLength(double reward, int textLength) {
        return apply(reward);
    }

    /** This processor, then {@code next}; the text length, when given, reaches both. */
    default RewardProcessor andThen(RewardProcessor next) {
        return RewardProcessors.chain(this, next);
    }
}
