package comlrl.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.logging.EventFileReader.CorruptRecord;
import comlrl.logging.EventFileReader.Event;
import comlrl.logging.EventFileReader.Scalar;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TensorBoardSinkTest {
    /** A logged scalar as a reader sees it. */
    record Point(String tag, long step, float value) {
    }

    private static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void maskedCrc32cMatchesHandWorkedGoldens() {
        // CRC-32C("123456789") = 0xE3069283 (the CRC catalogue's check value). Mask, worked by hand:
        //   crc >>> 15          = 0xE306 << 1 | 1 (top bit of 0x9283)     = 0x0001C60D
        //   crc << 17           = (0x9283 & 0x7FFF) << 17 = 0x1283 << 17   = 0x25060000
        //   rotated             = 0x2507C60D
        //   + 0xA282EAD8        = 0xC78AB0E5  (0xC60D + 0xEAD8 = 0x1B0E5, carry 1; 0x2507 + 0xA282 + 1 = 0xC78A)
        byte[] check = ascii("123456789");
        assertThat(EventFileReader.crc32c(check, 0, check.length)).isEqualTo(0xE3069283);
        assertThat(TensorBoardSink.maskedCrc32c(check, 0, check.length)).isEqualTo(0xC78AB0E5);
        assertThat(EventFileReader.masked(0xE3069283)).isEqualTo(0xC78AB0E5);

        // RFC 3720 B.4: 32 zero bytes have CRC-32C 0x8A9136AA. Mask by hand:
        //   >>> 15 = 0x8A91 << 1 | 0 = 0x00011522;  << 17 = 0x36AA << 17 = 0x6D540000;  rotated 0x6D551522
        //   + 0xA282EAD8 = 0x0FD7FFFA  (0x1522 + 0xEAD8 = 0xFFFA; 0x6D55 + 0xA282 = 0x10FD7, mod 2^16 0x0FD7)
        byte[] zeros = new byte[32];
        assertThat(EventFileReader.crc32c(zeros, 0, 32)).isEqualTo(0x8A9136AA);
        assertThat(TensorBoardSink.maskedCrc32c(zeros, 0, 32)).isEqualTo(0x0FD7FFFA);

        // The data checksum of a record in a real TensorFlow event file, Event{file_version: "CRC test, one two"}.
        byte[] tfRecordData = new byte[19];
        tfRecordData[0] = 0x1A;
        tfRecordData[1] = 0x11;
        System.arraycopy(ascii("CRC test, one two"), 0, tfRecordData, 2, 17);
        assertThat(TensorBoardSink.maskedCrc32c(tfRecordData, 0, 19)).isEqualTo(0x5794D08A);
        assertThat(EventFileReader.masked(EventFileReader.crc32c(tfRecordData, 0, 19))).isEqualTo(0x5794D08A);
    }

    @Test
    void eventsAreHandEncodedProtobuf() {
        // 1.5 as a double is 0x3FF8000000000000, little-endian 00 00 00 00 00 00 F8 3F; 1.0f is 0x3F800000.
        byte[] wallTime = bytes(0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F); // field 1, wire type 1 (fixed64)
        // Event{wall_time 1.5, step 5, summary{value{tag "a", simple_value 1.0}}}:
        //   10 05            step: field 2, wire type 0 (varint), 5
        //   2A 0A            summary: field 5, wire type 2, 10 bytes:
        //     0A 08            value: field 1, wire type 2, 8 bytes:
        //       0A 01 61         tag: field 1, wire type 2, "a"
        //       15 00 00 80 3F   simple_value: field 2, wire type 5 (fixed32), 1.0f
        assertThat(TensorBoardSink.scalarEvent(1.5, 5, "a", 1.0f)).isEqualTo(concat(wallTime,
                bytes(0x10, 0x05, 0x2A, 0x0A, 0x0A, 0x08, 0x0A, 0x01, 0x61, 0x15, 0x00, 0x00, 0x80, 0x3F)));
        // step 300 as a varint: 300 = 0b10_0101100 -> AC 02.
        assertThat(TensorBoardSink.scalarEvent(1.5, 300, "a", 1.0f)).startsWith(concat(wallTime, bytes(0x10, 0xAC, 0x02)));
        // Event{wall_time 1.5, file_version "brain.Event:2"}: 1A 0D = field 3, wire type 2, 13 bytes.
        assertThat(TensorBoardSink.fileVersionEvent(1.5)).isEqualTo(concat(wallTime, bytes(0x1A, 0x0D), ascii("brain.Event:2")));
        // Event{wall_time 1.5, step 7, session_log{status START = 1}}: 3A 02 = field 7, wire type 2, 2 bytes; 08 01.
        assertThat(TensorBoardSink.sessionStartEvent(1.5, 7)).isEqualTo(concat(wallTime, bytes(0x10, 0x07, 0x3A, 0x02, 0x08, 0x01)));
    }

    @Test
    void recordFramesDataWithLengthAndBothChecksums() {
        byte[] data = TensorBoardSink.fileVersionEvent(1.5); // 24 bytes
        byte[] record = TensorBoardSink.record(data);
        assertThat(record).hasSize(8 + 4 + 24 + 4);
        byte[] length = bytes(24, 0, 0, 0, 0, 0, 0, 0);
        assertThat(record).startsWith(length);
        int lengthCrc = EventFileReader.masked(EventFileReader.crc32c(length, 0, 8));
        int dataCrc = EventFileReader.masked(EventFileReader.crc32c(data, 0, 24));
        assertThat(Arrays.copyOfRange(record, 8, 12)).isEqualTo(littleEndian(lengthCrc));
        assertThat(Arrays.copyOfRange(record, 12, 36)).isEqualTo(data);
        assertThat(Arrays.copyOfRange(record, 36, 40)).isEqualTo(littleEndian(dataCrc));
    }

    @Test
    void readsBackEveryScalarWithItsTagAndEnvStep(@TempDir Path dir) throws Exception {
        List<Map<String, Double>> events = List.of(
                ordered("turn_1/reward_mean", 0.25, "loss", -1.5e-3, "eval/turn_1/reward_mean", 1e30),
                ordered("turn_1/reward_mean", Double.NaN, "loss", Double.POSITIVE_INFINITY, "grad_norm", Double.NEGATIVE_INFINITY),
                ordered("turn_1/reward_mean", 0.1, "skipped", null, "loss", 3.0));
        long[] steps = {4, 8, 1L << 40};
        double before = System.currentTimeMillis() / 1000.0;
        try (TensorBoardSink sink = new TensorBoardSink(dir)) {
            for (int i = 0; i < events.size(); i++) {
                sink.log(steps[i], events.get(i));
            }
        }
        double after = System.currentTimeMillis() / 1000.0;

        List<Event> read = EventFileReader.readDir(dir);
        assertThat(EventFileReader.eventFiles(dir)).hasSize(1);
        assertThat(read.get(0).fileVersion()).isEqualTo("brain.Event:2");
        assertThat(read.get(0).scalars()).isEmpty();
        assertThat(read.get(1).sessionStatus()).as("SessionLog.START before the first scalar").isEqualTo(1);
        assertThat(read.get(1).step()).isEqualTo(4);
        List<Point> expected = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            long step = steps[i];
            events.get(i).forEach((tag, v) -> {
                if (v != null) {
                    expected.add(new Point(tag, step, v.floatValue()));
                }
            });
        }
        List<Point> got = new ArrayList<>();
        for (Event e : read.subList(2, read.size())) {
            assertThat(e.fileVersion()).isNull();
            assertThat(e.sessionStatus()).isNull();
            assertThat(e.scalars()).as("one tag per event").hasSize(1);
            got.add(new Point(e.scalars().get(0).tag(), e.step(), e.scalars().get(0).value()));
        }
        assertThat(got).containsExactlyElementsOf(expected); // float NaN equals itself in a record's equals
        for (Event e : read) {
            assertThat(e.wallTime()).isBetween(before - 1e-3, after + 1e-3);
        }
    }

    @Test
    void fileNameFollowsTensorBoardNaming(@TempDir Path dir) throws Exception {
        long now = System.currentTimeMillis() / 1000;
        Path file;
        try (TensorBoardSink sink = new TensorBoardSink(dir)) {
            file = sink.file();
        }
        assertThat(file.getParent()).isEqualTo(dir);
        Matcher m = Pattern.compile("events\\.out\\.tfevents\\.(\\d+)\\.(.+)\\.(\\d+)\\.(\\d+)")
                .matcher(file.getFileName().toString());
        assertThat(m.matches()).as(file.getFileName().toString()).isTrue();
        assertThat(Long.parseLong(m.group(1))).isBetween(now, now + 5);
        assertThat(Long.parseLong(m.group(3))).isEqualTo(ProcessHandle.current().pid());
    }

    @Test
    void eachLoggedEventIsInTheFileBeforeClose(@TempDir Path dir) throws Exception {
        try (TensorBoardSink sink = new TensorBoardSink(dir)) {
            assertThat(EventFileReader.read(Files.readAllBytes(sink.file()))).hasSize(1);
            sink.log(1, Map.of("a", 1.0, "b", 2.0));
            assertThat(EventFileReader.read(Files.readAllBytes(sink.file()))).hasSize(4); // + START + 2 scalars
            sink.log(2, Map.of("a", 3.0));
            List<Event> read = EventFileReader.read(Files.readAllBytes(sink.file()));
            assertThat(read).hasSize(5);
            assertThat(read.get(4).scalars()).containsExactly(new Scalar("a", 3.0f));
        }
    }

    @Test
    void everyCorruptedByteFailsAChecksum(@TempDir Path dir) throws Exception {
        Path file;
        try (TensorBoardSink sink = new TensorBoardSink(dir)) {
            sink.log(3, ordered("x", 0.5, "y", -2.0));
            file = sink.file();
        }
        byte[] good = Files.readAllBytes(file);
        assertThat(EventFileReader.read(good)).hasSize(4);
        for (int i = 0; i < good.length; i++) {
            byte[] bad = good.clone();
            bad[i] ^= 0x10;
            assertThatThrownBy(() -> EventFileReader.read(bad)).as("byte %d flipped", i)
                    .isInstanceOf(CorruptRecord.class).hasMessageContaining("checksum mismatch");
        }
    }

    @Test
    void aResumedRunWritesANewFileThatSortsLastAndCanPurge(@TempDir Path dir) throws Exception {
        // Another writer's file, stamped in the future: ours must still sort after it.
        long future = System.currentTimeMillis() / 1000 + 100;
        Files.write(dir.resolve("events.out.tfevents." + future + ".elsewhere"), new byte[0]);
        try (TensorBoardSink first = new TensorBoardSink(dir)) {
            for (long step = 1; step <= 4; step++) {
                first.log(step, Map.of("loss", (double) step));
            }
        }
        Path second;
        try (TensorBoardSink resumed = new TensorBoardSink(dir)) {
            resumed.purgeFrom(3);
            resumed.log(3, Map.of("loss", 30.0));
            resumed.log(4, Map.of("loss", 40.0));
            second = resumed.file();
        }
        List<Path> files = EventFileReader.eventFiles(dir);
        assertThat(files).hasSize(3);
        assertThat(files.get(2)).isEqualTo(second);
        assertThat(files.get(1).getFileName().toString()).startsWith("events.out.tfevents." + (future + 1) + ".");
        assertThat(second.getFileName().toString()).startsWith("events.out.tfevents." + (future + 2) + ".");

        List<Event> read = EventFileReader.read(Files.readAllBytes(second));
        assertThat(read.get(0).fileVersion()).isEqualTo("brain.Event:2");
        assertThat(read.get(1).sessionStatus()).isEqualTo(1);
        assertThat(read.get(1).step()).isEqualTo(3);
        assertThat(read).hasSize(4).as("no second START").filteredOn(e -> e.sessionStatus() != null).hasSize(1);
        assertThat(read.subList(2, 4)).extracting(Event::step).containsExactly(3L, 4L);
        List<Event> firstRun = EventFileReader.read(Files.readAllBytes(files.get(1)));
        assertThat(firstRun).hasSize(6);
        assertThat(firstRun.get(1).sessionStatus()).isEqualTo(1);
        assertThat(firstRun.get(1).step()).isEqualTo(1);
    }

    @Test
    void closeTwiceIsFineAndLoggingAfterCloseFails(@TempDir Path dir) {
        TensorBoardSink sink = new TensorBoardSink(dir);
        sink.close();
        sink.close();
        assertThatThrownBy(() -> sink.log(1, Map.of("a", 1.0))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void aFailedWriteIsReportedOnceDropsTheRestAndFailsTheCloseNamingTheFile(@TempDir Path dir) throws Exception {
        java.io.ByteArrayOutputStream console = new java.io.ByteArrayOutputStream();
        TensorBoardSink sink;
        try (comlrl.model.io.TestDisks.Restore full = TestSinks.tensorBoardFullAfter(TestSinks.tensorBoardHeaderBytes())) {
            sink = new TensorBoardSink(dir, new java.io.PrintStream(console, true, java.nio.charset.StandardCharsets.UTF_8));
        }
        sink.log(5, Map.of("loss", 1.0)); // the disk is full from here on: training goes on
        sink.log(6, Map.of("loss", 2.0));
        assertThat(sink.failed()).isTrue();
        String text = console.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(text.split(java.util.regex.Pattern.quote(sink.file().toString()), -1)).as(text).hasSize(2);
        assertThat(text).contains("No space left on device").contains("from env_step 5 on are dropped");
        assertThatThrownBy(sink::close).isInstanceOf(java.io.UncheckedIOException.class)
                .hasMessageContaining(sink.file().toString()).hasMessageContaining("No space left on device")
                .hasMessageContaining("from env_step 5 on");
        sink.close(); // reported once
        assertThat(EventFileReader.read(Files.readAllBytes(sink.file()))).as("the header stays readable").hasSize(1);
    }

    @Test
    void aMetricsLoggerClosesEverySinkThenThrowsTheFirstFailure(@TempDir Path dir) throws Exception {
        TensorBoardSink tb;
        try (comlrl.model.io.TestDisks.Restore full = TestSinks.tensorBoardFullAfter(TestSinks.tensorBoardHeaderBytes())) {
            tb = new TensorBoardSink(dir, new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
        }
        boolean[] closed = {false};
        MetricSink after = new MetricSink() {
            @Override
            public void log(long envStep, Map<String, Double> metrics) {
            }

            @Override
            public void close() {
                closed[0] = true;
            }
        };
        comlrl.logging.MetricsLogger logger = new comlrl.logging.MetricsLogger(dir, List.of(tb, after), 1, 0);
        logger.log(1, Map.of("loss", 1.0));
        assertThat(Files.readAllLines(dir.resolve("metrics.jsonl"))).hasSize(1); // the other sinks go on
        assertThatThrownBy(logger::close).hasMessageContaining(tb.file().toString());
        assertThat(closed[0]).as("the sinks after the failing one are closed too").isTrue();
    }

    /** A map that keeps the order given (values may be null). */
    static Map<String, Double> ordered(Object... keyValues) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], (Double) keyValues[i + 1]);
        }
        return m;
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    private static byte[] littleEndian(int v) {
        return bytes(v & 0xFF, (v >>> 8) & 0xFF, (v >>> 16) & 0xFF, (v >>> 24) & 0xFF);
    }
}
