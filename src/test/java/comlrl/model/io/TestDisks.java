package comlrl.model.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Disk conditions for tests of writing code anywhere in the project: a file system that reports
 * little free space, and one that fills up in the middle of a write (the bytes past the limit go to
 * {@code /dev/full}, so the error is the kernel's own "No space left on device").
 */
public final class TestDisks {
    /** Undoes a simulated condition. */
    public interface Restore extends AutoCloseable {
        @Override
        void close();
    }

    private TestDisks() {
    }

    /** Until closed, every directory reports {@code bytes} free to {@link DiskSpace}. */
    public static Restore freeSpace(long bytes) {
        DiskSpace.probe = dir -> bytes;
        return () -> DiskSpace.probe = DiskSpace.FILE_STORE;
    }

    /**
     * Until closed, every file written through {@link Safetensors} (weights, {@code config.json}
     * of a model) accepts {@code okBytes} bytes in total and then fails as a full disk does. The
     * free-space check is bypassed (it would otherwise be the one to fail).
     */
    public static Restore fullAfter(long okBytes) {
        long[] left = {okBytes};
        DiskSpace.probe = dir -> Long.MAX_VALUE;
        Safetensors.opener = tmp -> new FillingChannel(Safetensors.FILES.open(tmp), left);
        return () -> {
            Safetensors.opener = Safetensors.FILES;
            DiskSpace.probe = DiskSpace.FILE_STORE;
        };
    }

    /**
     * Until closed, every file written through {@link Safetensors} under {@code dir} fails at its
     * first byte as on a full disk, while files written elsewhere (a checkpoint directory beside it)
     * are written as usual. The free-space check is bypassed.
     */
    public static Restore fullUnder(Path dir) {
        Path full = dir.toAbsolutePath().normalize();
        DiskSpace.probe = d -> Long.MAX_VALUE;
        Safetensors.opener = tmp -> tmp.toAbsolutePath().normalize().startsWith(full)
                ? filling(Safetensors.FILES.open(tmp), 0) : Safetensors.FILES.open(tmp);
        return () -> {
            Safetensors.opener = Safetensors.FILES;
            DiskSpace.probe = DiskSpace.FILE_STORE;
        };
    }

    /**
     * {@code file} that accepts {@code okBytes} bytes and then fails as a full disk does (for the
     * writers of other packages, which open their files through hooks of their own).
     */
    public static WritableByteChannel filling(WritableByteChannel file, long okBytes) {
        return new FillingChannel(file, new long[] {okBytes});
    }

    /** A process id that no live process has: that of a process that has just exited. */
    public static long deadPid() {
        try {
            Process p = new ProcessBuilder("true").start();
            p.waitFor();
            return p.pid();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Writes to the real file until the budget is spent, then to /dev/full. */
    private static final class FillingChannel implements WritableByteChannel {
        private final WritableByteChannel file;
        private final long[] left;

        FillingChannel(WritableByteChannel file, long[] left) {
            this.file = file;
            this.left = left;
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            synchronized (left) {
                if (left[0] > 0) {
                    int n = (int) Math.min(left[0], src.remaining());
                    ByteBuffer part = src.duplicate();
                    part.limit(part.position() + n);
                    int written = file.write(part);
                    src.position(src.position() + written);
                    left[0] -= written;
                    return written;
                }
            }
            try (FileChannel full = FileChannel.open(Path.of("/dev/full"), StandardOpenOption.WRITE)) {
                return full.write(src);
            }
        }

        @Override
        public boolean isOpen() {
            return file.isOpen();
        }

        @Override
        public void close() throws IOException {
            file.close();
        }
    }
}
