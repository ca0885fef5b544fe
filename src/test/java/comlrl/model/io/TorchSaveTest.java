package comlrl.model.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.model.io.StateDictPickle.StorageRef;
import comlrl.model.io.StateDictPickle.TensorRef;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.LibtorchPickle;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code torch.save} state-dict format: round trips, layout, libtorch agreement and refusals. */
class TorchSaveTest {
    private static Map<String, Tensor> sample() {
        Map<String, Tensor> t = new LinkedHashMap<>();
        t.put("f32", Tensor.ofFloats(new float[] {1.5f, -2f, 3.25f, 0f, 7f, -0.125f}, Device.CPU, 2, 3));
        t.put("bf16", Tensor.ofFloats(new float[] {0.5f, -1f, 2f}, Device.CPU, 3).to(DType.BF16));
        t.put("f16", Tensor.ofFloats(new float[] {4f, -8f}, Device.CPU, 1, 2).to(DType.F16));
        t.put("f64", Tensor.ofDoubles(new double[] {Math.PI}, Device.CPU, 1, 1, 1));
        t.put("i64", Tensor.ofLongs(new long[] {-3, 70_000, 1L << 40}, Device.CPU, 3));
        t.put("scalar", Tensor.ofFloats(new float[] {42f}, Device.CPU, 1).view());
        t.put("empty", Tensor.zerosOf(DType.F32, Device.CPU, 0, 3));
        t.put("bool", Tensor.ofLongs(new long[] {1, 0, 1}, Device.CPU, 3).gt(0.5));
        return t;
    }

    @Test
    void everyDtypeAndShapeRoundTripsBitExactly(@TempDir Path tmp) {
        try (Scope s = Scope.open()) {
            Map<String, Tensor> written = sample();
            Path file = tmp.resolve("state.pt");
            TorchSave.save(written, file);
            Map<String, Tensor> read = TorchSave.load(file);
            assertBitEqual(written, read);
            assertThat(read.get("scalar").shape()).isEmpty();
        }
    }

    @Test
    void libtorchReadsWhatWeWriteAndWeReadWhatLibtorchWrites(@TempDir Path tmp) throws Exception {
        try (Scope s = Scope.open()) {
            Map<String, Tensor> written = sample();
            Path ours = tmp.resolve("ours.pt");
            TorchSave.save(written, ours);
            assertBitEqual(written, LibtorchPickle.load(Files.readAllBytes(ours)));

            Path theirs = tmp.resolve("theirs.pt");
            Files.write(theirs, LibtorchPickle.save(written));
            assertBitEqual(written, TorchSave.load(theirs));
        }
    }

    @Test
    void recordsLieUnderOneFolderWithTheirDataAlignedTo64Bytes(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("value_head.pt");
        try (Scope s = Scope.open()) {
            TorchSave.save(sample(), file);
        }
        List<String> names;
        try (ZipFile zip = new ZipFile(file.toFile())) {
            names = java.util.Collections.list(zip.entries()).stream().map(java.util.zip.ZipEntry::getName).toList();
            assertThat(new String(zip.getInputStream(zip.getEntry("value_head/version")).readAllBytes(),
                    StandardCharsets.US_ASCII)).isEqualTo("3\n");
            assertThat(new String(zip.getInputStream(zip.getEntry("value_head/byteorder")).readAllBytes(),
                    StandardCharsets.US_ASCII)).isEqualTo("little");
        }
        assertThat(names).first().isEqualTo("value_head/data.pkl");
        assertThat(names).contains("value_head/data/0", "value_head/data/7", "value_head/version");
        // walk the local headers: each record's data starts at a multiple of 64
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        int offset = 0;
        int records = 0;
        while (b.getInt(offset) == 0x04034b50) {
            assertThat(b.getShort(offset + 8)).as("stored, not compressed").isZero();
            int size = b.getInt(offset + 18);
            int data = offset + 30 + b.getShort(offset + 26) + b.getShort(offset + 28);
            assertThat(data % TorchSave.ALIGNMENT).as("data offset of record %d", records).isZero();
            offset = data + size;
            records++;
        }
        assertThat(records).isEqualTo(names.size());
    }

