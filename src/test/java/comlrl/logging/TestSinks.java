package comlrl.logging;

import comlrl.model.io.TestDisks;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

/** Disk conditions for the metric sinks' files, as {@link TestDisks} makes them for model files. */
public final class TestSinks {
    private TestSinks() {
    }

    /** The bytes a TensorBoard event file holds before its first logged event (its file_version record). */
    public static long tensorBoardHeaderBytes() {
        return TensorBoardSink.record(TensorBoardSink.fileVersionEvent(0)).length;
    }

    /**
     * Until closed, every TensorBoard event file opened accepts {@code okBytes} bytes and then fails as
     * a full disk does ("No space left on device").
     */
    public static TestDisks.Restore tensorBoardFullAfter(long okBytes) {
        TensorBoardSink.opener = file -> Channels.newOutputStream(TestDisks.filling(
                FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), okBytes));
        return () -> TensorBoardSink.opener = TensorBoardSink.FILES;
    }
}
