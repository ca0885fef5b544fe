package comlrl.tokenizer;

/**
 * A chat template that does not parse, or failed while rendering (including the template's own
 * {@code raise_exception}). The message says which, and why.
 */
public class ChatTemplateException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ChatTemplateException(String message) {
        super(message);
    }

    public ChatTemplateException(String message, Throwable cause) {
        super(message, cause);
    }
}