    @Test
    void viewsIntoASharedStorageAreRead(@TempDir Path tmp) {
        // one storage of 6 floats [0, 1, 2, 3, 4, 5]; "tail" views elements 2..5 as [2, 2], "row" element 1 as [1]
        StorageRef storage = new StorageRef(DType.F32, "0", "cpu", 6);
        Map<String, TensorRef> refs = new LinkedHashMap<>();
        refs.put("tail", new TensorRef(storage, 2, new long[] {2, 2}, new long[] {2, 1}));
        refs.put("row", new TensorRef(storage, 1, new long[] {1}, new long[] {1}));
        ByteBuffer data = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 6; i++) {
            data.putFloat(i);
        }
        Path file = tmp.resolve("views.pt");
        writeArchive(file, refs, Map.of("0", data.array()));
        try (Scope s = Scope.open()) {
            Map<String, Tensor> read = TorchSave.load(file);
            assertThat(read.get("tail").shape()).containsExactly(2, 2);
            assertThat(read.get("tail").toDoubleArray()).containsExactly(2, 3, 4, 5);
            assertThat(read.get("row").toDoubleArray()).containsExactly(1);
        }
    }

    @Test
    void damagedOrForeignFilesAreRefusedNamingTheFile(@TempDir Path tmp) throws Exception {
        StorageRef storage = new StorageRef(DType.F32, "0", "cpu", 4);
        Path strided = tmp.resolve("strided.pt");
        writeArchive(strided, Map.of("t", new TensorRef(storage, 0, new long[] {2, 2}, new long[] {1, 2})),
                Map.of("0", new byte[16]));
        assertThatThrownBy(() -> TorchSave.load(strided))
                .hasMessageContaining(strided + ": tensor 't' is a strided view (size [2, 2], stride [1, 2])");

        Path truncated = tmp.resolve("truncated.pt");
        writeArchive(truncated, Map.of("t", new TensorRef(storage, 0, new long[] {4}, new long[] {1})),
                Map.of("0", new byte[8]));
        assertThatThrownBy(() -> TorchSave.load(truncated))
                .hasMessageContaining("storage data/0 of tensor 't' holds 8 bytes, fewer than its 4 F32 elements");

        Path missing = tmp.resolve("missing.pt");
        writeArchive(missing, Map.of("t", new TensorRef(storage, 0, new long[] {4}, new long[] {1})), Map.of());
        assertThatThrownBy(() -> TorchSave.load(missing))
                .hasMessageContaining("tensor 't' is stored in record data/0, which the archive lacks");

        Path legacy = tmp.resolve("legacy.pt");
        Files.write(legacy, new byte[] {(byte) 0x80, 2, (byte) 0x8a, 10});
        assertThatThrownBy(() -> TorchSave.load(legacy)).hasMessageContaining("legacy torch.save format");

        Path cut = tmp.resolve("cut.pt");
        try (Scope s = Scope.open()) {
            TorchSave.save(sample(), cut);
        }
        byte[] whole = Files.readAllBytes(cut);
        Files.write(cut, java.util.Arrays.copyOf(whole, whole.length / 2));
        assertThatThrownBy(() -> TorchSave.load(cut)).hasMessageContaining(cut + " is not a readable torch.save archive");

        assertThatThrownBy(() -> TorchSave.load(tmp.resolve("absent.pt"))).hasMessageContaining("Missing file");
    }

    @Test
    void picklesThatCallAnythingElseAreRefused() {
        // GLOBAL os system, the classic exploit: refused before anything could be called
        byte[] exploit = "\u0080\u0002cos\nsystem\nX\u0002\u0000\u0000\u0000lsR.".getBytes(StandardCharsets.ISO_8859_1);
        assertThatThrownBy(() -> StateDictPickle.read(exploit, "evil.pt"))
                .hasMessageContaining("evil.pt: unsupported global os.system");
        byte[] notADict = {(byte) 0x80, 2, ']', '.'};
        assertThatThrownBy(() -> StateDictPickle.read(notADict, "list.pt"))
                .hasMessageContaining("the pickled object is not a dict");
        byte[] unknownOpcode = {(byte) 0x80, 2, (byte) 0x95, '.'};
        assertThatThrownBy(() -> StateDictPickle.read(unknownOpcode, "frame.pt"))
                .hasMessageContaining("unsupported pickle opcode 0x95");
    }

    @Test
    void aFullDiskLeavesThePreviousFileWhole(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("value_head.pt");
        try (Scope s = Scope.open()) {
            TorchSave.save(sample(), file);
            byte[] before = Files.readAllBytes(file);
            try (TestDisks.Restore full = TestDisks.fullAfter(100)) {
                assertThatThrownBy(() -> TorchSave.save(sample(), file))
                        .isInstanceOf(UncheckedIOException.class)
                        .hasMessageContaining("Cannot write " + file)
                        .hasMessageContaining("unchanged");
            }
            assertThat(Files.readAllBytes(file)).isEqualTo(before);
            try (TestDisks.Restore little = TestDisks.freeSpace(10)) {
                assertThatThrownBy(() -> TorchSave.save(sample(), file))
                        .hasMessageContaining("Not enough disk space to write value_head.pt");
            }
            try (var list = Files.list(tmp)) {
                assertThat(list.map(p -> p.getFileName().toString()).toList()).containsExactly("value_head.pt");
            }
        }
    }

    /** Same names in the same order, each tensor with the same shape, dtype and bits. */
    private static void assertBitEqual(Map<String, Tensor> expected, Map<String, Tensor> actual) {
        assertThat(actual.keySet()).containsExactlyElementsOf(expected.keySet());
        expected.forEach((name, t) -> assertThat(actual.get(name).bitEquals(t)).as(name).isTrue());
    }

    private static void writeArchive(Path file, Map<String, TensorRef> refs, Map<String, byte[]> storages) {
        try {
            Files.write(file, TorchSave.archive("archive", refs, storages, file));
        } catch (java.io.IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
