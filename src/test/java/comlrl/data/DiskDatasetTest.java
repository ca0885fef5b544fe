package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.IntervalUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Dataset#loadFromDisk} against directories written by Python's {@code datasets}
 * ({@code disk-datasets/}, recorded with the values {@code load_from_disk} reads by
 * {@code scripts/record-disk-datasets.py}), and {@link Dataset#saveToDisk} read back in Java.
 * (DiskDatasetPythonTest has Python read what we save.)
 */
class DiskDatasetTest {
    @Test
    void everyColumnTypeLoadsWithTheValuesPythonReads() {
        Dataset tasks = Dataset.loadFromDisk(DiskValues.fixture("tasks"));
        DiskValues.assertSameValues(tasks, DiskValues.expected("tasks", null));
        TaskItem second = tasks.get(1);
        assertThat(second.get("u64")).isEqualTo(new BigInteger("18446744073709551615"));
        assertThat(second.get("i64")).isEqualTo(Long.MAX_VALUE);
        assertThat(second.get("u8")).isEqualTo(255L);
        assertThat(second.get("f32")).isEqualTo((double) -Float.MAX_VALUE);
        assertThat(tasks.get(0).get("price")).isEqualTo(new BigDecimal("12.30"));
        assertThat(tasks.get(0).get("meta")).isEqualTo(Map.of("source", "gsm8k", "scores", List.of(1L, 2L),
                "inner", Map.of("flag", true, "weight", 0.25)));
        assertThat(tasks.source()).isEqualTo(DiskValues.fixture("tasks").toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"train", "test"})
    void datasetDictSplitsLoadByName(String split) {
        Dataset part = Dataset.loadFromDisk(DiskValues.fixture("dict"), split);
        DiskValues.assertSameValues(part, DiskValues.expected("dict", split));
    }

    @Test
    void trainSplitIsReadFromBothOfItsDataFilesInOrder() {
        Dataset train = Dataset.loadFromDisk(DiskValues.fixture("dict"), "train");
        assertThat(train.column("prompt")).containsExactly("add 1 and 2", "add 2 and 2", "add 5 and -1");
    }

    @Test
    void aSplitDirectoryLoadsOnItsOwnAndWithTheSplitItWasSavedFrom() {
        Path train = DiskValues.fixture("dict").resolve("train");
        assertThat(Dataset.loadFromDisk(train)).isEqualTo(Dataset.loadFromDisk(train, "train"));
        assertThatThrownBy(() -> Dataset.loadFromDisk(train, "test"))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("saved from split 'train'").hasMessageContaining("no split 'test'");
        assertThatThrownBy(() -> Dataset.loadFromDisk(DiskValues.fixture("tasks"), "train"))
                .isInstanceOf(DatasetException.class).hasMessageContaining("not a DatasetDict");
    }

    @Test
    void aDatasetDictWithoutSplitFailsNamingItsSplits() {
        assertThatThrownBy(() -> Dataset.loadFromDisk(DiskValues.fixture("dict")))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("DatasetDict").hasMessageContaining("[train, test]")
                .hasMessageContaining("loadFromDisk(dir, \"train\")");
        assertThatThrownBy(() -> Dataset.loadFromDisk(DiskValues.fixture("dict"), "validation"))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("no split 'validation'").hasMessageContaining("[train, test]");
    }

    @Test
    void aSelectionIsReadInTheOrderDatasetsSavedIt() {
        Dataset selected = Dataset.loadFromDisk(DiskValues.fixture("selected"));
        DiskValues.assertSameValues(selected, DiskValues.expected("selected", null));
    }

    @Test
    void anOlderIndicesMappingIsApplied() {
        Dataset legacy = Dataset.loadFromDisk(DiskValues.fixture("legacy-indices"));
        DiskValues.assertSameValues(legacy, DiskValues.expected("legacy-indices", null));
        assertThat(legacy.column("i")).containsExactly(5L, 0L, 3L, 3L);
    }

    @Test
    void whatIsNotASavedDatasetFailsSayingWhatToPass(@TempDir Path tmp) throws IOException {
        assertThatThrownBy(() -> Dataset.loadFromDisk(tmp.resolve("absent")))
                .isInstanceOf(DatasetException.class).hasMessageContaining("directory not found");
        Path file = Files.writeString(tmp.resolve("rows.jsonl"), "{}\n");
        assertThatThrownBy(() -> Dataset.loadFromDisk(file))
                .isInstanceOf(DatasetException.class).hasMessageContaining("is a file").hasMessageContaining("Dataset.load");
        assertThatThrownBy(() -> Dataset.loadFromDisk(tmp))
                .isInstanceOf(DatasetException.class).hasMessageContaining("neither state.json nor dataset_dict.json");
    }

    @Test
    void aMissingDataFileIsNamed(@TempDir Path tmp) throws IOException {
        Path copy = copyOf(DiskValues.fixture("selected"), tmp.resolve("selected"));
        Files.delete(copy.resolve("data-00000-of-00001.arrow"));
        assertThatThrownBy(() -> Dataset.loadFromDisk(copy))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("data-00000-of-00001.arrow").hasMessageContaining("missing");
    }

    @Test
    void aTruncatedDataFileIsNamed(@TempDir Path tmp) throws IOException {
        Path copy = copyOf(DiskValues.fixture("tasks"), tmp.resolve("tasks"));
        Path data = copy.resolve("data-00000-of-00001.arrow");
        try (FileChannel channel = FileChannel.open(data, StandardOpenOption.WRITE)) {
            channel.truncate(Files.size(data) / 2);
        }
        assertThatThrownBy(() -> Dataset.loadFromDisk(copy))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining(data.toString()).hasMessageContaining("cut short");
    }

    @Test
    void aColumnOfAnUnsupportedTypeIsNamedWithItsType(@TempDir Path tmp) throws IOException {
        Path dir = Files.createDirectory(tmp.resolve("spans"));
        Field span = new Field("span", FieldType.nullable(new ArrowType.Interval(IntervalUnit.DAY_TIME)), null);
        try (BufferAllocator allocator = new RootAllocator();
                VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(List.of(span)), allocator);
                FileChannel out = FileChannel.open(dir.resolve("data-00000-of-00001.arrow"),
                        StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
            ((IntervalDayVector) root.getVector(0)).setSafe(0, 1, 0);
            root.setRowCount(1);
            writer.start();
            writer.writeBatch();
            writer.end();
        }
        Files.copy(DiskValues.fixture("selected").resolve("state.json"), dir.resolve("state.json"));
        assertThatThrownBy(() -> Dataset.loadFromDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("column 'span'").hasMessageContaining("Interval")
                .hasMessageContaining("data-00000-of-00001.arrow");
    }

    @Test
    void theArrowFileFormatIsReadToo(@TempDir Path tmp) throws IOException {
        Path dir = Files.createDirectory(tmp.resolve("file-format"));
        Field name = new Field("s", FieldType.nullable(ArrowType.Utf8.INSTANCE), null);
        try (BufferAllocator allocator = new RootAllocator();
                VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(List.of(name)), allocator);
                FileChannel out = FileChannel.open(dir.resolve("data-00000-of-00001.arrow"),
                        StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                ArrowFileWriter writer = new ArrowFileWriter(root, null, out)) {
            writer.start();
            for (String batch : new String[] {"first", "second"}) {
                ((VarCharVector) root.getVector(0)).setSafe(0, batch.getBytes(StandardCharsets.UTF_8));
                root.setRowCount(1);
                writer.writeBatch();
            }
            writer.end();
        }
        Files.copy(DiskValues.fixture("selected").resolve("state.json"), dir.resolve("state.json"));
        assertThat(Dataset.loadFromDisk(dir).column("s")).containsExactly("first", "second");
    }

    // ---------------------------------------------------------------- saving

    @Test
    void aLoadedDatasetSavesAndLoadsBackWithEqualItems(@TempDir Path tmp) {
        Dataset tasks = Dataset.loadFromDisk(DiskValues.fixture("tasks"));
        Path dir = tmp.resolve("saved");
        tasks.saveToDisk(dir);
        Dataset back = Dataset.loadFromDisk(dir);
        DiskValues.assertSameValues(back, DiskValues.expected("tasks", null));
        // byte[] compares by identity: with the binary column as lists of bytes, the items are equal
        assertThat(blobsAsLists(back)).isEqualTo(blobsAsLists(tasks));
        Dataset train = Dataset.loadFromDisk(DiskValues.fixture("dict"), "train");
        train.saveToDisk(tmp.resolve("train"));
        assertThat(Dataset.loadFromDisk(tmp.resolve("train"))).isEqualTo(train);
    }

    @Test
    void javaValuesSaveAsTheirArrowTypesAndLoadBack(@TempDir Path tmp) {
        Dataset rows = javaValues();
        rows.saveToDisk(tmp.resolve("java"));
        Dataset back = Dataset.loadFromDisk(tmp.resolve("java"));
        assertThat(back.columnNames()).isEqualTo(rows.columnNames());
        Map<String, Object> first = new LinkedHashMap<>(back.get(0).asMap());
        assertThat((byte[]) first.remove("blob")).containsExactly(0, 1, -1);
        assertThat(first).isEqualTo(expectedJavaValuesRow0());
        assertThat(back.get(1).get("blob")).isNull();
        assertThat(back.get(1).get("struct")).isEqualTo(mapOf("a", null, "b", List.of(), "c", "only here"));
        assertThat(back.get(1).get("big")).isEqualTo(new BigInteger("18446744073709551615"));
        assertThat(back.get(1).get("mixed")).isEqualTo(2.5);
        assertThat(back.get(1).get("decimal")).isEqualTo(new BigDecimal("-3.000"));
    }

    /** Two rows of the Java types {@link Dataset#saveToDisk} takes (shared with DiskDatasetPythonTest). */
    static Dataset javaValues() {
        Map<String, Object> first = new LinkedHashMap<>();
        first.put("int", 7);
        first.put("short", (short) -3);
        first.put("float", 0.1f);
        first.put("mixed", 1L);
        first.put("big", BigInteger.ONE);
        first.put("decimal", new BigDecimal("1.5"));
        first.put("blob", new byte[] {0, 1, -1});
        first.put("text", "ünïcødé ✓");
        first.put("nulls", null);
        first.put("empty", List.of());
        first.put("struct", Map.of("a", 1L));
        first.put("rows", List.of(Map.of("k", "x"), mapOf("k", null, "v", 2.0)));
        Map<String, Object> second = new LinkedHashMap<>();
        second.put("int", null);
        second.put("float", Float.NaN);
        second.put("mixed", 2.5);
        second.put("big", new BigInteger("18446744073709551615"));
        second.put("decimal", new BigDecimal("-3.000"));
        second.put("blob", null);
        second.put("text", "");
        second.put("empty", Arrays.asList(null, null));
        second.put("struct", mapOf("a", null, "b", List.of(), "c", "only here"));
        second.put("rows", null);
        return Dataset.fromRows(List.of(first, second));
    }

    /** Row 0 of {@link #javaValues} as it loads back (without its binary value). */
    static Map<String, Object> expectedJavaValuesRow0() {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("int", 7L);
        row.put("short", -3L);
        row.put("float", (double) 0.1f);
        row.put("mixed", 1.0);
        row.put("big", 1L);
        row.put("decimal", new BigDecimal("1.500"));
        row.put("text", "ünïcødé ✓");
        row.put("nulls", null);
        row.put("empty", List.of());
        row.put("struct", mapOf("a", 1L, "b", null, "c", null));
        row.put("rows", List.of(mapOf("k", "x", "v", null), mapOf("k", null, "v", 2.0)));
        return row;
    }

    static Map<String, Object> mapOf(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    @Test
    void anEmptyDatasetKeepsItsColumns(@TempDir Path tmp) {
        Dataset empty = Dataset.fromColumns(new LinkedHashMap<>(Map.of("prompt", List.of())));
        empty.saveToDisk(tmp.resolve("empty"));
        Dataset back = Dataset.loadFromDisk(tmp.resolve("empty"));
        assertThat(back.size()).isZero();
        assertThat(back.columnNames()).containsExactly("prompt");
    }

    @Test
    void manyRowsSpanSeveralRecordBatches(@TempDir Path tmp) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 2500; i++) {
            rows.add(mapOf("i", (long) i, "s", i % 7 == 0 ? null : "row " + i, "l", List.of((long) i, (long) -i)));
        }
        Dataset many = Dataset.fromRows(rows);
        many.saveToDisk(tmp.resolve("many"));
        assertThat(Dataset.loadFromDisk(tmp.resolve("many"))).isEqualTo(many);
    }

    @Test
    void valuesThatCannotBeSavedAreNamedByColumnAndRow(@TempDir Path tmp) {
        Path dir = tmp.resolve("bad");
        assertThatThrownBy(() -> Dataset.fromRows(List.of(Map.of("a", 1L), Map.of("a", "one"))).saveToDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("column 'a' (row 1)").hasMessageContaining("string")
                .hasMessageContaining("int64");
        assertThatThrownBy(() -> Dataset.fromRows(List.of(Map.of("when", java.time.LocalDate.EPOCH))).saveToDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("column 'when' (row 0)").hasMessageContaining("java.time.LocalDate");
        assertThatThrownBy(() -> Dataset.fromRows(List.of(Map.of("m", List.of(Map.of(1L, "x"))))).saveToDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("column 'm[]' (row 0)").hasMessageContaining("field names must be strings");
        assertThatThrownBy(() -> Dataset.fromRows(List.of(Map.of("n", BigInteger.TWO.pow(64)))).saveToDisk(dir))
                .isInstanceOf(DatasetException.class).hasMessageContaining("does not fit in 64 bits");
        assertThat(dir).doesNotExist();
    }

    @Test
    void aFailedSaveLeavesTheOldDatasetAndNoStagingBehind(@TempDir Path tmp) {
        Path dir = tmp.resolve("kept");
        Dataset old = Dataset.fromRows(List.of(Map.of("n", 1L)));
        old.saveToDisk(dir);
        // -1 and 2^64-1 need int64 and uint64 at once: found while writing, after staging began
        Dataset clash = Dataset.fromRows(List.of(Map.of("n", -1L), Map.of("n", new BigInteger("18446744073709551615"))));
        assertThatThrownBy(() -> clash.saveToDisk(dir))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("column 'n' (row 0)").hasMessageContaining("negative integer -1");
        assertThat(Dataset.loadFromDisk(dir)).isEqualTo(old);
        assertThat(siblings(tmp)).containsExactly("kept");
    }

    @Test
    void savingReplacesASavedDatasetWhole(@TempDir Path tmp) throws IOException {
        Path dir = tmp.resolve("tasks");
        Dataset.loadFromDisk(DiskValues.fixture("dict"), "train").saveToDisk(dir);
        Files.writeString(dir.resolve("data-00001-of-00002.arrow"), "a stale shard");
        Dataset small = Dataset.fromRows(List.of(Map.of("prompt", "hi")));
        small.saveToDisk(dir);
        assertThat(Dataset.loadFromDisk(dir)).isEqualTo(small);
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("data-00000-of-00001.arrow", "dataset_info.json", "state.json");
        }
        assertThat(siblings(tmp)).containsExactly("tasks");
    }

    @Test
    void aDirectoryOfOtherFilesIsNotReplaced(@TempDir Path tmp) throws IOException {
        Path dir = Files.createDirectory(tmp.resolve("notes"));
        Files.writeString(dir.resolve("thesis.tex"), "precious");
        assertThatThrownBy(() -> Dataset.fromRows(List.of(Map.of("a", 1L))).saveToDisk(dir))
                .isInstanceOf(DatasetException.class).hasMessageContaining("did not write");
        assertThat(dir.resolve("thesis.tex")).hasContent("precious");
        Path file = Files.writeString(tmp.resolve("file"), "x");
        assertThatThrownBy(() -> Dataset.fromRows(List.of(Map.of("a", 1L))).saveToDisk(file))
                .isInstanceOf(DatasetException.class).hasMessageContaining("not a directory");
    }

    @Test
    void statePointsAtTheOneDataFile(@TempDir Path tmp) throws IOException {
        Dataset.fromRows(List.of(Map.of("a", 1L))).saveToDisk(tmp.resolve("one"));
        var state = JsonValues.MAPPER.readTree(tmp.resolve("one/state.json").toFile());
        assertThat(state.get("_data_files").get(0).get("filename").textValue()).isEqualTo("data-00000-of-00001.arrow");
        assertThat(state.get("_fingerprint").textValue()).matches("[0-9a-f]{16}");
        assertThat(state.get("_split").isNull()).isTrue();
        var info = JsonValues.MAPPER.readTree(tmp.resolve("one/dataset_info.json").toFile());
        assertThat(info.get("features").toString()).isEqualTo("{\"a\":{\"dtype\":\"int64\",\"_type\":\"Value\"}}");
    }

    private static List<String> siblings(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static Path copyOf(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Files.copy(p, to.resolve(p.getFileName().toString()));
            }
        }
        return to;
    }

    private static Dataset blobsAsLists(Dataset tasks) {
        return tasks.map(item -> {
            byte[] blob = (byte[]) item.get("blob");
            List<Byte> bytes = new ArrayList<>();
            if (blob != null) {
                for (byte b : blob) {
                    bytes.add(b);
                }
            }
            return item.with("blob", blob == null ? null : bytes);
        });
    }
}
