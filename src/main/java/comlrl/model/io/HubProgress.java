package comlrl.model.io;

/**
 * Receives download progress from {@link HubCache}: once when a file's transfer starts
 * ({@code bytesDone == 0}), about every MiB, and once when it completes. Called on the
 * downloading thread; keep it quick.
 */
@FunctionalInterface
public interface HubProgress {
    /** Ignores all progress. */
    HubProgress NONE = (repoId, filename, bytesDone, bytesTotal) -> { };

    /**
     * Progress of one file.
     *
     * @param repoId the repository, e.g. {@code Qwen/Qwen2.5-0.5B}
     * @param filename the file within the repository
     * @param bytesDone bytes received so far
     * @param bytesTotal the file's size, or -1 when the server did not say
     */
    void update(String repoId, String filename, long bytesDone, long bytesTotal);
}
