package comlrl.model.io;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.tensor.DType;
import comlrl.tensor.Tensor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * The safetensors format: an 8-byte little-endian header length N, N bytes of a UTF-8 JSON object
 * (starting with <code>{</code>, possibly padded with spaces) mapping each tensor name to
 * {@code {dtype, shape, data_offsets: [begin, end]}} (offsets relative to the data section) plus an
 * optional {@code __metadata__} map of strings to strings, then the data section: the tensors' raw
 * little-endian bytes.
 *
 * <p><b>Validation</b> on read, as the format requires: the header fits the file and is at most
 * 100,000,000 bytes; every dtype is known; shapes are non-negative integers; names are unique;
 * {@code end - begin == numel * dtype size}; and the tensors tile the data section exactly, without
 * overlaps, holes or trailing bytes. A file breaking any rule is refused with a message naming the
 * file and the rule, so a damaged header never loads garbage.
 *
 * <p><b>Reading</b> copies each tensor's bytes with ordinary positional reads straight into native
 * memory; the Java heap never holds tensor data and nothing stays mapped. <b>Writing</b> checks the
 * free disk space first, then writes a temporary file beside the target with ordinary
 * {@code write} calls (chunked, from native memory), forces it to disk and renames it over the
 * target: a full disk is an {@link UncheckedIOException} that names the file and leaves the previous
 * file, if any, untouched, and no temporary file behind.
 *
 * <p>Sharded checkpoints ({@code model.safetensors.index.json} with a {@code weight_map}) are read
 * and written as Hugging Face does; the index and the shards must agree tensor for tensor.
 */
public final class Safetensors {
    /** Header entry of one tensor. */
    public record Entry(String name, DType dtype, long[] shape, long begin, long end) {
        public long numel() {
            long n = 1;
            for (long d : shape) {
                n *= d;
            }
            return n;
        }
    }

    /**
     * Tensors of a model directory with the file each came from (for messages). Owns the tensors:
     * close it.
     */
    public record LoadedWeights(Map<String, Tensor> tensors, Map<String, Path> files) implements AutoCloseable {
        /** The file {@code name} was read from. */
        public Path file(String name) {
            return files.get(name);
        }

        @Override
        public void close() {
            tensors.values().forEach(Tensor::close);
        }
    }

    public static final String SINGLE_FILE = "model.safetensors";
    public static final String INDEX_FILE = "model.safetensors.index.json";
    /** Shard files as Hugging Face names them. */
    static final Pattern SHARD_NAME = Pattern.compile("model-\\d{5}-of-\\d{5}\\.safetensors");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper STRICT_JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    /** The largest header the safetensors reference implementation accepts. */
    static final long MAX_HEADER = 100_000_000L;
    /** Bytes per read or write call: large enough for full speed, small enough for any buffer. */
    private static final int CHUNK = 16 << 20;

    /** Opens the temporary file a save writes; tests substitute channels that fail like a full disk. */
    interface Opener {
        WritableByteChannel open(Path tmp) throws IOException;
    }

    static final Opener FILES = tmp -> FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    static volatile Opener opener = FILES;

    private Safetensors() {
    }

    // ------------------------------------------------------------------ reading

    /** Reads and checks the header of one safetensors file (entries in file order). */
    public static List<Entry> readHeader(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return parseHeader(ch, file).entries;
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("Missing safetensors file " + file, e);
        } catch (IOException e) {
            throw new IllegalArgumentException("Cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** Loads every tensor of one file onto the CPU, in header order. */
    public static Map<String, Tensor> load(Path file) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            Header h = parseHeader(ch, file);
            for (Entry e : h.entries) {
                long[] position = {h.dataStart + e.begin};
                Tensor t = Tensor.fromByteChunks(e.dtype, CHUNK, chunk -> {
                    try {
                        position[0] += readFully(ch, chunk, position[0]);
                    } catch (IOException x) {
                        throw new UncheckedIOException(x);
                    }
                }, e.shape);
                out.put(e.name, t);
            }
        } catch (NoSuchFileException e) {
            closeAll(out);
            throw new IllegalArgumentException("Missing safetensors file " + file, e);
        } catch (IOException | UncheckedIOException e) {
            closeAll(out);
            IOException cause = e instanceof UncheckedIOException u ? u.getCause() : (IOException) e;
            throw new IllegalArgumentException("Cannot read " + file + ": " + cause.getMessage(), e);
        } catch (RuntimeException e) {
            closeAll(out);
            throw e;
        }
        return out;
    }

    /**
     * Loads the weights of a model directory: {@code model.safetensors}, or the shards listed by
     * {@code model.safetensors.index.json}.
     */
    public static Map<String, Tensor> loadModelDir(Path dir) {
        return loadModelWeights(dir).tensors();
    }

    /**
     * The weights of a model directory with the file of each tensor: {@code model.safetensors},
     * or the shards listed by {@code model.safetensors.index.json}, which must agree with the
     * shards exactly (every listed shard present, every listed tensor in its shard, no tensor
     * unlisted or listed twice).
     */
    public static LoadedWeights loadModelWeights(Path dir) {
        Path single = dir.resolve(SINGLE_FILE);
        Map<String, Tensor> tensors = new LinkedHashMap<>();
        Map<String, Path> files = new LinkedHashMap<>();
        if (Files.isRegularFile(single)) {
            tensors.putAll(load(single));
            tensors.keySet().forEach(k -> files.put(k, single));
            return new LoadedWeights(tensors, files);
        }
        Path index = dir.resolve(INDEX_FILE);
        if (!Files.isRegularFile(index)) {
            throw new IllegalArgumentException("No " + SINGLE_FILE + " or " + INDEX_FILE + " in " + dir
                    + ": save the model with safe_serialization (the default in transformers)");
        }
        Map<String, String> weightMap = readIndex(index);
        Map<String, List<String>> byShard = new LinkedHashMap<>();
        weightMap.forEach((tensor, shard) -> byShard.computeIfAbsent(shard, s -> new ArrayList<>()).add(tensor));
        try {
            for (Map.Entry<String, List<String>> s : byShard.entrySet()) {
                Path shard = dir.resolve(s.getKey());
                if (!Files.isRegularFile(shard)) {
                    throw new IllegalArgumentException(index + " lists shard " + s.getKey() + " (for " + s.getValue().size()
                            + " tensors, e.g. '" + s.getValue().get(0) + "') but " + dir + " has no such file: the "
                            + "download or copy is incomplete; fetch the missing shard again");
                }
                Map<String, Tensor> part = load(shard);
                tensors.putAll(part);
                for (String name : part.keySet()) {
                    files.put(name, shard);
                    String listed = weightMap.get(name);
                    if (!s.getKey().equals(listed)) {
                        throw new IllegalArgumentException(shard + " holds tensor '" + name + "' but " + index + " "
                                + (listed == null ? "does not list it" : "places it in " + listed)
                                + ": the index and the shards disagree; save the model again");
                    }
                }
                for (String name : s.getValue()) {
                    if (!part.containsKey(name)) {
                        throw new IllegalArgumentException(index + " places tensor '" + name + "' in " + s.getKey()
                                + " but that shard does not hold it: the index and the shards disagree; save the "
                                + "model again");
                    }
                }
            }
        } catch (RuntimeException e) {
            closeAll(tensors);
            throw e;
        }
        return new LoadedWeights(tensors, files);
    }

    /**
     * The name and shape of every tensor of a model directory, read from the headers alone
     * ({@code model.safetensors}, or each shard {@code model.safetensors.index.json} lists), so a
     * checkpoint can be checked before its weights load.
     */
    public static Map<String, long[]> modelTensorShapes(Path dir) {
        List<Path> files = new ArrayList<>();
        Path single = dir.resolve(SINGLE_FILE);
        if (Files.isRegularFile(single)) {
            files.add(single);
        } else {
            Path index = dir.resolve(INDEX_FILE);
            if (!Files.isRegularFile(index)) {
                throw new IllegalArgumentException("No " + SINGLE_FILE + " or " + INDEX_FILE + " in " + dir
                        + ": save the model with safe_serialization (the default in transformers)");
            }
            shardFiles(index).forEach(shard -> files.add(dir.resolve(shard)));
        }
        Map<String, long[]> shapes = new LinkedHashMap<>();
        for (Path file : files) {
            readHeader(file).forEach(e -> shapes.put(e.name(), e.shape()));
        }
        return shapes;
    }

    /** The distinct shard file names an index lists, in first-use order. */
    public static List<String> shardFiles(Path index) {
        return new ArrayList<>(new java.util.LinkedHashSet<>(readIndex(index).values()));
    }

    /** An index's {@code weight_map}: tensor name to shard file name (a plain name in the same directory). */
    static Map<String, String> readIndex(Path index) {
        JsonNode root;
        try {
            root = STRICT_JSON.readTree(Files.readString(index));
        } catch (IOException e) {
            throw new IllegalArgumentException("Malformed JSON in " + index + ": " + e.getMessage(), e);
        }
        JsonNode map = root == null ? null : root.get("weight_map");
        if (map == null || !map.isObject()) {
            throw new IllegalArgumentException(index + " has no weight_map object");
        }
        Map<String, String> out = new LinkedHashMap<>();
        map.fields().forEachRemaining(f -> {
            if (!f.getValue().isTextual()) {
                throw new IllegalArgumentException(index + ": weight_map entry '" + f.getKey()
                        + "' must be a shard file name (a string), got " + f.getValue());
            }
            String name = f.getValue().asText();
            if (name.isEmpty() || name.contains("/") || name.contains("\\") || name.startsWith(".")
                    || name.chars().anyMatch(c -> c < 0x20)) {
                throw new IllegalArgumentException(index + ": shard name '" + name + "' must be a plain file name");
            }
            out.put(f.getKey(), name);
        });
        return out;
    }

    // ------------------------------------------------------------------ writing

    /** Writes {@code tensors} (name order kept) to one file, atomically. */
    public static void save(Map<String, Tensor> tensors, Path file) {
        save(tensors, file, Map.of("format", "pt"));
    }

    /**
     * Writes {@code tensors} with {@code metadata} to one file: free space checked first, then a
     * temporary file beside it written, forced to disk and renamed over {@code file}.
     *
     * @throws UncheckedIOException naming the file when the disk is full or the write fails; the
     *     previous {@code file}, if any, is then unchanged and no temporary file remains
     */
    public static void save(Map<String, Tensor> tensors, Path file, Map<String, String> metadata) {
        Layout layout = layout(tensors, metadata);
        Path parent = parentOf(file);
        createDirectories(parent, file);
        DiskSpace.require(parent, layout.totalBytes(), file.getFileName().toString());
        write(tensors, layout, file);
    }

    /**
     * Writes a model's weights into {@code dir}: one {@code model.safetensors} when the total is at
     * most {@code maxShardBytes}, else {@code model-0000i-of-0000n.safetensors} shards plus
     * {@code model.safetensors.index.json}, as Hugging Face's {@code save_pretrained} does. Free
     * space for all files is checked before any is written; weight files of an earlier save that
     * the new layout does not use are deleted only after every new file is in place.
     */
    public static void saveModelDir(Map<String, Tensor> tensors, Path dir, long maxShardBytes) {
        List<Map<String, Tensor>> shards = new ArrayList<>();
        Map<String, Tensor> current = new LinkedHashMap<>();
        long currentBytes = 0;
        long total = 0;
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            long bytes = byteSize(e.getValue());
            if (!current.isEmpty() && currentBytes + bytes > maxShardBytes) {
                shards.add(current);
                current = new LinkedHashMap<>();
                currentBytes = 0;
            }
            current.put(e.getKey(), e.getValue());
            currentBytes += bytes;
            total += bytes;
        }
        shards.add(current);
        Map<String, String> metadata = Map.of("format", "pt");
        List<Layout> layouts = new ArrayList<>();
        long fileBytes = 0;
        for (Map<String, Tensor> shard : shards) {
            Layout l = layout(shard, metadata);
            layouts.add(l);
            fileBytes += l.totalBytes();
        }
        createDirectories(dir, dir.resolve(SINGLE_FILE));
        DiskSpace.require(dir, fileBytes, "the model weights (" + shards.size() + " file" + (shards.size() == 1 ? "" : "s")
                + ")");
        Set<String> written = new HashSet<>();
        if (shards.size() == 1) {
            write(shards.get(0), layouts.get(0), dir.resolve(SINGLE_FILE));
            written.add(SINGLE_FILE);
        } else {
            ObjectNode index = JSON.createObjectNode();
            index.putObject("metadata").put("total_size", total);
            ObjectNode weightMap = index.putObject("weight_map");
            Map<String, String> sorted = new TreeMap<>();
            for (int i = 0; i < shards.size(); i++) {
                String name = String.format("model-%05d-of-%05d.safetensors", i + 1, shards.size());
                write(shards.get(i), layouts.get(i), dir.resolve(name));
                written.add(name);
                for (String key : shards.get(i).keySet()) {
                    sorted.put(key, name);
                }
            }
            sorted.forEach(weightMap::put);
            try {
                writeSmallFile(dir.resolve(INDEX_FILE), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(index) + "\n");
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            written.add(INDEX_FILE);
        }
        deleteStaleWeights(dir, written);
    }

    /** Whether {@code fileName} is a weight file of a Hugging Face model directory (single, index or shard). */
    static boolean isWeightFile(String fileName) {
        return fileName.equals(SINGLE_FILE) || fileName.equals(INDEX_FILE) || SHARD_NAME.matcher(fileName).matches();
    }

    /** Deletes weight files in {@code dir} other than {@code keep}. */
    private static void deleteStaleWeights(Path dir, Set<String> keep) {
        try (var list = Files.list(dir)) {
            for (Path p : (Iterable<Path>) list::iterator) {
                String name = p.getFileName().toString();
                if (isWeightFile(name) && !keep.contains(name)) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Saved new weights in " + dir + " but cannot delete the old ones ("
                    + e.getMessage() + "); delete the weight files the new " + SINGLE_FILE + " or " + INDEX_FILE
                    + " does not use by hand", e);
        }
    }

    /**
     * A small text file (JSON) written as the weights are: temporary file, forced, renamed over
     * {@code file}; an {@link UncheckedIOException} naming the file on failure.
     */
    public static void writeSmallFile(Path file, String text) {
        writeSmallFile(file, text.getBytes(StandardCharsets.UTF_8));
    }

    /** A small binary file (held in memory) written atomically as {@link #writeSmallFile(Path, String)} writes text. */
    public static void writeSmallFile(Path file, byte[] bytes) {
        Path parent = parentOf(file);
        createDirectories(parent, file);
        Path tmp = tempSibling(file);
        try {
            try (WritableByteChannel ch = opener.open(tmp)) {
                writeFully(ch, ByteBuffer.wrap(bytes));
                if (ch instanceof FileChannel fc) {
                    fc.force(true);
                }
            }
            moveIntoPlace(tmp, file);
        } catch (IOException | UncheckedIOException e) {
            deleteQuietly(tmp);
            throw writeFailure(file, 0, e);
        }
    }

    /** The header bytes (length prefix included, padded to 8) and total file size. */
    private record Layout(byte[] head, long totalBytes) {
    }

    private static Layout layout(Map<String, Tensor> tensors, Map<String, String> metadata) {
        ObjectNode header = JSON.createObjectNode();
        if (!metadata.isEmpty()) {
            ObjectNode meta = header.putObject("__metadata__");
            metadata.forEach(meta::put);
        }
        long offset = 0;
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            if (e.getKey().equals("__metadata__")) {
                throw new IllegalArgumentException("'__metadata__' is reserved by the safetensors format and cannot "
                        + "name a tensor");
            }
            Tensor t = e.getValue();
            long bytes = byteSize(t);
            ObjectNode n = header.putObject(e.getKey());
            n.put("dtype", t.dtype().safetensorsName());
            var shape = n.putArray("shape");
            for (long d : t.shape()) {
                shape.add(d);
            }
            var offs = n.putArray("data_offsets");
            offs.add(offset);
            offs.add(offset + bytes);
            offset += bytes;
        }
        byte[] headerBytes;
        try {
            headerBytes = JSON.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        int padded = (headerBytes.length + 7) / 8 * 8;
        ByteBuffer head = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
        head.putLong(padded).put(headerBytes);
        while (head.hasRemaining()) {
            head.put((byte) ' ');
        }
        return new Layout(head.array(), 8L + padded + offset);
    }

    private static void write(Map<String, Tensor> tensors, Layout layout, Path file) {
        Path tmp = tempSibling(file);
        try {
            try (WritableByteChannel ch = opener.open(tmp)) {
                writeFully(ch, ByteBuffer.wrap(layout.head()));
                for (Tensor t : tensors.values()) {
                    t.forEachByteChunk(CHUNK, chunk -> {
                        try {
                            writeFully(ch, chunk);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
                }
                if (ch instanceof FileChannel fc) {
                    fc.force(true);
                }
            }
            long size = Files.size(tmp);
            if (size != layout.totalBytes()) {
                throw new IOException("wrote " + size + " bytes instead of " + layout.totalBytes());
            }
            moveIntoPlace(tmp, file);
        } catch (IOException | UncheckedIOException e) {
            deleteQuietly(tmp);
            throw writeFailure(file, layout.totalBytes(), e);
        }
    }

    /** A clear message for a failed write: the file, the cause, the free space, what was kept. */
    private static UncheckedIOException writeFailure(Path file, long bytes, Exception e) {
        IOException cause = e instanceof UncheckedIOException u ? u.getCause() : (IOException) e;
        Path parent = parentOf(file);
        long free = Files.isDirectory(parent) ? DiskSpace.usableBytes(parent) : -1;
        String space = bytes > 0 && free >= 0
                ? " (" + DiskSpace.describe(bytes) + " to write, " + DiskSpace.describe(free) + " free there)" : "";
        return new UncheckedIOException("Cannot write " + file + ": " + describe(cause) + space + ". "
                + (Files.exists(file) ? "The previous " + file.getFileName() + " is unchanged. " : "")
                + "Check free space and permissions, or write elsewhere.", cause);
    }

    private static String describe(IOException e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
    }

    private static Path tempSibling(Path file) {
        long r = ThreadLocalRandom.current().nextLong() >>> 1;
        return file.resolveSibling("." + file.getFileName() + "." + Long.toString(r, 36) + ".tmp");
    }

    private static void moveIntoPlace(Path tmp, Path file) throws IOException {
        try {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static Path parentOf(Path file) {
        return file.toAbsolutePath().getParent();
    }

    private static void createDirectories(Path dir, Path file) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write " + file + ": cannot create " + dir + " ("
                    + describe(e) + "); check permissions and free space", e);
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // the original error matters more
        }
    }

    private static void writeFully(WritableByteChannel ch, ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) {
            if (ch.write(buf) == 0 && buf.hasRemaining()) {
                Thread.onSpinWait();
            }
        }
    }

    private static long byteSize(Tensor t) {
        return t.numel() * t.dtype().byteSize();
    }

    private static void closeAll(Map<String, Tensor> tensors) {
        tensors.values().forEach(Tensor::close);
    }

    // ------------------------------------------------------------------ header validation

    private record Header(List<Entry> entries, long dataStart) {
    }

    private static Header parseHeader(FileChannel ch, Path file) throws IOException {
        long size = ch.size();
        if (size < 8) {
            throw new IllegalArgumentException(file + " is not a safetensors file (only " + size
                    + " bytes; truncated?)");
        }
        ByteBuffer lenBuf = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        readFully(ch, lenBuf, 0);
        long headerLen = lenBuf.flip().getLong(); // unsigned: negative means >= 2^63
        if (headerLen < 0 || headerLen > MAX_HEADER) {
            throw new IllegalArgumentException(file + ": header length " + Long.toUnsignedString(headerLen)
                    + " exceeds the safetensors limit of " + MAX_HEADER + " bytes (not a safetensors file?)");
        }
        if (headerLen < 2 || 8 + headerLen > size) {
            throw new IllegalArgumentException(file + ": header length " + headerLen + " does not fit the file of "
                    + size + " bytes (truncated or not safetensors)");
        }
        ByteBuffer hb = ByteBuffer.allocate((int) headerLen);
        readFully(ch, hb, 8);
        hb.flip();
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(hb).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(file + ": safetensors header is not valid UTF-8", e);
        }
        if (text.charAt(0) != '{') {
            throw new IllegalArgumentException(file + ": safetensors header must start with '{' (got byte 0x"
                    + Integer.toHexString(text.charAt(0)) + "; not a safetensors file?)");
        }
        JsonNode root;
        try {
            root = STRICT_JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(file + ": malformed safetensors header JSON: " + e.getOriginalMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException(file + ": safetensors header must be a JSON object");
        }
        long dataStart = 8 + headerLen;
        long dataSize = size - dataStart;
        List<Entry> entries = new ArrayList<>();
        var fields = root.fields();
        while (fields.hasNext()) {
            var f = fields.next();
            if (f.getKey().equals("__metadata__")) {
                checkMetadata(f.getValue(), file);
                continue;
            }
            Entry e = entry(f.getKey(), f.getValue(), file);
            if (e.end > dataSize) {
                throw new IllegalArgumentException(file + ": tensor '" + e.name + "' ends at byte " + e.end
                        + " of the data section but the file holds only " + dataSize + " data bytes (truncated?)");
            }
            entries.add(e);
        }
        checkTiling(entries, dataSize, file);
        return new Header(entries, dataStart);
    }

    private static void checkMetadata(JsonNode meta, Path file) {
        if (!meta.isObject()) {
            throw new IllegalArgumentException(file + ": __metadata__ must be an object of strings, got " + meta);
        }
        meta.fields().forEachRemaining(m -> {
            if (!m.getValue().isTextual()) {
                throw new IllegalArgumentException(file + ": __metadata__ value of '" + m.getKey()
                        + "' must be a string, got " + m.getValue());
            }
        });
    }

    private static Entry entry(String name, JsonNode n, Path file) {
        String where = file + ": tensor '" + name + "'";
        if (!n.isObject()) {
            throw new IllegalArgumentException(where + " must be an object with dtype, shape and data_offsets");
        }
        JsonNode dtypeNode = n.get("dtype");
        JsonNode shapeNode = n.get("shape");
        JsonNode offs = n.get("data_offsets");
        if (dtypeNode == null || !dtypeNode.isTextual() || shapeNode == null || !shapeNode.isArray()
                || offs == null || !offs.isArray() || offs.size() != 2) {
            throw new IllegalArgumentException(where + " needs dtype (a string), shape (an array) and data_offsets "
                    + "[begin, end]");
        }
        DType dtype;
        try {
            dtype = DType.fromSafetensors(dtypeNode.asText());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
        long[] shape = new long[shapeNode.size()];
        long numel = 1;
        for (int i = 0; i < shape.length; i++) {
            shape[i] = nonNegativeLong(shapeNode.get(i), where + " shape");
            try {
                numel = Math.multiplyExact(numel, shape[i]);
            } catch (ArithmeticException x) {
                throw new IllegalArgumentException(where + " has an impossibly large shape " + shapeNode);
            }
        }
        long begin = nonNegativeLong(offs.get(0), where + " data_offsets");
        long end = nonNegativeLong(offs.get(1), where + " data_offsets");
        if (end < begin) {
            throw new IllegalArgumentException(where + " has data_offsets [" + begin + ", " + end + "] that end before "
                    + "they begin");
        }
        long bytes;
        try {
            bytes = Math.multiplyExact(numel, dtype.byteSize());
        } catch (ArithmeticException x) {
            throw new IllegalArgumentException(where + " has an impossibly large shape " + shapeNode);
        }
        if (end - begin != bytes) {
            throw new IllegalArgumentException(where + " " + dtype.safetensorsName() + " " + Arrays.toString(shape)
                    + " needs " + bytes + " bytes but data_offsets give " + (end - begin));
        }
        return new Entry(name, dtype, shape, begin, end);
    }

    private static long nonNegativeLong(JsonNode v, String what) {
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0) {
            throw new IllegalArgumentException(what + " must hold non-negative integers, got " + v);
        }
        return v.asLong();
    }

    /**
     * The tensors, sorted by offset, must cover {@code [0, dataSize)} exactly: each begins where
     * the previous ended (no overlap, no hole) and the last ends at the end of the file.
     */
    private static void checkTiling(List<Entry> entries, long dataSize, Path file) {
        List<Entry> sorted = new ArrayList<>(entries);
        sorted.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        long expected = 0;
        Entry previous = null;
        for (Entry e : sorted) {
            if (e.begin < expected) {
                throw new IllegalArgumentException(file + ": tensors '" + previous.name + "' and '" + e.name
                        + "' overlap (bytes " + e.begin + ".." + expected + " of the data section): the header is "
                        + "corrupt");
            }
            if (e.begin > expected) {
                throw new IllegalArgumentException(file + ": bytes " + expected + ".." + e.begin + " of the data section "
                        + "belong to no tensor (a hole before '" + e.name + "'): the header is corrupt");
            }
            expected = e.end;
            previous = e;
        }
        if (expected != dataSize) {
            throw new IllegalArgumentException(file + ": the tensors cover " + expected + " bytes but the data section "
                    + "holds " + dataSize + ": the last " + (dataSize - expected) + " bytes belong to no tensor (the "
                    + "header is corrupt or the file has trailing data)");
        }
    }

    /** Reads until {@code buf} is full; returns the bytes read. */
    private static int readFully(FileChannel ch, ByteBuffer buf, long position) throws IOException {
        long pos = position;
        int total = 0;
        while (buf.hasRemaining()) {
            int n = ch.read(buf, pos);
            if (n < 0) {
                throw new IOException("unexpected end of file at byte " + pos + " (the file shrank while being read?)");
            }
            pos += n;
            total += n;
        }
        return total;
    }
}
