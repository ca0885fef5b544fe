package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.flatbuffers.FlatBufferBuilder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.MetadataVersion;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Dataset#loadFromDisk} on damaged and hostile directories: data files named outside the
 * directory, Arrow streams cut short, and Arrow messages whose stated sizes the file does not
 * hold (each refused before Arrow allocates by them).
 */
class DiskDatasetChecksTest {
    private static final Schema PROMPTS = new Schema(List.of(new Field("prompt", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

    @TempDir
    Path tmp;

    // ---------------------------------------------------------------- data files outside the directory

    @Test
    void aDataFileNamedOutsideTheDirectoryIsRefusedNamingTheEntry() throws IOException {
        Path secret = writeStream(Files.createDirectories(tmp.resolve("outside")).resolve("secret.arrow"), 3).file();
        Path dir = Files.createDirectories(tmp.resolve("ds"));
        for (String name : List.of("../outside/secret.arrow", secret.toString(), "sub/../../outside/secret.arrow")) {
            writeState(dir, "{\"_data_files\": [{\"filename\": \"" + name + "\"}], \"_split\": null}");
            assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                    .isInstanceOf(DatasetException.class)
                    .hasMessageStartingWith(dir.resolve("state.json").toString())
                    .hasMessageContaining("_data_files[0].filename \"" + name + "\" points outside the dataset directory");
        }
        // the same file inside the directory loads
        Files.copy(secret, dir.resolve("data-00000-of-00001.arrow"));
        writeState(dir, "{\"_data_files\": [{\"filename\": \"data-00000-of-00001.arrow\"}], \"_split\": null}");
        assertThat(Dataset.loadFromDisk(dir).size()).isEqualTo(3);
    }

    @Test
    void aDataFileThatLinksOutsideTheDirectoryIsRefused() throws IOException {
        Path secret = writeStream(Files.createDirectories(tmp.resolve("outside")).resolve("secret.arrow"), 3).file();
        Path dir = Files.createDirectories(tmp.resolve("ds"));
        Files.createSymbolicLink(dir.resolve("data-00000-of-00001.arrow"), secret);
        writeState(dir, "{\"_data_files\": [{\"filename\": \"data-00000-of-00001.arrow\"}], \"_split\": null}");
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("_data_files[0].filename \"data-00000-of-00001.arrow\" is a symbolic link to "
                        + secret.toRealPath() + ", outside the dataset directory");
        // an indices mapping is a data file too
        Files.delete(dir.resolve("data-00000-of-00001.arrow"));
        Files.copy(secret, dir.resolve("data-00000-of-00001.arrow"));
        writeState(dir, "{\"_data_files\": [{\"filename\": \"data-00000-of-00001.arrow\"}], "
                + "\"_indices_data_files\": [{\"filename\": \"../outside/secret.arrow\"}], \"_split\": null}");
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("_indices_data_files[0].filename \"../outside/secret.arrow\" points outside");
    }

    @Test
    void aDatasetDictSplitThatLinksOutsideIsRefused() throws IOException {
        Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
        writeStream(elsewhere.resolve("data-00000-of-00001.arrow"), 2);
        writeState(elsewhere, "{\"_data_files\": [{\"filename\": \"data-00000-of-00001.arrow\"}], \"_split\": null}");
        Path dict = Files.createDirectories(tmp.resolve("dict"));
        Files.writeString(dict.resolve("dataset_dict.json"), "{\"splits\": [\"train\"]}");
        Files.createSymbolicLink(dict.resolve("train"), elsewhere);
        assertThatThrownBy(() -> Dataset.loadFromDisk(dict, "train"))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("dataset_dict.json").hasMessageContaining("split 'train' is a symbolic link to");
    }

    // ---------------------------------------------------------------- streams cut short

    @Test
    void aStreamCutAfterTwoOfThreeRecordBatchesIsRefusedWithBothCounts() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("ds"));
        Written written = writeStream(dir.resolve("data-00000-of-00001.arrow"), 1000, 1000, 500);
        writeState(dir, "{\"_data_files\": [{\"filename\": \"data-00000-of-00001.arrow\"}], \"_split\": \"train\"}");
        Files.writeString(dir.resolve("dataset_info.json"), "{\"features\": {}, \"splits\": {\"train\": "
                + "{\"name\": \"train\", \"num_examples\": 2500}}}");
        assertThat(Dataset.loadFromDisk(dir).size()).isEqualTo(2500);
        truncate(written.file(), written.afterBatch().get(1));
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageStartingWith(written.file() + ": holds 2 complete record batches (2000 rows), then ends "
                        + "without Arrow's end-of-stream marker: the file was cut short")
                .hasMessageContaining("dataset_info.json states 2500 rows for split 'train'");
        // cut inside the third batch: its stated body is not there
        Files.delete(written.file());
        written = writeStream(written.file(), 1000, 1000, 500);
        truncate(written.file(), written.afterBatch().get(2) - 100);
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("after 2 complete record batches, 2000 rows): the file was cut short");
    }

    // ---------------------------------------------------------------- stated sizes the file does not hold

    @Test
    void aBodyLengthBeyondTheFileIsRefusedBeforeAllocating() throws IOException {
        // a few hundred bytes stating a record batch body of 4.2 GB (Arrow's reader would allocate it)
        Path dir = hostile(bytes -> writeMessage(bytes, batchMessage(1, new long[][] {{1, 0}},
                new long[][] {{0, 0}, {0, 8}, {8, 1}}, 4_200_000_000L)));
        Path data = dir.resolve("data-00000-of-00001.arrow");
        assertThat(Files.size(data)).isLessThan(1024);
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageStartingWith(data + ": the message at offset ")
                .hasMessageContaining("declares a message body of 4200000000 bytes, but only 8 bytes remain");
    }

    @Test
    void aMetadataLengthBeyondTheFileIsRefusedBeforeAllocating() throws IOException {
        Path dir = hostile(bytes -> {
            bytes.writeBytes(intLe(0xFFFFFFFF));
            bytes.writeBytes(intLe(0x7FFFFFF0));
        });
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("declares 2147483632 bytes of message metadata, but only 8 bytes remain");
    }

    @Test
    void aBufferOutsideItsBodyIsRefused() throws IOException {
        Path dir = hostile(bytes -> {
            writeMessage(bytes, batchMessage(1, new long[][] {{1, 0}}, new long[][] {{0, 0}, {0, 8}, {8, 1L << 40}}, 16));
            bytes.writeBytes(new byte[16]);
        });
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("declares buffer 2 at bytes [8, 1099511627784) of a body of 16 bytes");
    }

    @Test
    void rowsTheBodyCannotHoldAreRefusedBeforeAllocating() throws IOException {
        // 2^31 - 1 rows in 16 bytes: Arrow's reader would allocate a 256 MiB validity bitmap for them
        Path dir = hostile(bytes -> {
            writeMessage(bytes, batchMessage(Integer.MAX_VALUE, new long[][] {{Integer.MAX_VALUE, 0}},
                    new long[][] {{0, 0}, {0, 8}, {8, 8}}, 16));
            bytes.writeBytes(new byte[16]);
        });
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("declares 2147483647 rows in a body of 16 bytes (at most 65664)");
    }

    @Test
    void rowsTheBuffersCannotHoldAreRefusedBeforeAnyValueIsRead() throws IOException {
        // three rows over 8 bytes of offsets: the offsets hold one row at most
        Path dir = hostile(bytes -> {
            writeMessage(bytes, batchMessage(3, new long[][] {{3, 0}}, new long[][] {{0, 8}, {8, 8}, {16, 8}}, 24));
            bytes.writeBytes(body(24, 0xFF, 0, 1));
        });
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("record batch 0 is inconsistent");
        // offsets that fall back: value 0 would read 100 MB of an 8-byte buffer
        Path falling = hostile(bytes -> {
            writeMessage(bytes, batchMessage(2, new long[][] {{2, 0}}, new long[][] {{0, 8}, {8, 12}, {24, 8}}, 32));
            bytes.writeBytes(body(32, 0xFF, 0, 100_000_000, 3));
        });
        assertThatThrownBy(() -> Dataset.loadFromDisk(falling))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("record batch 0 is inconsistent (column 'prompt' value 1 spans offsets 100000000 to 3)");
    }

    /** A body of {@code length} zero bytes: a validity byte, then 32-bit offsets from byte 8. */
    private static byte[] body(int length, int validity, int... offsets) {
        ByteBuffer body = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        body.put(0, (byte) validity);
        for (int i = 0; i < offsets.length; i++) {
            body.putInt(8 + i * Integer.BYTES, offsets[i]);
        }
        return body.array();
    }

    // ---------------------------------------------------------------- helpers

    /** The stream file and the offset after each record batch. */
    private record Written(Path file, List<Long> afterBatch) {}

    /** An Arrow stream of one {@code prompt} column with {@code batches[i]} rows in batch i, as datasets writes it. */
    private static Written writeStream(Path file, int... batches) throws IOException {
        List<Long> offsets = new ArrayList<>();
        try (BufferAllocator allocator = new RootAllocator();
                VectorSchemaRoot root = VectorSchemaRoot.create(PROMPTS, allocator);
                FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
            writer.start();
            int row = 0;
            for (int rows : batches) {
                VarCharVector prompts = (VarCharVector) root.getVector(0);
                prompts.reset();
                for (int i = 0; i < rows; i++, row++) {
                    prompts.setSafe(i, ("p" + row).getBytes(StandardCharsets.UTF_8));
                }
                root.setRowCount(rows);
                writer.writeBatch();
                offsets.add(writer.bytesWritten());
            }
            writer.end();
        }
        return new Written(file, offsets);
    }

    @FunctionalInterface
    private interface Messages {
        void write(ByteArrayOutputStream bytes) throws IOException;
    }

    /**
     * A save_to_disk directory whose one data file is the {@code prompt} schema, {@code messages} and
     * the end-of-stream marker.
     */
    private Path hostile(Messages messages) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("hostile-" + System.nanoTime()));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        MessageSerializer.serialize(new WriteChannel(Channels.newChannel(bytes)), PROMPTS);
        messages.write(bytes);
        bytes.writeBytes(intLe(0xFFFFFFFF)); // the end-of-stream marker
        bytes.writeBytes(intLe(0));
        Files.write(dir.resolve("data-00000-of-00001.arrow"), bytes.toByteArray());
        writeState(dir, "{\"_data_files\": [{\"filename\": \"data-00000-of-00001.arrow\"}], \"_split\": null}");
        return dir;
    }

    /**
     * The metadata of a record batch message stating {@code rows} rows, field nodes
     * {@code {length, nullCount}}, buffers {@code {offset, length}} and a body of {@code bodyLength}
     * bytes, whatever the file holds.
     */
    private static ByteBuffer batchMessage(long rows, long[][] nodes, long[][] buffers, long bodyLength) {
        FlatBufferBuilder builder = new FlatBufferBuilder();
        RecordBatch.startNodesVector(builder, nodes.length);
        for (int i = nodes.length - 1; i >= 0; i--) {
            FieldNode.createFieldNode(builder, nodes[i][0], nodes[i][1]);
        }
        int nodesVector = builder.endVector();
        RecordBatch.startBuffersVector(builder, buffers.length);
        for (int i = buffers.length - 1; i >= 0; i--) {
            Buffer.createBuffer(builder, buffers[i][0], buffers[i][1]);
        }
        int buffersVector = builder.endVector();
        int batch = RecordBatch.createRecordBatch(builder, rows, nodesVector, buffersVector, 0, 0);
        builder.finish(Message.createMessage(builder, MetadataVersion.V5, MessageHeader.RecordBatch, batch, bodyLength, 0));
        return builder.dataBuffer();
    }

    /** A message as the IPC format frames it: continuation marker, padded metadata length, metadata. */
    private static void writeMessage(ByteArrayOutputStream bytes, ByteBuffer metadata) {
        byte[] meta = new byte[metadata.remaining()];
        metadata.get(meta);
        int padded = (meta.length + 7) / 8 * 8;
        bytes.writeBytes(intLe(0xFFFFFFFF));
        bytes.writeBytes(intLe(padded));
        bytes.writeBytes(meta);
        bytes.writeBytes(new byte[padded - meta.length]);
    }

    private static byte[] intLe(int value) {
        return ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array();
    }

    private static void writeState(Path dir, String json) throws IOException {
        Files.writeString(dir.resolve("state.json"), json);
    }

    private static void truncate(Path file, long size) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(size);
        }
    }
}
