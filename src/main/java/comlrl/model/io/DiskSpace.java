package comlrl.model.io;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Free-space checks before large writes, so that a full disk is a clear error before anything is
 * written rather than a failure halfway through a checkpoint.
 *
 * <p>The check compares the bytes about to be written with {@code FileStore.getUsableSpace()} of
 * the directory written into. It is a first line only: another process may fill the disk
 * meanwhile, and writes themselves still fail with an {@code IOException} ("No space left on
 * device"), never a crash, because every file is written with ordinary {@code write} calls.
 */
public final class DiskSpace {
    /** Tells how many bytes can be written under a directory; replaceable by tests. */
    interface Probe {
        long usableBytes(Path dir) throws IOException;
    }

    static final Probe FILE_STORE = dir -> Files.getFileStore(dir).getUsableSpace();
    static volatile Probe probe = FILE_STORE;

    private DiskSpace() {
    }

    /** Bytes writable under {@code dir} (an existing directory), or -1 when the file system cannot tell. */
    public static long usableBytes(Path dir) {
        try {
            return probe.usableBytes(dir);
        } catch (IOException | SecurityException e) {
            return -1;
        }
    }

    /**
     * Fails with an {@link UncheckedIOException} naming {@code dir}, the bytes needed and the bytes
     * free when fewer than {@code bytes} bytes can be written under {@code dir}.
     *
     * @param what what is being written, for the message ("the weights of ...")
     */
    public static void require(Path dir, long bytes, String what) {
        long free = usableBytes(dir);
        if (free >= 0 && free < bytes) {
            String message = "Not enough disk space to write " + what + " in " + dir + ": it needs "
                    + describe(bytes) + " but only " + describe(free) + " are free there. Free some space or write "
                    + "to another file system; nothing was written.";
            throw new UncheckedIOException(message, new IOException(message));
        }
    }

    /** {@code 1234567 bytes (1.2 MB)}. */
    static String describe(long bytes) {
        if (bytes < 1000) {
            return bytes + " bytes";
        }
        String[] units = {"kB", "MB", "GB", "TB", "PB"};
        double v = bytes;
        int u = -1;
        while (v >= 1000 && u < units.length - 1) {
            v /= 1000;
            u++;
        }
        return bytes + " bytes (" + String.format(Locale.ROOT, "%.1f", v) + " " + units[u] + ")";
    }
}
