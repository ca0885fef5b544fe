package comlrl.reward;

/** A reward function could not produce rewards (for example, its external command failed). */
public class RewardFunctionException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RewardFunctionException(String message) {
        super(message);
    }

    public RewardFunctionException(String message, Throwable cause) {
        super(message, cause);
    }
}
