package comlrl.data;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.MessageType;

/**
 * The sizes and counts a Parquet file declares, checked against the file before Parquet's reader
 * allocates by them: a damaged or hostile file (a footer stating a 4 GB column chunk in a file of a
 * few hundred bytes, a page header stating more bytes than its chunk holds, fewer values than the
 * footer's row count) is refused with a {@link DatasetException} naming the file, the row group
 * and the column, instead of being allocated for or read short.
 *
 * <ul>
 *   <li>{@link #footer}: every column chunk lies between the leading magic and the footer; row
 *       and value counts are not negative.</li>
 *   <li>{@link #pages}: walks one row group's page headers (only the headers are read): each page
 *       lies inside its chunk; its decompressed size is one its codec can produce from its stored
 *       bytes (equal for uncompressed pages; at most {@link #maxExpansion} times them otherwise);
 *       the data pages' values add up to the chunk's value count, which for a column that is not
 *       repeated is the row group's row count.</li>
 * </ul>
 */
final class ParquetChecks {
    /** The bytes of Parquet's magic ({@code PAR1}), at both ends of the file. */
    private static final int MAGIC = 4;

    private ParquetChecks() {}

    /**
     * The offset where the footer starts (the end of the column chunks), from the footer length
     * stored before the trailing magic.
     */
    static long dataEnd(Path file, FileChannel channel) throws IOException {
        long size = channel.size();
        ByteBuffer tail = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        if (size < 2L * MAGIC + Integer.BYTES || channel.read(tail, size - MAGIC - Integer.BYTES) != Integer.BYTES) {
            throw DatasetException.inFile(file, "is " + size + " bytes, too short for a Parquet file; check that the "
                    + "file is a complete Parquet file");
        }
        long footerLength = Integer.toUnsignedLong(tail.getInt(0));
        long end = size - MAGIC - Integer.BYTES - footerLength;
        if (end < MAGIC) {
            throw DatasetException.inFile(file, "declares a footer of " + footerLength + " bytes in a file of " + size
                    + " bytes; the file is damaged, copy or write it again");
        }
        return end;
    }

    /** Checks the row groups' counts and that every column chunk lies in {@code [4, dataEnd)}. */
    static void footer(Path file, List<BlockMetaData> rowGroups, long dataEnd) {
        for (int g = 0; g < rowGroups.size(); g++) {
            BlockMetaData group = rowGroups.get(g);
            if (group.getRowCount() < 0) {
                throw damaged(file, "row group " + g + " declares " + group.getRowCount() + " rows");
            }
            for (ColumnChunkMetaData chunk : group.getColumns()) {
                long start = chunk.getStartingPos();
                long size = chunk.getTotalSize();
                if (start < MAGIC || size < 0 || size > dataEnd - start) {
                    throw damaged(file, "column '" + chunk.getPath().toDotString() + "' of row group " + g
                            + " declares " + size + " bytes at offset " + start + ", but the column data of the file "
                            + "lies in bytes [" + MAGIC + ", " + dataEnd + ")");
                }
                if (chunk.getValueCount() < 0) {
                    throw damaged(file, "column '" + chunk.getPath().toDotString() + "' of row group " + g
                            + " declares " + chunk.getValueCount() + " values");
                }
            }
        }
    }

    /**
     * Walks the page headers of row group {@code index} (see the class comment); reads the headers
     * only.
     */
    static void pages(Path file, FileChannel channel, MessageType schema, BlockMetaData group, int index)
            throws IOException {
        for (ColumnChunkMetaData chunk : group.getColumns()) {
            String column = "column '" + chunk.getPath().toDotString() + "' of row group " + index;
            long end = chunk.getStartingPos() + chunk.getTotalSize();
            long values = 0;
            for (long at = chunk.getStartingPos(); at < end; ) {
                CountingStream in = new CountingStream(Channels.newInputStream(channel.position(at)));
                PageHeader header;
                try {
                    header = Util.readPageHeader(in);
                } catch (IOException | RuntimeException e) {
                    throw damaged(file, column + ": the page header at offset " + at + " cannot be read (" + e.getMessage()
                            + ")");
                }
                long body = at + in.count;
                long stored = header.getCompressed_page_size();
                long decompressed = header.getUncompressed_page_size();
                if (body > end || stored < 0 || stored > end - body) {
                    throw damaged(file, column + ": the page at offset " + at + " declares " + stored + " bytes, but "
                            + Math.max(end - body, 0) + " bytes of the column chunk remain");
                }
                if (decompressed < 0 || decompressed > maxExpansion(chunk.getCodec(), stored)) {
                    throw damaged(file, column + ": the page at offset " + at + " declares " + decompressed
                            + " bytes when decompressed from " + stored + " stored bytes, more than "
                            + chunk.getCodec() + " can produce (at most " + maxExpansion(chunk.getCodec(), stored) + ")");
                }
                values += pageValues(header);
                at = body + stored;
            }
            if (values != chunk.getValueCount()) {
                throw damaged(file, column + ": its pages hold " + values + " values, but the footer states "
                        + chunk.getValueCount() + " (the file was cut or rewritten)");
            }
            boolean flat = schema.getColumnDescription(chunk.getPath().toArray()).getMaxRepetitionLevel() == 0;
            if (flat && values != group.getRowCount()) {
                throw damaged(file, column + ": holds " + values + " values, but the footer states " + group.getRowCount()
                        + " rows for the row group");
            }
        }
    }

    /** The values (nulls included) a data page holds; 0 for dictionary and index pages. */
    private static long pageValues(PageHeader header) {
        if (header.isSetData_page_header()) {
            return header.getData_page_header().getNum_values();
        }
        if (header.isSetData_page_header_v2()) {
            return header.getData_page_header_v2().getNum_values();
        }
        return 0;
    }

    /**
     * The most bytes {@code codec} can decompress {@code stored} bytes into: equal for uncompressed
     * pages; the format's worst case otherwise (Snappy copies 64 bytes from 3, deflate 258 from
     * 2 bits, LZ4 255 from a length byte, a Zstandard RLE block 128 KiB from 4 bytes), plus 1 KiB for
     * headers; unbounded (up to the largest page Parquet can state) for codecs without a known bound.
     */
    static long maxExpansion(CompressionCodecName codec, long stored) {
        long ratio;
        switch (codec) {
            case UNCOMPRESSED:
                return stored;
            case SNAPPY:
                ratio = 22;
                break;
            case GZIP:
                ratio = 1032;
                break;
            case LZ4:
            case LZ4_RAW:
                ratio = 256;
                break;
            case ZSTD:
                ratio = 32768;
                break;
            default:
                return Integer.MAX_VALUE;
        }
        return Math.min(Integer.MAX_VALUE, stored * ratio + 1024);
    }

    private static DatasetException damaged(Path file, String problem) {
        return DatasetException.inFile(file, problem + "; the file is damaged or not what its metadata says, copy or "
                + "write it again");
    }

    /** Counts the bytes read through it (a page header's length). */
    private static final class CountingStream extends FilterInputStream {
        long count;

        CountingStream(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count++;
            }
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            if (n > 0) {
                count += n;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = super.skip(n);
            count += skipped;
            return skipped;
        }

        /** Leaves the channel open: it belongs to the file's cursor. */
        @Override
        public void close() {
            // the channel is closed with the cursor
        }
    }
}
