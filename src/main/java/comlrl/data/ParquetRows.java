package comlrl.data;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * A cursor over the rows of one Parquet file, one row group in memory at a time: the footer is
 * read on {@link #open}; each row group's column chunks are read when its first row is asked for,
 * and dropped before the next row group is read; rows are assembled and converted
 * ({@link ParquetLoader#row}) one by one as {@link #next()} is called. Memory is therefore
 * bounded by one row group (its compressed chunks and one decoded page per column), whatever the
 * file's size.
 *
 * <p>Row groups are read by index ({@code ParquetFileReader.readRowGroup(i)}) rather than with
 * {@code readNextRowGroup()}, which keeps the previous row group referenced inside the reader
 * while it reads the next (two in memory at the peak). {@link #skip} passes over whole row groups
 * without reading them (their row counts are in the footer), so resuming deep into a file costs
 * at most one row group's decoding. Errors are {@link DatasetException}s naming the file, the row
 * group and the rows read.
 *
 * <p>What the file declares is checked before it is allocated for ({@link ParquetChecks}): the
 * footer's column chunks on {@link #open}, each row group's page headers before the row group is
 * read. Not thread-safe.
 */
final class ParquetRows implements RowSource {
    private final Path file;
    /** The file again, for reading page headers before the reader reads a row group. */
    private final FileChannel channel;
    private final ParquetFileReader reader;
    private final MessageType schema;
    private final MessageColumnIO columnIo;
    private final List<BlockMetaData> rowGroups;
    private final long rowCount;
    /** Index of the next row group to read or skip. */
    private int nextGroup;
    /** The current row group's records, or null before the first and between row groups. */
    private RecordReader<Group> records;
    /** Rows of the current row group not yet handed out or skipped. */
    private long leftInGroup;
    /** Rows handed out or skipped so far. */
    private long position;

    private ParquetRows(Path file, FileChannel channel, ParquetFileReader reader) {
        this.file = file;
        this.channel = channel;
        this.reader = reader;
        this.schema = reader.getFooter().getFileMetaData().getSchema();
        this.columnIo = new ColumnIOFactory().getColumnIO(schema);
        this.rowGroups = reader.getRowGroups();
        this.rowCount = rowGroups.stream().mapToLong(BlockMetaData::getRowCount).sum();
    }

    /**
     * Opens {@code file} and reads its footer (schema and row group sizes); no rows are read yet.
     *
     * @throws DatasetException when the file is missing, unreadable, or not Parquet
     */
    static ParquetRows open(Path file) {
        Dataset.requireReadableFile(file);
        FileChannel channel = null;
        ParquetFileReader reader = null;
        try {
            reader = ParquetFileReader.open(new LocalInputFile(file)); // checks the magic and the footer's length
            channel = FileChannel.open(file, StandardOpenOption.READ);
            ParquetChecks.footer(file, reader.getRowGroups(), ParquetChecks.dataEnd(file, channel));
            return new ParquetRows(file, channel, reader);
        } catch (IOException | RuntimeException e) {
            closeQuietly(reader);
            closeQuietly(channel);
            if (e instanceof DatasetException de) {
                throw de;
            }
            throw DatasetException.inFile(file, "cannot read Parquet (footer): " + e.getMessage()
                    + "; check that the file is a complete Parquet file", e);
        }
    }

    /** The file read. */
    Path file() {
        return file;
    }

    /** The number of rows in the file (from the footer). */
    long rowCount() {
        return rowCount;
    }

    /** The number of row groups in the file. */
    int rowGroupCount() {
        return rowGroups.size();
    }

    /** Rows handed out or skipped so far. */
    long position() {
        return position;
    }

    /**
     * Skips up to {@code rows} rows: whole row groups unread, then the rest of a partly skipped
     * row group by decoding and dropping its rows.
     *
     * @return the rows skipped: {@code rows}, or fewer when the file ends first
     */
    @Override
    public long skip(long rows) {
        long skipped = 0;
        try {
            while (skipped < rows) {
                long wanted = rows - skipped;
                if (leftInGroup == 0 && nextGroup < rowGroups.size()
                        && rowGroups.get(nextGroup).getRowCount() <= wanted) {
                    long groupRows = rowGroups.get(nextGroup).getRowCount();
                    nextGroup++;
                    skipped += groupRows;
                    position += groupRows;
                    continue;
                }
                if (!ensureRow()) {
                    break;
                }
                records.read();
                leftInGroup--;
                skipped++;
                position++;
            }
        } catch (IOException | RuntimeException e) {
            throw failure(e);
        }
        return skipped;
    }

    @Override
    public String where() {
        return file + " row " + position + " (row group " + Math.max(nextGroup - 1, 0) + ")";
    }

    /**
     * Checks that the file has a column for each field, of a type that holds the field's kind: a
     * string column for {@link RequiredFields.Kind#TEXT}, a number or string column for
     * {@link RequiredFields.Kind#NUMBER} (nulls are caught row by row).
     */
    @Override
    public void requireColumns(RequiredFields fields) {
        for (RequiredFields.Field field : fields.fields()) {
            if (!schema.containsField(field.name())) {
                throw DatasetException.inFile(file, "has no column '" + field.name() + "', which " + field.reader()
                        + " reads; its columns: " + schema.getFields().stream().map(Type::getName).toList()
                        + "; add the column or change what reads it");
            }
            Type type = schema.getType(field.name());
            if (!holds(type, field.kind())) {
                throw DatasetException.inFile(file, "column '" + field.name() + "' (read by " + field.reader()
                        + ") is of Parquet type " + type.toString().trim() + ", which cannot hold "
                        + field.kind().description() + "; store " + field.kind().description() + " in every row of '"
                        + field.name() + "'");
            }
        }
    }

    /** Whether values of a column of {@code type} can be of {@code kind} (strings may hold numbers). */
    private static boolean holds(Type type, RequiredFields.Kind kind) {
        if (!type.isPrimitive() || type.isRepetition(Type.Repetition.REPEATED)) {
            return false;
        }
        PrimitiveType primitive = type.asPrimitiveType();
        LogicalTypeAnnotation annotation = primitive.getLogicalTypeAnnotation();
        boolean text = annotation instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation
                || annotation instanceof LogicalTypeAnnotation.EnumLogicalTypeAnnotation
                || annotation instanceof LogicalTypeAnnotation.JsonLogicalTypeAnnotation;
        if (kind == RequiredFields.Kind.TEXT) {
            return text;
        }
        switch (primitive.getPrimitiveTypeName()) {
            case INT32:
            case INT64:
            case FLOAT:
            case DOUBLE:
                return true;
            case BINARY:
            case FIXED_LEN_BYTE_ARRAY:
                return text || annotation instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation;
            default:
                return false;
        }
    }

    /** The next row (an unmodifiable map of column to value, in schema order), or null at the end. */
    @Override
    public Map<String, Object> next() {
        try {
            if (!ensureRow()) {
                return null;
            }
            Map<String, Object> row = Collections.unmodifiableMap(ParquetLoader.row(records.read(), schema));
            leftInGroup--;
            position++;
            return row;
        } catch (IOException | RuntimeException e) {
            throw failure(e);
        }
    }

    /** Makes the current row group hold a row, reading the next non-empty one; false at the end. */
    private boolean ensureRow() throws IOException {
        while (leftInGroup == 0) {
            records = null; // drop the finished row group before reading the next
            if (nextGroup >= rowGroups.size()) {
                return false;
            }
            int index = nextGroup++;
            if (rowGroups.get(index).getRowCount() == 0) {
                continue; // an empty row group has no chunks to read
            }
            ParquetChecks.pages(file, channel, schema, rowGroups.get(index), index);
            PageReadStore pages = reader.readRowGroup(index);
            leftInGroup = pages.getRowCount();
            records = columnIo.getRecordReader(pages, new GroupRecordConverter(schema));
        }
        return true;
    }

    private DatasetException failure(Exception e) {
        if (e instanceof DatasetException de) {
            return de;
        }
        return DatasetException.inFile(file, "cannot read Parquet (row group " + Math.max(nextGroup - 1, 0) + ", "
                + position + " rows read): " + e.getMessage() + "; check that the file is a complete Parquet file", e);
    }

    @Override
    public void close() {
        records = null;
        closeQuietly(reader);
        closeQuietly(channel);
    }

    private static void closeQuietly(java.io.Closeable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (IOException e) {
            // a read-only file: nothing is lost when closing fails
        }
    }
}
