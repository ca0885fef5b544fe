package comlrl.data;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.validate.ValidateVectorBufferVisitor;

/**
 * {@link Dataset#loadFromDisk} and {@link Dataset#saveToDisk}: the directories Hugging Face
 * {@code datasets} writes with {@code save_to_disk} and reads with {@code load_from_disk}.
 *
 * <pre>
 * DIR/dataset_info.json            {"features": {...}, "citation": "", ...}
 * DIR/state.json                   {"_data_files": [{"filename": "data-00000-of-00002.arrow"}, ...],
 *                                   "_split": "train" or null, "_fingerprint": ..., ...}
 * DIR/data-0000i-of-0000n.arrow    the rows, in order: Arrow IPC stream, record batches
 *
 * DIR/dataset_dict.json            {"splits": ["train", "test"]}     (a DatasetDict)
 * DIR/train/, DIR/test/            one directory as above per split
 * </pre>
 *
 * <p>{@code datasets} since 2.x writes the rows of a dataset with an indices mapping (after
 * {@code select}, {@code shuffle}, {@code train_test_split}) in their selected order and no mapping;
 * the older layout, whose {@code state.json} also lists {@code _indices_data_files} (an
 * {@code indices} column of row numbers), is read by applying the mapping.
 */
final class DiskDatasets {
    static final String STATE = "state.json";
    static final String INFO = "dataset_info.json";
    static final String DICT = "dataset_dict.json";
    /** The one data file {@link #save} writes. */
    static final String DATA_FILE = "data-00000-of-00001.arrow";
    /** Rows per record batch, as {@code datasets} writes them. */
    private static final int BATCH_ROWS = 1000;
    private static final byte[] FILE_FORMAT_MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

    private DiskDatasets() {}

    // ---------------------------------------------------------------- loading

    /** A Dataset directory, or split {@code split} of a DatasetDict directory; see {@link Dataset#loadFromDisk(Path, String)}. */
    static Dataset load(Path dir, String split) {
        Objects.requireNonNull(dir, "dir");
        requireDirectory(dir);
        Path dict = dir.resolve(DICT);
        if (Files.exists(dir.resolve(STATE)) || !Files.isRegularFile(dict)) {
            return loadDataset(dir, split);
        }
        List<String> splits = splits(dict);
        if (split == null) {
            throw DatasetException.inFile(dir, "is a DatasetDict with the splits " + splits + "; name the split to "
                    + "load, e.g. Dataset.loadFromDisk(dir, \"" + splits.get(0) + "\")");
        }
        if (!splits.contains(split)) {
            throw DatasetException.inFile(dir, "has no split '" + split + "'; its splits are " + splits);
        }
        Path splitDir = dir.resolve(split);
        requireDirectory(splitDir);
        requireRealPathInside(dir.toAbsolutePath(), splitDir, dict, "split '" + split + "'");
        return loadDataset(splitDir, null);
    }

    private static void requireDirectory(Path dir) {
        if (!Files.exists(dir)) {
            throw DatasetException.inFile(dir, "directory not found (working directory: "
                    + Path.of("").toAbsolutePath() + "); check the path");
        }
        if (!Files.isDirectory(dir)) {
            throw DatasetException.inFile(dir, "is a file; loadFromDisk takes the directory that save_to_disk "
                    + "wrote (load a single data file with Dataset.load)");
        }
    }

    /** The split names of {@code dataset_dict.json}. */
    private static List<String> splits(Path dict) {
        JsonNode splits = readJson(dict).get("splits");
        List<String> names = new ArrayList<>();
        if (splits != null && splits.isArray()) {
            for (JsonNode name : splits) {
                String text = name.isTextual() ? name.textValue() : "";
                if (text.isEmpty() || text.equals(".") || text.equals("..") || text.contains("/") || text.contains("\\")) {
                    throw DatasetException.inFile(dict, "split name " + name + " is not a folder name; save the "
                            + "DatasetDict again with splits named like train, test");
                }
                names.add(text);
            }
        }
        if (names.isEmpty()) {
            throw DatasetException.inFile(dict, "lists no splits (expected {\"splits\": [\"train\", ...]}); save the "
                    + "DatasetDict again");
        }
        return names;
    }

