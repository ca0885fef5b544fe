package comlrl.generation;

/** Why a completion ended. */
public enum FinishReason {
    /** An end-of-sequence token was produced (it is the completion's last token). */
    EOS,
    /** {@code max_new_tokens} was reached. */
    LENGTH
}
