package comlrl.model.io;

/**
 * A model id or one of its files could not be resolved to a local file. The message names the
 * repository, the file, and what to do; {@link #kind()} tells the cases apart for callers.
 */
public final class HubException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    public enum Kind {
        /** The string is neither an existing directory nor a valid model id. */
        INVALID_ID,
        /** A local model directory lacks a required file. */
        LOCAL_FILE_MISSING,
        /** Offline mode ({@code HF_HUB_OFFLINE}) and the file is not in the cache. */
        NOT_CACHED_OFFLINE,
        /** HTTP 401/403: private or gated repository, or a missing/invalid {@code HF_TOKEN}. */
        UNAUTHORIZED,
        /** The repository does not exist (HTTP 404, or the hub says so). */
        REPO_NOT_FOUND,
        /** The revision (branch, tag or commit) does not exist. */
        REVISION_NOT_FOUND,
        /** The repository exists but has no such file at that revision. */
        FILE_NOT_FOUND,
        /** The endpoint could not be reached, or the transfer broke off. */
        NETWORK,
        /** The server answered in a way the hub protocol does not allow (missing headers, bad status). */
        PROTOCOL,
        /** Reading or writing the local cache failed. */
        IO
    }

    private final Kind kind;

    /** An exception of {@code kind} with {@code message}. */
    public HubException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    /** An exception of {@code kind} with {@code message} and {@code cause}. */
    public HubException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    /** What went wrong. */
    public Kind kind() {
        return kind;
    }
}