    private static Dataset loadDataset(Path dir, String split) {
        Path stateFile = dir.resolve(STATE);
        if (!Files.isRegularFile(stateFile)) {
            throw DatasetException.inFile(dir, "is not a directory written by save_to_disk: it has neither " + STATE
                    + " nor " + DICT + "; pass the directory that Dataset.save_to_disk or DatasetDict.save_to_disk "
                    + "wrote (load a single data file with Dataset.load)");
        }
        JsonNode state = readJson(stateFile);
        JsonNode saved = state.get("_split");
        if (split != null && !(saved != null && split.equals(saved.asText(null)))) {
            throw DatasetException.inFile(dir, "is one Dataset" + (saved != null && saved.isTextual()
                    ? " (saved from split '" + saved.textValue() + "')" : "") + ", not a DatasetDict, so it has no "
                    + "split '" + split + "' to pick; load it without a split");
        }
        List<Path> dataFiles = files(state, "_data_files", stateFile);
        if (dataFiles.isEmpty()) {
            throw DatasetException.inFile(stateFile, "lists no _data_files; save the dataset again");
        }
        Map<String, List<Object>> columns = new LinkedHashMap<>();
        String stated = statedRows(dir, saved);
        try (BufferAllocator allocator = allocator()) {
            for (int i = 0; i < dataFiles.size(); i++) {
                read(dataFiles.get(i), allocator, columns, i == 0 ? null : dataFiles.get(0), stated);
            }
            Dataset dataset = Dataset.fromColumns(columns).withSource(dir.toString());
            List<Path> indexFiles = files(state, "_indices_data_files", stateFile);
            return indexFiles.isEmpty() ? dataset : dataset.select(indices(indexFiles, allocator, dataset.size()));
        }
    }

    /**
     * What {@code dataset_info.json} says of the rows, for the message about a file cut short:
     * {@code "; dataset_info.json states 2500 rows for split 'train'"}, or "" when it names no count
     * for the split ({@code datasets} keeps that count through select and filter, so it only informs).
     */
    private static String statedRows(Path dir, JsonNode savedSplit) {
        Path info = dir.resolve(INFO);
        if (!Files.isRegularFile(info) || savedSplit == null || !savedSplit.isTextual()) {
            return "";
        }
        JsonNode splits = readJson(info).get("splits");
        JsonNode count = splits == null ? null : splits.path(savedSplit.textValue()).get("num_examples");
        return count == null || !count.canConvertToLong() ? ""
                : "; " + INFO + " states " + count.asLong() + " rows for split '" + savedSplit.textValue()
                        + "' (all data files together, when the dataset was built)";
    }

    /**
     * The files a {@code state.json} list names ({@code [{"filename": ...}, ...]}); none when absent
     * or null. Each must lie inside the dataset directory, also once symbolic links are followed:
     * a name such as {@code ../outside/secret.arrow} or {@code /etc/x} is refused, naming the entry.
     */
    private static List<Path> files(JsonNode state, String key, Path stateFile) {
        JsonNode list = state.get(key);
        List<Path> files = new ArrayList<>();
        if (list == null || list.isNull()) {
            return files;
        }
        Path dir = stateFile.toAbsolutePath().getParent();
        int index = 0;
        for (JsonNode entry : list) {
            JsonNode name = entry.get("filename");
            if (name == null || !name.isTextual()) {
                throw DatasetException.inFile(stateFile, key + " entry " + entry + " has no \"filename\"; save the "
                        + "dataset again");
            }
            String entryName = key + "[" + index++ + "].filename";
            Path file = inside(dir, name.textValue(), stateFile, entryName);
            if (!Files.isRegularFile(file)) {
                throw DatasetException.inFile(file, "is listed in " + STATE + " (" + key + ") but missing; the "
                        + "directory is incomplete, copy or save it again");
            }
            requireRealPathInside(dir, file, stateFile, entryName + " \"" + name.textValue() + "\"");
            files.add(file);
        }
        return files;
    }

