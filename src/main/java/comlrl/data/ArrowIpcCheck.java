package comlrl.data;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.ipc.message.ArrowBlock;

/**
 * The framing of an Arrow IPC file, walked before Arrow's reader allocates by it. Arrow's Java
 * reader allocates each message's metadata and body at the sizes the file states, so a damaged or
 * hostile file of a few bytes could make it allocate gigabytes; and it treats a stream that simply
 * stops like one that ended, so a file cut after a whole record batch would load short without a
 * word. {@link #walk} reads only the 8-byte message prefixes and the (small, bounded) metadata and
 * checks, against the bytes the file really has:
 *
 * <ul>
 *   <li>every metadata length and body length fits in the bytes that remain;</li>
 *   <li>every buffer of a record batch lies inside its body; its row count and every field's
 *       value count is one its body can hold ({@link #maxValues}); null counts are within them; the
 *       batch is not compressed (this reader cannot decompress);</li>
 *   <li>whether the messages end with Arrow's end-of-stream marker ({@code 0xFFFFFFFF 0x00000000}):
 *       a stream-format file without it was cut short ({@link Summary#ended}).</li>
 * </ul>
 * For the file format, {@link #requireBlocks} checks the footer's record batch blocks the same way.
 * Errors are {@link DatasetException}s naming the file, the message and the sizes.
 */
final class ArrowIpcCheck {
    /** The marker before each message's metadata length since Arrow 0.15. */
    private static final int CONTINUATION = 0xFFFFFFFF;
    /** The file format's leading bytes: {@code ARROW1} and two bytes of padding. */
    static final int FILE_HEADER = 8;
    /** The file format's trailing bytes: the footer length (int32) and {@code ARROW1}. */
    private static final int FILE_TRAILER = Integer.BYTES + 6;

    private ArrowIpcCheck() {}

    /**
     * What {@link #walk} found.
     *
     * @param batches the record batches
     * @param rows their rows, added up
     * @param ended whether the end-of-stream marker closed the messages
     * @param end where the messages end: the file's size (stream format) or the footer's start
     */
    record Summary(int batches, long rows, boolean ended, long end) {}

    /**
     * Walks the messages of {@code file} (see the class comment).
     *
     * @param fileFormat whether the file has the file format's {@code ARROW1} header and footer
     * @throws DatasetException when a stated size exceeds the bytes left or a message cannot be
     *     parsed
     */
    static Summary walk(Path file, FileChannel channel, boolean fileFormat) throws IOException {
        long size = channel.size();
        long start = fileFormat ? FILE_HEADER : 0;
        long end = fileFormat ? footerStart(file, channel, size) : size;
        int messages = 0;
        int batches = 0;
        long rows = 0;
        long at = start;
        while (true) {
            long left = end - at;
            if (left == 0) {
                return new Summary(batches, rows, false, end);
            }
            int word = left >= Integer.BYTES ? readInt(channel, at) : 0;
            int prefix = word == CONTINUATION ? 2 * Integer.BYTES : Integer.BYTES;
            if (left < prefix) {
                throw cut(file, at, "a message prefix of " + prefix + " bytes", left, batches, rows);
            }
            long metadataLength = word == CONTINUATION ? readInt(channel, at + Integer.BYTES) : word;
            if (metadataLength == 0) {
                return new Summary(batches, rows, true, end);
            }
            if (metadataLength < 0 || metadataLength > left - prefix) {
                throw cut(file, at, metadataLength + " bytes of message metadata", left - prefix, batches, rows);
            }
            Message message = message(file, channel, at + prefix, (int) metadataLength, messages);
            long bodyLength = message.bodyLength();
            long bodyLeft = left - prefix - metadataLength;
            if (bodyLength < 0 || bodyLength > bodyLeft) {
                throw cut(file, at, "a message body of " + bodyLength + " bytes", bodyLeft, batches, rows);
            }
            String which = "message " + messages + " (at offset " + at + ")";
            switch (message.headerType()) {
                case MessageHeader.Schema:
                    break;
                case MessageHeader.RecordBatch:
                    rows += requireBatch(file, which, (RecordBatch) message.header(new RecordBatch()), bodyLength);
                    batches++;
                    break;
                case MessageHeader.DictionaryBatch:
                    requireBatch(file, which, ((DictionaryBatch) message.header(new DictionaryBatch())).data(), bodyLength);
                    break;
                default:
                    throw damaged(file, which + " is of Arrow message type " + message.headerType()
                            + ", not a schema, record batch or dictionary");
            }
            at += prefix + metadataLength + bodyLength;
            messages++;
        }
    }

