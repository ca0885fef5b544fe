package comlrl.logging;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Writes metric events as a TensorBoard event file in a directory: {@code tensorboard --logdir DIR}
 * shows every metric key as a scalar chart (tag = key, step = env_step). Give it the run directory,
 * so that {@code tensorboard --logdir PARENT} lists each run under its own directory name.
 *
 * <p>The file is {@code events.out.tfevents.<unix seconds>.<hostname>.<pid>.<n>}, a sequence of
 * TFRecords, each holding one {@code tensorboard.Event} protobuf:
 * <ol>
 *   <li>{@code Event{wall_time, file_version: "brain.Event:2"}};
 *   <li>{@code Event{wall_time, step, session_log: SessionLog{status: START}}} before the first scalar
 *       (see resuming below);
 *   <li>per metric key of each {@link #log} call, {@code Event{wall_time, step: env_step,
 *       summary: Summary{value: [Value{tag: key, simple_value: (float) value}]}}}.
 * </ol>
 * Values are stored as float32 (TensorBoard's {@code simple_value}). NaN and infinities are written
 * as they are, so a diverging loss shows in TensorBoard; null values are skipped.
 *
 * <p>Flushing: each {@link #log} call's records go to the file in one write at its end (to the
 * operating system, without fsync), so a crash of the process loses nothing logged before it.
 *
 * <p>Write failures (a full disk): a file that cannot be opened or started fails the constructor,
 * before training. A write that fails later does not stop training: the sink says so once on the
 * console, naming the file, drops its events from then on, and {@link #close()} throws an
 * {@link UncheckedIOException} naming the file, so the run still ends with an error, after its last
 * checkpoint and final save (a TensorBoard file is a copy of {@code metrics.jsonl}, whose own write
 * failures stop training at once).
 *
 * <p>Resuming: every sink starts a new file, never appending to an old one (a file cut off
 * mid-record by a crash would stop TensorBoard's reader there). The name sorts after every event
 * file already in the directory (the seconds are moved on past theirs if needed), and TensorBoard
 * reads a directory's files in name order as one run. Before its first scalar a sink writes
 * {@code Event{step: s, session_log: SessionLog{status: START}}}, with {@code s} its first logged
 * env_step, or the step given to {@link #purgeFrom} if that came first. TensorBoard's Python readers
 * ({@code EventAccumulator}, and the server's loader with {@code --load_fast=false}) take a START
 * after a run's first as a restart and drop the points read before it at steps {@code >= s}; the
 * default data server (in Rust) ignores it, but when a tag's step goes back to {@code s} it drops
 * that tag's points at steps {@code >= s}. So the points the interrupted run logged after its checkpoint give way to the resumed
 * run's. A resumed run that calls {@link #purgeFrom} with its checkpoint's env_step + 1 before it logs
 * also hides, in the Python readers, the interrupted run's points between the checkpoint and its own
 * first logged step (such as an evaluation it does not repeat). (The {@code metrics.jsonl} sink,
 * instead, cuts its own file back.)
 */
public final class TensorBoardSink implements MetricSink {
    private static final String PREFIX = "events.out.tfevents.";
    private static final String FILE_VERSION = "brain.Event:2";
    /** Tells apart the sinks one process opens in the same second. */
    private static final AtomicInteger OPENED = new AtomicInteger();

    /** Opens the event file; tests substitute streams that fail like a full disk. */
    interface Opener {
        OutputStream open(Path file) throws IOException;
    }

    static final Opener FILES = file -> Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    static volatile Opener opener = FILES;

    private final Path file;
    private final PrintStream console;
    private OutputStream out;
    /** Whether this file has its SessionLog.START yet. */
    private boolean started;
    private boolean closed;
    /** The first failed write (events are dropped from then on), and the env_step it was for. */
    private IOException failure;
    private long failedAt;

    /** {@link #TensorBoardSink(Path, PrintStream)} reporting a failed write on {@code System.err}. */
    public TensorBoardSink(Path dir) {
        this(dir, System.err);
    }

    /**
     * Opens a new event file in {@code dir} (created if missing) and writes its file_version event.
     *
     * @param console where a later write failure is reported (once)
     * @throws UncheckedIOException naming the directory or file when either cannot be written
     */
    public TensorBoardSink(Path dir, PrintStream console) {
        this.console = console;
        try {
            Files.createDirectories(dir);
            this.file = newEventFile(dir, System.currentTimeMillis() / 1000);
            this.out = new BufferedOutputStream(opener.open(file), 1 << 16);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot open a TensorBoard event file in " + dir + ": " + e.getMessage(), e);
        }
        try {
            out.write(record(fileVersionEvent(wallTime())));
            out.flush();
        } catch (IOException e) {
            try {
                out.close();
            } catch (IOException closing) {
                e.addSuppressed(closing);
            }
            throw new UncheckedIOException("Cannot write the first event to " + file + ": " + e.getMessage(), e);
        }
    }

    /** The event file this sink writes. */
    public Path file() {
        return file;
    }

    /**
     * Writes {@code SessionLog{status: START}} at {@code step}: TensorBoard's Python readers then drop
     * the points they read before it (this directory's earlier files, and this file's) at steps
     * {@code >= step}. A resumed run calls it with its checkpoint's env_step + 1 before it logs.
     */
    public synchronized void purgeFrom(long step) {
        write(step, record(sessionStartEvent(wallTime(), step)));
        started = true;
    }

    @Override
    public synchronized void log(long envStep, Map<String, Double> metrics) {
        double wallTime = wallTime();
        ByteArrayOutputStream records = new ByteArrayOutputStream();
        if (!started) {
            records.writeBytes(record(sessionStartEvent(wallTime, envStep)));
        }
        metrics.forEach((tag, value) -> {
            if (value != null) {
                records.writeBytes(record(scalarEvent(wallTime, envStep, tag, value.floatValue())));
            }
        });
        write(envStep, records.toByteArray());
        started = true;
    }

    /** Whether a write failed (events are being dropped; {@link #close()} will throw). */
    public synchronized boolean failed() {
        return failure != null;
    }

    private void write(long envStep, byte[] bytes) {
        if (closed) {
            throw new IllegalStateException("this TensorBoard sink is closed: " + file);
        }
        if (failure != null) {
            return; // reported once; close() fails the run
        }
        try {
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            failure = e;
            failedAt = envStep;
            closeQuietly();
            console.println("TensorBoard: cannot write " + file + " (" + describe(e) + "); its events from env_step "
                    + envStep + " on are dropped. Training goes on (metrics.jsonl keeps every event); the run will end "
                    + "with an error.");
        }
    }

    /**
     * Closes the file; idempotent.
     *
     * @throws UncheckedIOException naming the file, the first time, when a write or the close failed
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (out != null) {
            try {
                out.close();
            } catch (IOException e) {
                if (failure == null) {
                    failure = e;
                    failedAt = -1;
                }
            } finally {
                out = null;
            }
        }
        if (failure != null) {
            throw new UncheckedIOException("Cannot write TensorBoard events to " + file + ": " + describe(failure)
                    + (failedAt >= 0 ? "; the events from env_step " + failedAt + " on are missing from it" : "")
                    + " (metrics.jsonl has every event). Free some space, or set tensorboard: false", failure);
        }
    }

    private void closeQuietly() {
        try {
            out.close();
        } catch (IOException e) {
            failure.addSuppressed(e);
        } finally {
            out = null;
        }
    }

    private static String describe(IOException e) {
        return e.getMessage() == null || e.getMessage().isBlank() ? e.getClass().getSimpleName() : e.getMessage();
    }

    private static double wallTime() {
        return System.currentTimeMillis() / 1000.0;
    }

    /**
     * {@code dir/events.out.tfevents.<seconds>.<host>.<pid>.<n>}, with {@code seconds} moved past those
     * of the directory's existing event files so that this one sorts last.
     */
    private static Path newEventFile(Path dir, long seconds) throws IOException {
        long latest = -1;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                latest = Math.max(latest, secondsInName(p.getFileName().toString()));
            }
        }
        long at = Math.max(seconds, latest + 1);
        String suffix = "." + hostname() + "." + ProcessHandle.current().pid() + ".";
        Path file;
        do {
            file = dir.resolve(PREFIX + at + suffix + OPENED.getAndIncrement());
        } while (Files.exists(file));
        return file;
    }

    /** The seconds in an event file's name, or -1 for any other file. */
    private static long secondsInName(String name) {
        if (!name.startsWith(PREFIX)) {
            return -1;
        }
        int end = name.indexOf('.', PREFIX.length());
        String digits = name.substring(PREFIX.length(), end < 0 ? name.length() : end);
        return !digits.isEmpty() && digits.chars().allMatch(Character::isDigit) && digits.length() < 19
                ? Long.parseLong(digits) : -1;
    }

    private static String hostname() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "localhost";
        }
        host = host.replaceAll("[^A-Za-z0-9._-]", "_");
        return host.isEmpty() ? "localhost" : host;
    }

    // ---------------------------------------------------------------------------------------------
    // Encoding. Protobuf wire format: each field is key = (field_number << 3 | wire_type) as a varint,
    // then the value; wire types: 0 varint, 1 fixed64 (little-endian), 2 length-delimited (varint
    // length, bytes), 5 fixed32 (little-endian). Fields used, from TensorBoard's event.proto and
    // summary.proto:
    //   Event:         wall_time = 1 (double, fixed64)   step = 2 (int64, varint)
    //                  file_version = 3 (string)          summary = 5 (Summary)
    //                  session_log = 7 (SessionLog)
    //   Summary:       value = 1 (repeated Summary.Value)
    //   Summary.Value: tag = 1 (string)                   simple_value = 2 (float, fixed32)
    //   SessionLog:    status = 1 (enum, varint; START = 1)

    /** {@code Event{wall_time, file_version: "brain.Event:2"}}. */
    static byte[] fileVersionEvent(double wallTime) {
        return new Proto().fixed64(1, Double.doubleToRawLongBits(wallTime))
                .bytes(3, FILE_VERSION.getBytes(StandardCharsets.UTF_8)).toByteArray();
    }

    /** {@code Event{wall_time, step, summary: Summary{value: [Value{tag, simple_value}]}}}. */
    static byte[] scalarEvent(double wallTime, long step, String tag, float value) {
        byte[] summaryValue = new Proto().bytes(1, tag.getBytes(StandardCharsets.UTF_8))
                .fixed32(2, Float.floatToRawIntBits(value)).toByteArray();
        byte[] summary = new Proto().bytes(1, summaryValue).toByteArray();
        return new Proto().fixed64(1, Double.doubleToRawLongBits(wallTime)).varint(2, step).bytes(5, summary)
                .toByteArray();
    }

    /** {@code Event{wall_time, step, session_log: SessionLog{status: START}}}. */
    static byte[] sessionStartEvent(double wallTime, long step) {
        byte[] sessionLog = new Proto().varint(1, 1).toByteArray();
        return new Proto().fixed64(1, Double.doubleToRawLongBits(wallTime)).varint(2, step).bytes(7, sessionLog)
                .toByteArray();
    }

    /**
     * One TFRecord around {@code data}:
     * {@code uint64 length (LE) | uint32 masked_crc32c(length bytes) | data | uint32 masked_crc32c(data)},
     * the checksums little-endian too.
     */
    static byte[] record(byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(8 + 4 + data.length + 4).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(data.length);
        b.putInt(maskedCrc32c(b.array(), 0, 8));
        b.put(data);
        b.putInt(maskedCrc32c(data, 0, data.length));
        return b.array();
    }

    /**
     * CRC-32C (Castagnoli) of the bytes, masked as TFRecords store it:
     * {@code masked = ((crc >>> 15) | (crc << 17)) + 0xa282ead8} (mod 2^32).
     */
    static int maskedCrc32c(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        int c = (int) crc.getValue();
        return ((c >>> 15) | (c << 17)) + 0xa282ead8;
    }

    /** A protobuf message being written: fields appended in the order called. */
    private static final class Proto {
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream();

        private void key(int field, int wireType) {
            rawVarint((long) field << 3 | wireType);
        }

        /** Base-128, least significant group first, high bit set on all but the last byte. */
        private void rawVarint(long v) {
            while ((v & ~0x7FL) != 0) {
                buf.write((int) (v & 0x7F) | 0x80);
                v >>>= 7;
            }
            buf.write((int) v);
        }

        Proto varint(int field, long v) {
            key(field, 0);
            rawVarint(v);
            return this;
        }

        Proto fixed64(int field, long bits) {
            key(field, 1);
            for (int i = 0; i < 8; i++) {
                buf.write((int) (bits >>> (8 * i)) & 0xFF);
            }
            return this;
        }

        Proto bytes(int field, byte[] value) {
            key(field, 2);
            rawVarint(value.length);
            buf.writeBytes(value);
            return this;
        }

        Proto fixed32(int field, int bits) {
            key(field, 5);
            for (int i = 0; i < 4; i++) {
                buf.write((bits >>> (8 * i)) & 0xFF);
            }
            return this;
        }

        byte[] toByteArray() {
            return buf.toByteArray();
        }
    }
}