    /**
     * {@code name} resolved in {@code dir}, refused unless it stays inside: not absolute, no
     * {@code ..} that climbs out.
     */
    private static Path inside(Path dir, String name, Path metadata, String entry) {
        Path relative;
        try {
            relative = Path.of(name);
        } catch (java.nio.file.InvalidPathException e) {
            throw DatasetException.inFile(metadata, entry + " \"" + name + "\" is not a valid file name; the directory "
                    + "is damaged, save the dataset again");
        }
        Path resolved = dir.resolve(relative).normalize();
        if (relative.isAbsolute() || name.isEmpty() || !resolved.startsWith(dir.normalize()) || resolved.equals(dir.normalize())) {
            throw DatasetException.inFile(metadata, entry + " \"" + name + "\" points outside the dataset directory "
                    + dir + "; a dataset's data files lie inside its directory (save_to_disk writes names such as "
                    + DATA_FILE + "): save the dataset again rather than editing " + metadata.getFileName());
        }
        return resolved;
    }

    /** Refuses {@code path} when a symbolic link takes it outside {@code dir}. */
    private static void requireRealPathInside(Path dir, Path path, Path metadata, String entry) {
        try {
            Path real = path.toRealPath();
            Path realDir = dir.toRealPath();
            if (!real.startsWith(realDir)) {
                throw DatasetException.inFile(metadata, entry + " is a symbolic link to " + real + ", outside the dataset "
                        + "directory " + realDir + "; copy the data file into the directory instead of linking it");
            }
        } catch (IOException e) {
            throw DatasetException.inFile(path, "cannot resolve: " + e.getMessage(), e);
        }
    }