    /**
     * Checks that every block the file format's footer lists lies between the header and the
     * footer ({@code summary.end()}).
     */
    static void requireBlocks(Path file, List<ArrowBlock> blocks, Summary summary) {
        for (int i = 0; i < blocks.size(); i++) {
            ArrowBlock block = blocks.get(i);
            long start = block.getOffset();
            long length = (long) block.getMetadataLength() + block.getBodyLength();
            if (start < FILE_HEADER || block.getMetadataLength() <= 0 || block.getBodyLength() < 0
                    || length > summary.end() - start) {
                throw damaged(file, "the footer's block " + i + " declares " + length + " bytes at offset " + start
                        + ", but the messages lie in bytes [" + FILE_HEADER + ", " + summary.end() + ")");
            }
        }
    }

    /** Where the file format's footer starts, from the length stored before the trailing {@code ARROW1}. */
    private static long footerStart(Path file, FileChannel channel, long size) throws IOException {
        if (size < FILE_HEADER + FILE_TRAILER) {
            throw damaged(file, "is " + size + " bytes, too short for the Arrow file format");
        }
        long footerLength = readInt(channel, size - FILE_TRAILER);
        if (footerLength <= 0 || footerLength > size - FILE_HEADER - FILE_TRAILER) {
            throw damaged(file, "declares a footer of " + footerLength + " bytes in a file of " + size + " bytes");
        }
        return size - FILE_TRAILER - footerLength;
    }

    /** Checks one record batch's counts and buffers against its body; returns its rows. */
    private static long requireBatch(Path file, String which, RecordBatch batch, long bodyLength) {
        if (batch == null) {
            throw damaged(file, which + " has no record batch in its metadata");
        }
        if (batch.compression() != null) {
            throw DatasetException.inFile(file, which + " is compressed (Arrow IPC body compression), which this "
                    + "reader does not support; save the dataset without compression (datasets' save_to_disk writes it "
                    + "uncompressed)");
        }
        long mostValues = maxValues(bodyLength);
        if (batch.length() < 0 || batch.length() > mostValues) {
            throw damaged(file, which + " declares " + batch.length() + " rows in a body of " + bodyLength + " bytes (at "
                    + "most " + mostValues + ")");
        }
        FieldNode node = new FieldNode();
        for (int i = 0; i < batch.nodesLength(); i++) {
            batch.nodes(node, i);
            if (node.length() < 0 || node.length() > mostValues || node.nullCount() < 0
                    || node.nullCount() > node.length()) {
                throw damaged(file, which + " declares " + node.length() + " values with " + node.nullCount()
                        + " nulls for field node " + i + " in a body of " + bodyLength + " bytes (at most " + mostValues
                        + " values)");
            }
        }
        Buffer buffer = new Buffer();
        for (int i = 0; i < batch.buffersLength(); i++) {
            batch.buffers(buffer, i);
            if (buffer.offset() < 0 || buffer.length() < 0 || buffer.length() > bodyLength - buffer.offset()) {
                throw damaged(file, which + " declares buffer " + i + " at bytes [" + buffer.offset() + ", "
                        + (buffer.offset() + buffer.length()) + ") of a body of " + bodyLength + " bytes");
            }
        }
        return batch.length();
    }

    /**
     * The most values a record batch with a body of {@code bodyLength} bytes can hold: every type
     * but null stores at least one bit per value (Arrow's reader allocates a validity bitmap for
     * the stated count when the file has none); 65,536 more for columns of nulls, which store nothing.
     */
    static long maxValues(long bodyLength) {
        return bodyLength * Byte.SIZE + (1 << 16);
    }

    /** The metadata of message {@code index}: {@code length} bytes at {@code at}, parsed. */
    private static Message message(Path file, FileChannel channel, long at, int length, int index) throws IOException {
        ByteBuffer metadata = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        readFully(channel, metadata, at);
        metadata.flip();
        try {
            Message message = Message.getRootAsMessage(metadata);
            message.headerType();
            message.bodyLength();
            return message;
        } catch (RuntimeException e) {
            throw damaged(file, "the metadata of message " + index + " (at offset " + (at) + ") cannot be parsed ("
                    + e + ")");
        }
    }

    private static int readInt(FileChannel channel, long at) throws IOException {
        ByteBuffer word = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        readFully(channel, word, at);
        return word.getInt(0);
    }

    private static void readFully(FileChannel channel, ByteBuffer into, long at) throws IOException {
        long position = at;
        while (into.hasRemaining()) {
            int n = channel.read(into, position);
            if (n < 0) {
                throw new IOException("unexpected end of file at offset " + position);
            }
            position += n;
        }
    }

    /** A stated size that exceeds the bytes left: the file was cut inside a message, or is damaged. */
    private static DatasetException cut(Path file, long at, String stated, long left, int batches, long rows) {
        return DatasetException.inFile(file, "the message at offset " + at + " declares " + stated + ", but only "
                + left + " bytes remain (after " + batches + " complete record batches, " + rows + " rows): the file "
                + "was cut short or is damaged; copy or save the dataset again");
    }

    private static DatasetException damaged(Path file, String problem) {
        return DatasetException.inFile(file, problem + "; the file is damaged or not an Arrow file written by "
                + "save_to_disk, copy or save the dataset again");
    }
}
