package comlrl.sandbox;

/** The sandbox cannot run programs here (a missing tool or interpreter, namespaces not permitted); the message says how to fix it. */
public final class SandboxException extends RuntimeException {
    public SandboxException(String message) {
        super(message);
    }
}