    /**
     * Appends the rows of one data file to {@code columns} (filled from the first file's schema).
     * The file's framing is checked first ({@link ArrowIpcCheck}), so nothing is allocated for
     * sizes the file does not hold, a stream cut short is refused, and every record batch's
     * buffers are validated against its row count before a value is read.
     *
     * @param first the first data file, when this is a later one that must have the same columns
     * @param stated what the dataset's metadata says of its rows, for the message about a file cut short
     */
    private static void read(Path file, BufferAllocator allocator, Map<String, List<Object>> columns, Path first,
            String stated) {
        int batch = 0;
        long rowsRead = 0;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            boolean fileFormat = isFileFormat(channel);
            ArrowIpcCheck.Summary summary = ArrowIpcCheck.walk(file, channel, fileFormat);
            if (!fileFormat && !summary.ended()) {
                throw DatasetException.inFile(file, "holds " + summary.batches() + " complete record batches ("
                        + summary.rows() + " rows), then ends without Arrow's end-of-stream marker: the file was cut "
                        + "short (an interrupted copy or save) and rows are missing" + stated + "; copy or save the "
                        + "dataset again");
            }
            try (ArrowReader reader = fileFormat ? new ArrowFileReader(channel, allocator)
                    : new ArrowStreamReader(channel, allocator)) {
                if (reader instanceof ArrowFileReader fileReader) {
                    ArrowIpcCheck.requireBlocks(file, fileReader.getRecordBlocks(), summary);
                    ArrowIpcCheck.requireBlocks(file, fileReader.getDictionaryBlocks(), summary);
                }
                VectorSchemaRoot root = reader.getVectorSchemaRoot();
                List<String> names = root.getSchema().getFields().stream().map(Field::getName).toList();
                if (first == null) {
                    for (String name : names) {
                        if (columns.put(name, new ArrayList<>()) != null) {
                            throw DatasetException.inFile(file, "has two columns named '" + name + "'; rename one in "
                                    + "Python (ds.rename_column) and save again");
                        }
                    }
                } else if (!names.equals(new ArrayList<>(columns.keySet()))) {
                    throw DatasetException.inFile(file, "has the columns " + names + " but " + first.getFileName()
                            + " has " + columns.keySet() + "; every data file of a dataset holds the same columns");
                }
                List<FieldVector> vectors = root.getFieldVectors();
                ArrowValues.Cell[] cells = new ArrowValues.Cell[vectors.size()];
                List<List<Object>> targets = new ArrayList<>(columns.values());
                for (int c = 0; c < cells.length; c++) {
                    cells[c] = ArrowValues.cell(vectors.get(c), file, names.get(c));
                }
                while (reader.loadNextBatch()) {
                    validate(file, root, batch);
                    for (int row = 0; row < root.getRowCount(); row++) {
                        for (int c = 0; c < cells.length; c++) {
                            targets.get(c).add(cells[c].at(row));
                        }
                    }
                    rowsRead += root.getRowCount();
                    batch++;
                }
            }
            if (rowsRead != summary.rows()) {
                throw DatasetException.inFile(file, "read " + rowsRead + " rows, but its record batches declare "
                        + summary.rows() + "; the file is damaged, copy or save the dataset again");
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof DatasetException de) {
                throw de;
            }
            throw DatasetException.inFile(file, "cannot read Arrow data (record batch " + batch + "): " + e
                    + "; check that the file is complete and was written by save_to_disk", e);
        }
    }

    /**
     * Checks a loaded record batch's buffers against its row count before any value is read: their
     * sizes with Arrow's buffer validator, and that offsets never fall ({@link ArrowValues#requireRisingOffsets}),
     * so no value reads a length the data does not hold. (Arrow's {@code ValueVectorUtility.validateFull}
     * also runs a type validator that does not know float16 and a data validator that rejects decimals
     * pyarrow writes.)
     */
    private static void validate(Path file, VectorSchemaRoot root, int batch) {
        try {
            for (FieldVector vector : root.getFieldVectors()) {
                if (vector.getValueCount() != root.getRowCount()) {
                    throw new IllegalStateException("column '" + vector.getName() + "' holds " + vector.getValueCount()
                            + " values for " + root.getRowCount() + " rows");
                }
                vector.accept(new ValidateVectorBufferVisitor(), null);
                ArrowValues.requireRisingOffsets(vector);
            }
        } catch (RuntimeException e) {
            throw DatasetException.inFile(file, "record batch " + batch + " is inconsistent (" + e.getMessage() + "); the "
                    + "file is damaged, copy or save the dataset again", e);
        }
    }

    /** Whether the file starts with the Arrow file format's {@code ARROW1} (else it is the stream format, datasets' own). */
    private static boolean isFileFormat(FileChannel channel) throws IOException {
        ByteBuffer magic = ByteBuffer.allocate(FILE_FORMAT_MAGIC.length);
        channel.read(magic, 0);
        return Arrays.equals(magic.array(), FILE_FORMAT_MAGIC);
    }

    /** The row numbers of an indices mapping, each checked against the {@code rows} rows. */
    private static int[] indices(List<Path> files, BufferAllocator allocator, int rows) {
        Map<String, List<Object>> mapping = new LinkedHashMap<>();
        for (int i = 0; i < files.size(); i++) {
            read(files.get(i), allocator, mapping, i == 0 ? null : files.get(0), "");
        }
        List<Object> values = mapping.isEmpty() ? List.of() : mapping.values().iterator().next();
        int[] indices = new int[values.size()];
        for (int i = 0; i < indices.length; i++) {
            Object v = values.get(i);
            if (!(v instanceof Long index) || index < 0 || index >= rows) {
                throw DatasetException.inFile(files.get(0), "indices mapping entry " + i + " is " + v + ", not a row "
                        + "number in [0, " + rows + "); the directory is inconsistent, save the dataset again");
            }
            indices[i] = (int) (long) index;
        }
        return indices;
    }

    // ---------------------------------------------------------------- saving

    /** See {@link Dataset#saveToDisk}. */
    static void save(Dataset dataset, Path dir) {
        Objects.requireNonNull(dir, "dir");
        Map<String, ColumnKind> kinds = new LinkedHashMap<>();
        ObjectNode features = JsonNodeFactory.instance.objectNode();
        for (String name : dataset.columnNames()) {
            ColumnKind kind = ColumnKind.infer(name, dataset.column(name));
            kinds.put(name, kind);
            features.set(name, kind.feature());
        }
        replaceDirectory(dir, staging -> {
            Path data = staging.resolve(DATA_FILE);
            writeArrow(data, dataset, kinds, features);
            writeJson(staging.resolve(INFO), info(features));
            writeJson(staging.resolve(STATE), state(fingerprint(data)));
        });
    }

    private static void writeArrow(Path file, Dataset dataset, Map<String, ColumnKind> kinds, ObjectNode features)
            throws IOException {
        List<Field> fields = new ArrayList<>();
        kinds.forEach((name, kind) -> fields.add(kind.field(name)));
        ObjectNode info = JsonNodeFactory.instance.objectNode();
        info.putObject("info").set("features", features);
        Schema schema = new Schema(fields, Map.of("huggingface", info.toString()));
        List<String> names = new ArrayList<>(kinds.keySet());
        List<ColumnKind> columnKinds = new ArrayList<>(kinds.values());
        try (BufferAllocator allocator = allocator();
                VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
                FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                ArrowStreamWriter writer = new ArrowStreamWriter(root, null, channel)) {
            writer.start();
            for (int from = 0; from < dataset.size(); from += BATCH_ROWS) {
                int to = Math.min(dataset.size(), from + BATCH_ROWS);
                root.allocateNew();
                for (int c = 0; c < names.size(); c++) {
                    FieldVector vector = root.getVector(c);
                    for (int row = from; row < to; row++) {
                        try {
                            columnKinds.get(c).writeNullable(vector, row - from, dataset.get(row).get(names.get(c)));
                        } catch (DatasetException e) {
                            throw new DatasetException("cannot save column '" + names.get(c) + "' (row " + row + "): "
                                    + e.getMessage(), e);
                        }
                    }
                }
                root.setRowCount(to - from);
                writer.writeBatch();
            }
            writer.end();
            channel.force(true);
        }
    }

    /** {@code dataset_info.json} as {@code datasets} writes it for a dataset made in memory. */
    private static ObjectNode info(ObjectNode features) {
        ObjectNode info = JsonNodeFactory.instance.objectNode();
        info.put("citation", "");
        info.put("description", "");
        info.set("features", features);
        info.put("homepage", "");
        info.put("license", "");
        return info;
    }

    private static ObjectNode state(String fingerprint) {
        ObjectNode state = JsonNodeFactory.instance.objectNode();
        ArrayNode dataFiles = state.putArray("_data_files");
        dataFiles.addObject().put("filename", DATA_FILE);
        state.put("_fingerprint", fingerprint);
        state.putNull("_format_columns");
        state.putObject("_format_kwargs");
        state.putNull("_format_type");
        state.put("_output_all_columns", false);
        state.putNull("_split");
        return state;
    }

    /** 16 hex digits of the data's SHA-256 ({@code datasets} keys its caches by such fingerprints). */
    private static String fingerprint(Path data) throws IOException {
        try (InputStream in = Files.newInputStream(data)) {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[1 << 16];
            for (int n; (n = in.read(buffer)) > 0; ) {
                sha.update(buffer, 0, n);
            }
            return HexFormat.of().formatHex(sha.digest(), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }

    // ---------------------------------------------------------------- files

    /**
     * A root allocator, checked to reach native memory through NIO buffers as reading and writing
     * need (on Java 17 only with {@code --add-opens=java.base/java.nio=ALL-UNNAMED}).
     */
    private static BufferAllocator allocator() {
        BufferAllocator allocator = new RootAllocator();
        try (ArrowBuf probe = allocator.buffer(Long.BYTES)) {
            probe.nioBuffer(0, Long.BYTES);
            return allocator;
        } catch (RuntimeException | LinkageError e) {
            allocator.close();
            throw new DatasetException("Arrow cannot reach native memory (" + e + "); reading and writing "
                    + "save_to_disk directories needs the JVM option --add-opens=java.base/java.nio=ALL-UNNAMED "
                    + "(bin/comlrl and the Maven tests pass it)", e);
        }
    }

    private static JsonNode readJson(Path file) {
        try {
            JsonNode node = JsonValues.MAPPER.readTree(file.toFile());
            if (node == null || !node.isObject()) {
                throw DatasetException.inFile(file, "is not a JSON object; the directory is damaged, save it again");
            }
            return node;
        } catch (IOException e) {
            throw DatasetException.inFile(file, "cannot read JSON: " + e.getMessage() + "; the directory is damaged, "
                    + "save it again", e);
        }
    }

    private static void writeJson(Path file, JsonNode json) throws IOException {
        byte[] bytes = JsonValues.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(json);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(bytes));
            channel.force(true);
        }
    }

    /** Writes the files of a directory into a new empty one. */
    @FunctionalInterface
    private interface DirectoryWriter {
        void write(Path dir) throws IOException;
    }

    /**
     * Writes {@code target} with {@code writer} atomically: into a new sibling
     * {@code .NAME.saving-XXXX} first; only when every file is complete is the old directory
     * renamed away, the new one renamed into place and the old one deleted. On failure
     * {@code target} is as before and the sibling is gone.
     */
    private static void replaceDirectory(Path target, DirectoryWriter writer) {
        Path dir = target.toAbsolutePath().normalize();
        Path parent = dir.getParent();
        if (parent == null) {
            throw DatasetException.inFile(target, "cannot save a task set as the root directory; choose a directory");
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw DatasetException.inFile(target, "exists and is not a directory; remove it or choose another path");
        }
        if (Files.isDirectory(dir) && !isEmptyOrSaved(dir)) {
            throw DatasetException.inFile(target, "holds files that save_to_disk did not write (it has no " + STATE
                    + " or " + DICT + "), which saving would delete; choose a new or empty directory");
        }
        if (Path.of("").toAbsolutePath().startsWith(dir)) {
            throw DatasetException.inFile(target, "is the working directory or contains it; choose another directory");
        }
        Path staging = null;
        try {
            Files.createDirectories(parent);
            staging = createSibling(dir, ".saving-");
            writer.write(staging);
            if (!Files.exists(dir)) {
                Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
                return;
            }
            Path old = parent.resolve(staging.getFileName() + ".old");
            Files.move(dir, old, StandardCopyOption.ATOMIC_MOVE);
            try {
                Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                Files.move(old, dir, StandardCopyOption.ATOMIC_MOVE);
                throw e;
            }
            deleteRecursively(old);
        } catch (IOException e) {
            throw new DatasetException("cannot save the task set to " + target + ": " + e
                    + " (what was there before is unchanged)", e);
        } finally {
            if (staging != null && Files.exists(staging)) {
                deleteRecursively(staging);
            }
        }
    }

    private static boolean isEmptyOrSaved(Path dir) {
        if (Files.isRegularFile(dir.resolve(STATE)) || Files.isRegularFile(dir.resolve(DICT))) {
            return true;
        }
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        } catch (IOException e) {
            return false;
        }
    }

    /** A new directory {@code .NAME<infix>XXXX} beside {@code dir}, with the default (umask) permissions. */
    private static Path createSibling(Path dir, String infix) throws IOException {
        for (int attempt = 0; ; attempt++) {
            String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
            try {
                return Files.createDirectory(dir.resolveSibling("." + dir.getFileName() + infix + suffix));
            } catch (FileAlreadyExistsException e) {
                if (attempt >= 100) {
                    throw e;
                }
            }
        }
    }

    /** Deletes {@code dir} and everything in it, as far as possible (what remains is only clutter). */
    private static void deleteRecursively(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // a leftover hidden sibling does not change what was saved
        }
    }

}
