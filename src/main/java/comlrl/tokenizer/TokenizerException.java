package comlrl.tokenizer;

/**
 * A tokenizer directory that cannot be loaded or used: a missing or malformed file, a special
 * token that is not in the vocabulary, a missing pad/eos token. The message names the file and
 * says what to do.
 */
public class TokenizerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TokenizerException(String message) {
        super(message);
    }

    public TokenizerException(String message, Throwable cause) {
        super(message, cause);
    }
}
