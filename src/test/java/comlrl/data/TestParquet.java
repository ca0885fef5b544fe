package comlrl.data;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.IntFunction;
import java.util.stream.LongStream;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;

/** Parquet files of task rows {@code {prompt, i}} for tests, written with Parquet's example writer. */
public final class TestParquet {
    static final MessageType SCHEMA = MessageTypeParser.parseMessageType(
            "message task { required binary prompt (STRING); required int64 i; }");

    private TestParquet() {}

    /** Rows {@code {prompt: "p<i>", i}} for {@code i} in {@code [from, to)}, in row groups of about {@code rowGroupBytes}. */
    public static Path write(Path file, int from, int to, long rowGroupBytes) {
        return write(file, from, to, rowGroupBytes, i -> "p" + i);
    }

    /** Rows {@code {prompt: prompts(i), i}} for {@code i} in {@code [from, to)}, Snappy-compressed. */
    static Path write(Path file, int from, int to, long rowGroupBytes, IntFunction<String> prompts) {
        SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            try (ParquetWriter<Group> writer = ExampleParquetWriter.builder(new LocalOutputFile(file))
                    .withType(SCHEMA)
                    .withCompressionCodec(CompressionCodecName.SNAPPY)
                    .withRowGroupSize(rowGroupBytes)
                    .withPageSize((int) Math.min(rowGroupBytes, 64 * 1024))
                    .build()) {
                for (int i = from; i < to; i++) {
                    writer.write(groups.newGroup().append("prompt", prompts.apply(i)).append("i", (long) i));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /** The {@code i} column of the first {@code n} items {@code items} yields (all when fewer). */
    static List<Long> ids(Iterator<TaskItem> items, int n) {
        List<Long> out = new ArrayList<>();
        for (int k = 0; k < n && items.hasNext(); k++) {
            out.add(items.next().getLong("i"));
        }
        return out;
    }

    /** The {@code i} column of all of {@code items}, in one pass. */
    static List<Long> ids(Iterable<TaskItem> items) {
        return ids(items.iterator(), Integer.MAX_VALUE);
    }

    /** {@code from, from + 1, ..., to - 1}. */
    static List<Long> range(long from, long to) {
        return LongStream.range(from, to).boxed().toList();
    }

    /** The number of row groups in {@code file}. */
    static int rowGroups(Path file) {
        try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(file))) {
            return reader.getRowGroups().size();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
