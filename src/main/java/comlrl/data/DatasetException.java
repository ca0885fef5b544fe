package comlrl.data;

import java.nio.file.Path;

/**
 * A task set could not be built or read: a malformed file, columns of different lengths, a bad
 * split size, a file that does not exist. The message names the file and the line or row where
 * that applies, and says how to fix it.
 */
public final class DatasetException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** A problem not tied to one file (e.g. columns of different lengths). */
    public DatasetException(String message) {
        super(message);
    }

    /** A problem not tied to one file, with its cause. */
    public DatasetException(String message, Throwable cause) {
        super(message, cause);
    }

    /** {@code "<file> line <n>: <problem>"}. */
    static DatasetException atLine(Path file, long line, String problem) {
        return new DatasetException(file + " line " + line + ": " + problem);
    }

    /** {@code "<file> line <n>: <problem>"}, with its cause. */
    static DatasetException atLine(Path file, long line, String problem, Throwable cause) {
        return new DatasetException(file + " line " + line + ": " + problem, cause);
    }

    /** {@code "<file>: <problem>"}. */
    static DatasetException inFile(Path file, String problem) {
        return new DatasetException(file + ": " + problem);
    }

    /** {@code "<file>: <problem>"}, with its cause. */
    static DatasetException inFile(Path file, String problem, Throwable cause) {
        return new DatasetException(file + ": " + problem, cause);
    }
}
