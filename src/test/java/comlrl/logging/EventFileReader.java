package comlrl.logging;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A TensorBoard event file reader for tests, written apart from {@link TensorBoardSink}: its own
 * bit-by-bit CRC-32C, its own mask and a generic protobuf field walker. Every record's length and
 * data checksums are checked; a mismatch throws {@link CorruptRecord}.
 */
final class EventFileReader {
    /** One decoded {@code tensorboard.Event}: what our sink writes, the rest left null. */
    record Event(double wallTime, long step, String fileVersion, List<Scalar> scalars, Integer sessionStatus) {
    }

    /** One {@code Summary.Value} with a {@code simple_value}. */
    record Scalar(String tag, float value) {
    }

    static final class CorruptRecord extends RuntimeException {
        CorruptRecord(String message) {
            super(message);
        }
    }

    private EventFileReader() {
    }

    /** The event files in {@code dir}, in name order (the order TensorBoard reads them). */
    static List<Path> eventFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().contains("tfevents")).sorted().toList();
        }
    }

    /** Every event of every event file in {@code dir}, files in name order. */
    static List<Event> readDir(Path dir) throws IOException {
        List<Event> all = new ArrayList<>();
        for (Path f : eventFiles(dir)) {
            all.addAll(read(Files.readAllBytes(f)));
        }
        return all;
    }

    /** The events of one file's bytes; the file must end on a record boundary. */
    static List<Event> read(byte[] file) {
        List<Event> events = new ArrayList<>();
        int at = 0;
        int index = 0;
        while (at < file.length) {
            if (file.length - at < 12) {
                throw new CorruptRecord("record " + index + ": " + (file.length - at) + " bytes left, no header");
            }
            long length = littleEndian(file, at, 8);
            int lengthCrc = (int) littleEndian(file, at + 8, 4);
            if (lengthCrc != masked(crc32c(file, at, 8))) {
                throw new CorruptRecord("record " + index + ": length checksum mismatch");
            }
            if (length > file.length - at - 16) {
                throw new CorruptRecord("record " + index + ": length " + length + " past the end of the file");
            }
            int start = at + 12;
            int dataCrc = (int) littleEndian(file, start + (int) length, 4);
            if (dataCrc != masked(crc32c(file, start, (int) length))) {
                throw new CorruptRecord("record " + index + ": data checksum mismatch");
            }
            events.add(decodeEvent(file, start, start + (int) length));
            at = start + (int) length + 4;
            index++;
        }
        return events;
    }

    /** CRC-32C one bit at a time: reflected polynomial 0x82F63B78, initial and final XOR 0xFFFFFFFF. */
    static int crc32c(byte[] b, int offset, int length) {
        int crc = 0xFFFFFFFF;
        for (int i = offset; i < offset + length; i++) {
            crc ^= b[i] & 0xFF;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 1) != 0 ? (crc >>> 1) ^ 0x82F63B78 : crc >>> 1;
            }
        }
        return ~crc;
    }

    /** Rotate right by 15, add 0xa282ead8 (mod 2^32). */
    static int masked(int crc) {
        return Integer.rotateRight(crc, 15) + 0xa282ead8;
    }

    private static long littleEndian(byte[] b, int at, int n) {
        long v = 0;
        for (int i = n - 1; i >= 0; i--) {
            v = (v << 8) | (b[at + i] & 0xFF);
        }
        return v;
    }

    // Protobuf: a field key is (number << 3 | wire type) as a varint.

    private static Event decodeEvent(byte[] b, int from, int to) {
        double wallTime = 0;
        long step = 0;
        String fileVersion = null;
        List<Scalar> scalars = new ArrayList<>();
        Integer status = null;
        for (Field f : fields(b, from, to)) {
            switch (f.number) {
                case 1 -> wallTime = Double.longBitsToDouble(f.expect(1).bits);
                case 2 -> step = f.expect(0).bits;
                case 3 -> fileVersion = f.expect(2).string(b);
                case 5 -> scalars.addAll(decodeSummary(b, f.expect(2).from, f.to));
                case 7 -> status = decodeSessionStatus(b, f.expect(2).from, f.to);
                default -> throw new CorruptRecord("unexpected Event field " + f.number);
            }
        }
        return new Event(wallTime, step, fileVersion, scalars, status);
    }

    private static List<Scalar> decodeSummary(byte[] b, int from, int to) {
        List<Scalar> values = new ArrayList<>();
        for (Field f : fields(b, from, to)) {
            if (f.number != 1) {
                throw new CorruptRecord("unexpected Summary field " + f.number);
            }
            String tag = null;
            Float value = null;
            for (Field g : fields(b, f.expect(2).from, f.to)) {
                switch (g.number) {
                    case 1 -> tag = g.expect(2).string(b);
                    case 2 -> value = Float.intBitsToFloat((int) g.expect(5).bits);
                    default -> throw new CorruptRecord("unexpected Summary.Value field " + g.number);
                }
            }
            if (tag == null || value == null) {
                throw new CorruptRecord("Summary.Value without tag or simple_value");
            }
            values.add(new Scalar(tag, value));
        }
        return values;
    }

    private static int decodeSessionStatus(byte[] b, int from, int to) {
        int status = 0;
        for (Field f : fields(b, from, to)) {
            if (f.number == 1) {
                status = (int) f.expect(0).bits;
            }
        }
        return status;
    }

    /** A field: varint/fixed value in {@code bits}, or a length-delimited payload at {@code [from, to)}. */
    private record Field(int number, int wireType, long bits, int from, int to) {
        Field expect(int type) {
            if (wireType != type) {
                throw new CorruptRecord("field " + number + " has wire type " + wireType + ", expected " + type);
            }
            return this;
        }

        String string(byte[] b) {
            return new String(b, from, to - from, StandardCharsets.UTF_8);
        }
    }

    private static List<Field> fields(byte[] b, int from, int to) {
        List<Field> out = new ArrayList<>();
        int[] at = {from};
        while (at[0] < to) {
            long key = varint(b, at, to);
            int number = (int) (key >>> 3);
            int type = (int) (key & 7);
            switch (type) {
                case 0 -> out.add(new Field(number, type, varint(b, at, to), 0, 0));
                case 1 -> {
                    check(at[0] + 8 <= to, "fixed64 past the end");
                    out.add(new Field(number, type, littleEndian(b, at[0], 8), 0, 0));
                    at[0] += 8;
                }
                case 2 -> {
                    long n = varint(b, at, to);
                    check(n >= 0 && at[0] + n <= to, "length-delimited field past the end");
                    out.add(new Field(number, type, 0, at[0], at[0] + (int) n));
                    at[0] += (int) n;
                }
                case 5 -> {
                    check(at[0] + 4 <= to, "fixed32 past the end");
                    out.add(new Field(number, type, littleEndian(b, at[0], 4), 0, 0));
                    at[0] += 4;
                }
                default -> throw new CorruptRecord("unknown wire type " + type);
            }
        }
        return out;
    }

    private static long varint(byte[] b, int[] at, int to) {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            check(at[0] < to, "varint past the end");
            int x = b[at[0]++] & 0xFF;
            v |= (long) (x & 0x7F) << shift;
            if ((x & 0x80) == 0) {
                return v;
            }
        }
        throw new CorruptRecord("varint longer than 10 bytes");
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new CorruptRecord(message);
        }
    }
}
