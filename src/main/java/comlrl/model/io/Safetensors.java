package comlrl.model.io;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.tensor.DType;
import comlrl.tensor.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The safetensors format: an 8-byte little-endian header length, a JSON header mapping each tensor
 * name to {@code {dtype, shape, data_offsets: [begin, end]}} (offsets relative to the data section)
 * plus optional {@code __metadata__}, then the raw little-endian data.
 *
 * <p>Reading maps each tensor's bytes from the file and copies them once into native memory; the
 * Java heap never holds tensor data. Writing maps the output file and copies from native memory.
 * Sharded checkpoints ({@code model.safetensors.index.json} with a {@code weight_map}) are read and
 * written as Hugging Face does.
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

    public static final String SINGLE_FILE = "model.safetensors";
    public static final String INDEX_FILE = "model.safetensors.index.json";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long MAX_HEADER = 100L * 1024 * 1024;

    private Safetensors() {
    }

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
                long length = e.end - e.begin;
                MappedByteBuffer mb = ch.map(FileChannel.MapMode.READ_ONLY, h.dataStart + e.begin, length);
                out.put(e.name, Tensor.fromBytes(mb.order(ByteOrder.LITTLE_ENDIAN), e.dtype, e.shape));
            }
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("Missing safetensors file " + file, e);
        } catch (IOException e) {
            throw new IllegalArgumentException("Cannot read " + file + ": " + e.getMessage(), e);
        }
        return out;
    }

    /**
     * Loads the weights of a model directory: {@code model.safetensors}, or the shards listed by
     * {@code model.safetensors.index.json}.
     */
    public static Map<String, Tensor> loadModelDir(Path dir) {
        Path single = dir.resolve(SINGLE_FILE);
        if (Files.isRegularFile(single)) {
            return load(single);
        }
        Path index = dir.resolve(INDEX_FILE);
        if (!Files.isRegularFile(index)) {
            throw new IllegalArgumentException("No " + SINGLE_FILE + " or " + INDEX_FILE + " in " + dir
                    + ": save the model with safe_serialization (the default in transformers)");
        }
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (String shard : shardFiles(index)) {
            out.putAll(load(dir.resolve(shard)));
        }
        return out;
    }

    /** The distinct shard file names an index lists, in first-use order. */
    public static List<String> shardFiles(Path index) {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readString(index));
        } catch (IOException e) {
            throw new IllegalArgumentException("Malformed JSON in " + index + ": " + e.getMessage(), e);
        }
        JsonNode map = root.get("weight_map");
        if (map == null || !map.isObject()) {
            throw new IllegalArgumentException(index + " has no weight_map object");
        }
        List<String> files = new ArrayList<>();
        map.fields().forEachRemaining(f -> {
            String name = f.getValue().asText();
            if (name.contains("/") || name.contains("\\") || name.startsWith(".")) {
                throw new IllegalArgumentException(index + ": shard name '" + name + "' must be a plain file name");
            }
            if (!files.contains(name)) {
                files.add(name);
            }
        });
        return files;
    }

    /** Writes {@code tensors} (name order kept) to one file, atomically. */
    public static void save(Map<String, Tensor> tensors, Path file) {
        save(tensors, file, Map.of("format", "pt"));
    }

    /** Writes {@code tensors} with {@code metadata} to one file, atomically (temp file + move). */
    public static void save(Map<String, Tensor> tensors, Path file, Map<String, String> metadata) {
        ObjectNode header = JSON.createObjectNode();
        if (!metadata.isEmpty()) {
            ObjectNode meta = header.putObject("__metadata__");
            metadata.forEach(meta::put);
        }
        long offset = 0;
        List<long[]> ranges = new ArrayList<>();
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            Tensor t = e.getValue();
            long bytes = t.numel() * t.dtype().byteSize();
            ObjectNode n = header.putObject(e.getKey());
            n.put("dtype", t.dtype().safetensorsName());
            var shape = n.putArray("shape");
            for (long d : t.shape()) {
                shape.add(d);
            }
            var offs = n.putArray("data_offsets");
            offs.add(offset);
            offs.add(offset + bytes);
            ranges.add(new long[] {offset, bytes});
            offset += bytes;
        }
        byte[] headerBytes;
        try {
            headerBytes = JSON.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        int padded = (headerBytes.length + 7) / 8 * 8;
        byte[] headerPadded = Arrays.copyOf(headerBytes, padded);
        Arrays.fill(headerPadded, headerBytes.length, padded, (byte) ' ');
        long dataStart = 8L + padded;
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp-" + ProcessHandle.current().pid());
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.READ, StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer head = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
                head.putLong(padded).put(headerPadded).flip();
                while (head.hasRemaining()) {
                    ch.write(head, head.position());
                }
                ch.truncate(dataStart + offset);
                Iterator<long[]> r = ranges.iterator();
                for (Tensor t : tensors.values()) {
                    long[] range = r.next();
                    if (range[1] == 0) {
                        continue;
                    }
                    MappedByteBuffer mb = ch.map(FileChannel.MapMode.READ_WRITE, dataStart + range[0], range[1]);
                    t.copyTo(mb);
                    mb.force();
                }
                if (offset == 0) {
                    ch.force(true);
                }
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the original error matters more
            }
            throw new IllegalStateException("Cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Writes a model's weights into {@code dir}: one {@code model.safetensors} when the total is at
     * most {@code maxShardBytes}, else {@code model-0000i-of-0000n.safetensors} shards plus
     * {@code model.safetensors.index.json}, as Hugging Face's {@code save_pretrained} does.
     */
    public static void saveModelDir(Map<String, Tensor> tensors, Path dir, long maxShardBytes) {
        List<Map<String, Tensor>> shards = new ArrayList<>();
        Map<String, Tensor> current = new LinkedHashMap<>();
        long currentBytes = 0;
        long total = 0;
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            long bytes = e.getValue().numel() * e.getValue().dtype().byteSize();
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
        try {
            Files.deleteIfExists(dir.resolve(SINGLE_FILE));
            Files.deleteIfExists(dir.resolve(INDEX_FILE));
        } catch (IOException e) {
            throw new IllegalStateException("Cannot clear old weights in " + dir + ": " + e.getMessage(), e);
        }
        if (shards.size() == 1) {
            save(shards.get(0), dir.resolve(SINGLE_FILE));
            return;
        }
        ObjectNode index = JSON.createObjectNode();
        index.putObject("metadata").put("total_size", total);
        ObjectNode weightMap = index.putObject("weight_map");
        Map<String, String> sorted = new TreeMap<>();
        for (int i = 0; i < shards.size(); i++) {
            String name = String.format("model-%05d-of-%05d.safetensors", i + 1, shards.size());
            save(shards.get(i), dir.resolve(name));
            for (String key : shards.get(i).keySet()) {
                sorted.put(key, name);
            }
        }
        sorted.forEach(weightMap::put);
        try {
            Files.writeString(dir.resolve(INDEX_FILE), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(index) + "\n");
        } catch (IOException e) {
            throw new IllegalStateException("Cannot write " + dir.resolve(INDEX_FILE) + ": " + e.getMessage(), e);
        }
    }

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
        long headerLen = lenBuf.flip().getLong();
        if (headerLen <= 0 || headerLen > MAX_HEADER || 8 + headerLen > size) {
            throw new IllegalArgumentException(file + ": header length " + headerLen + " does not fit the file of "
                    + size + " bytes (truncated or not safetensors)");
        }
        ByteBuffer hb = ByteBuffer.allocate((int) headerLen);
        readFully(ch, hb, 8);
        JsonNode root;
        try {
            root = JSON.readTree(new String(hb.array(), StandardCharsets.UTF_8));
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
                continue;
            }
            JsonNode n = f.getValue();
            JsonNode offs = n.get("data_offsets");
            JsonNode shapeNode = n.get("shape");
            if (!n.hasNonNull("dtype") || offs == null || offs.size() != 2 || shapeNode == null || !shapeNode.isArray()) {
                throw new IllegalArgumentException(file + ": header entry '" + f.getKey()
                        + "' needs dtype, shape and data_offsets [begin, end]");
            }
            DType dtype = DType.fromSafetensors(n.get("dtype").asText());
            long[] shape = new long[shapeNode.size()];
            for (int i = 0; i < shape.length; i++) {
                shape[i] = shapeNode.get(i).asLong();
            }
            Entry e = new Entry(f.getKey(), dtype, shape, offs.get(0).asLong(), offs.get(1).asLong());
            if (e.end - e.begin != e.numel() * dtype.byteSize() || e.begin < 0) {
                throw new IllegalArgumentException(file + ": tensor '" + e.name + "' " + dtype + " "
                        + Arrays.toString(shape) + " needs " + e.numel() * dtype.byteSize()
                        + " bytes but data_offsets give " + (e.end - e.begin));
            }
            if (e.end > dataSize) {
                throw new IllegalArgumentException(file + ": tensor '" + e.name + "' ends at byte " + e.end
                        + " of the data section but the file holds only " + dataSize + " data bytes (truncated?)");
            }
            entries.add(e);
        }
        return new Header(entries, dataStart);
    }

    private static void readFully(FileChannel ch, ByteBuffer buf, long position) throws IOException {
        long pos = position;
        while (buf.hasRemaining()) {
            int n = ch.read(buf, pos);
            if (n < 0) {
                throw new IOException("unexpected end of file");
            }
            pos += n;
        }
    }
}
