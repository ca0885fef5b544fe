package comlrl.generation;

/** Why a completion ended. */
public enum FinishReason {
    /** An end-of-sequence token was produced (it is the completion's last token). */
    EOS,
    /** {@code max_new_tokens} was reached. */
    LENGTH,
    /**
     * The decoded completion came to contain one of the stop strings ({@link SamplingConfig#stopStrings()}):
     * the completion ends with the token that completed the match (the string and whatever of that token
     * overhangs it).
     */
    STOP
}
