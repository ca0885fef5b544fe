package comlrl.data;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.stream.LongStream;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.Util;
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

    /** Rows of string columns (every row holds every column of the first row), Snappy-compressed. */
    public static Path writeStrings(Path file, List<java.util.Map<String, String>> rows) {
        StringBuilder schema = new StringBuilder("message task {");
        rows.get(0).keySet().forEach(c -> schema.append(" required binary ").append(c).append(" (STRING);"));
        MessageType type = MessageTypeParser.parseMessageType(schema.append(" }").toString());
        SimpleGroupFactory groups = new SimpleGroupFactory(type);
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            try (ParquetWriter<Group> writer = ExampleParquetWriter.builder(new LocalOutputFile(file)).withType(type)
                    .withCompressionCodec(CompressionCodecName.SNAPPY).build()) {
                for (java.util.Map<String, String> row : rows) {
                    Group g = groups.newGroup();
                    rows.get(0).keySet().forEach(c -> g.append(c, row.get(c)));
                    writer.write(g);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /**
     * A copy of {@code from} at {@code to} whose first page header (that of the first column chunk
     * of the first row group) and footer were edited: the header re-encoded (the offsets and sizes
     * after it shifted by its change in length), then the footer. What a damaged or hostile writer
     * could produce.
     */
    static Path rewrite(Path from, Path to, Consumer<PageHeader> firstPage, Consumer<FileMetaData> footer) {
        try {
            byte[] bytes = Files.readAllBytes(from);
            int footerLength = ByteBuffer.wrap(bytes, bytes.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
            int footerStart = bytes.length - 8 - footerLength;
            FileMetaData meta = Util.readFileMetaData(new ByteArrayInputStream(bytes, footerStart, footerLength));
            ColumnMetaData firstChunk = meta.getRow_groups().get(0).getColumns().get(0).getMeta_data();
            long start = firstChunk.isSetDictionary_page_offset() ? firstChunk.getDictionary_page_offset()
                    : firstChunk.getData_page_offset();
            ByteArrayInputStream in = new ByteArrayInputStream(bytes, (int) start, footerStart - (int) start);
            PageHeader header = Util.readPageHeader(in);
            int oldLength = footerStart - (int) start - in.available();
            firstPage.accept(header);
            ByteArrayOutputStream newHeader = new ByteArrayOutputStream();
            Util.writePageHeader(header, newHeader);
            long delta = newHeader.size() - oldLength;
            for (RowGroup group : meta.getRow_groups()) {
                for (ColumnChunk chunk : group.getColumns()) {
                    ColumnMetaData m = chunk.getMeta_data();
                    if (m.getData_page_offset() > start) {
                        m.setData_page_offset(m.getData_page_offset() + delta);
                    }
                    if (m.isSetDictionary_page_offset() && m.getDictionary_page_offset() > start) {
                        m.setDictionary_page_offset(m.getDictionary_page_offset() + delta);
                    }
                    if (chunk.getFile_offset() > start) {
                        chunk.setFile_offset(chunk.getFile_offset() + delta);
                    }
                }
                if (group.isSetFile_offset() && group.getFile_offset() > start) {
                    group.setFile_offset(group.getFile_offset() + delta);
                }
            }
            firstChunk.setTotal_compressed_size(firstChunk.getTotal_compressed_size() + delta);
            footer.accept(meta);
            ByteArrayOutputStream newFooter = new ByteArrayOutputStream();
            Util.writeFileMetaData(meta, newFooter);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(bytes, 0, (int) start);
            out.write(newHeader.toByteArray());
            out.write(bytes, (int) start + oldLength, footerStart - (int) start - oldLength);
            out.write(newFooter.toByteArray());
            out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(newFooter.size()).array());
            out.write("PAR1".getBytes(StandardCharsets.US_ASCII));
            Files.write(to, out.toByteArray());
            return to;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
