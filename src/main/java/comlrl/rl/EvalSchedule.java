package comlrl.rl;

/**
 * When automatic evaluation runs during training (MAGRPO family, IAC, MAAC): before training item
 * {@code b} of every epoch whenever {@code eval_interval > 0 && b % eval_interval == 0}, so always
 * before item 0; {@code eval_interval = 0} means manual evaluation only.
 */
public final class EvalSchedule {
    private EvalSchedule() {}

    /**
     * {@code evalInterval > 0 && itemIndex % evalInterval == 0}; {@code itemIndex} counts training
     * task items from 0 within the epoch.
     */
    public static boolean shouldEvaluate(long itemIndex, int evalInterval) {
        return evalInterval > 0 && itemIndex % evalInterval == 0;
    }
}
