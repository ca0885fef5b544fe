package comlrl.utils;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The process's resident memory (VmRSS of /proc/self/status), for tests that memory stays flat. */
public final class ResidentMemory {
    private ResidentMemory() {}

    /** RSS after a full GC, so Java-heap churn does not count as native growth. */
    public static long settledBytes() {
        System.gc();
        System.runFinalization();
        System.gc();
        return bytes();
    }

    /** RSS now, in bytes. */
    public static long bytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }
}
