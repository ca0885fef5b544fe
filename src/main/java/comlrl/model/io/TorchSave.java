package comlrl.model.io;

import comlrl.model.io.StateDictPickle.StorageRef;
import comlrl.model.io.StateDictPickle.TensorRef;
import comlrl.tensor.DType;
import comlrl.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

/**
 * State dicts (tensor names to tensors) in PyTorch's {@code torch.save} file format, the
 * {@code .pt} files Python opens with {@code torch.load(path, weights_only=True)}.
 *
 * <p>The format: an uncompressed zip archive whose entries share one top-level folder
 * ({@code <name>/}): {@code data.pkl} (the pickled dict, see {@link StateDictPickle}), one record
 * {@code data/<key>} of raw little-endian bytes per storage, {@code byteorder} ({@code little}) and
 * {@code version} ({@code 3}). As {@code torch.save} does, every record's bytes start at a multiple of
 * 64 bytes in the file (the local header's extra field pads it), so the file can be memory-mapped.
 *
 * <p>What we write is a plain dict, which libtorch's {@code torch::pickle_load} reads as well.
 * What we read is any such archive whose pickle a weights-only load accepts: files from
 * {@code torch.save(module.state_dict(), path)} (an OrderedDict with {@code _metadata}), from
 * {@code torch.save(dict(...))}, and from libtorch's {@code torch::pickle_save}.
 *
 * <p>Why not libtorch's own functions: {@code torch::pickle_save} wraps the dict in
 * {@code torch.jit._pickle.restore_type_tag}, a global {@code torch.load(weights_only=True)} refuses,
 * and {@code torch::pickle_load} turns the OrderedDict that {@code state_dict()} pickles into None.
 */
public final class TorchSave {
    /** Byte alignment of every record's data, as {@code torch.save} writes it. */
    static final int ALIGNMENT = 64;
    private static final int LOCAL_HEADER = 30;
    private static final int CENTRAL_HEADER = 46;
    private static final int END_RECORD = 22;
    private static final int PADDING_TAG = 0x4246; // "FB", the extra-field id PyTorch pads with
    private static final long ZIP32_LIMIT = 0xffffffffL;

    private TorchSave() {
    }

    // ---------------------------------------------------------------- writing

    /**
     * Writes {@code tensors} (name order kept; each stored contiguous, on its own storage, in its own
     * dtype) to {@code file}: free space checked, then written atomically (temporary file, forced,
     * renamed over {@code file}).
     *
     * @throws java.io.UncheckedIOException naming the file when the write fails; a previous file is
     *     then unchanged
     */
    public static void save(Map<String, Tensor> tensors, Path file) {
        Map<String, TensorRef> refs = new LinkedHashMap<>();
        Map<String, byte[]> storages = new LinkedHashMap<>();
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            Tensor t = e.getValue();
            String key = Integer.toString(refs.size());
            refs.put(e.getKey(), new TensorRef(new StorageRef(t.dtype(), key, "cpu", t.numel()), 0, t.shape(),
                    rowMajorStrides(t.shape())));
            storages.put(key, t.toBytes());
        }
        byte[] archive = archive(archiveName(file), refs, storages, file);
        DiskSpace.require(file.toAbsolutePath().getParent(), archive.length, file.getFileName().toString());
        Safetensors.writeSmallFile(file, archive);
    }

    /**
     * The archive bytes of tensors {@code refs} over storages {@code storages} (key to raw bytes),
     * in the order {@code torch.save} writes its records; {@code file} names the target in messages.
     */
    static byte[] archive(String folder, Map<String, TensorRef> refs, Map<String, byte[]> storages, Path file) {
        List<Record> records = new ArrayList<>();
        records.add(new Record(folder + "/data.pkl", StateDictPickle.write(refs)));
        records.add(new Record(folder + "/byteorder", "little".getBytes(StandardCharsets.US_ASCII)));
        storages.forEach((key, bytes) -> records.add(new Record(folder + "/data/" + key, bytes)));
        records.add(new Record(folder + "/version", "3\n".getBytes(StandardCharsets.US_ASCII)));
        return zip(records, file);
    }

    /** One archive entry: its full name and bytes. */
    private record Record(String name, byte[] data) {
    }

    /** The archive folder {@code torch.save} uses: the file name without its extension. */
    private static String archiveName(Path file) {
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        String stem = dot > 0 ? name.substring(0, dot) : name;
        return stem.isEmpty() || !stem.chars().allMatch(c -> c > 0x20 && c < 0x7f) ? "archive" : stem;
    }

    static long[] rowMajorStrides(long[] shape) {
        long[] stride = new long[shape.length];
        long s = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            stride[i] = s;
            s *= Math.max(shape[i], 1);
        }
        return stride;
    }

    /** An uncompressed zip of {@code records}, each record's data aligned to {@link #ALIGNMENT}. */
    private static byte[] zip(List<Record> records, Path file) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream central = new ByteArrayOutputStream();
        for (Record r : records) {
            byte[] name = r.name().getBytes(StandardCharsets.UTF_8);
            long offset = out.size();
            int padding = (int) ((ALIGNMENT - (offset + LOCAL_HEADER + name.length) % ALIGNMENT) % ALIGNMENT);
            if (padding > 0 && padding < 4) {
                padding += ALIGNMENT; // an extra field needs at least its 4-byte header
            }
            CRC32 crc = new CRC32();
            crc.update(r.data());
            long end = offset + LOCAL_HEADER + name.length + padding + r.data().length;
            if (end > ZIP32_LIMIT) {
                throw new IllegalArgumentException("Cannot write " + file + ": " + end + " bytes exceed the 4 GB a "
                        + "zip without zip64 holds; save such large tensors as safetensors");
            }
            ByteBuffer local = header(LOCAL_HEADER + name.length + padding);
            local.putInt(0x04034b50).putShort((short) 20);
            entryFields(local, crc.getValue(), r.data().length, name.length);
            local.putShort((short) padding).put(name);
            if (padding > 0) {
                local.putShort((short) PADDING_TAG).putShort((short) (padding - 4)); // then zeros
            }
            out.writeBytes(local.array());
            out.writeBytes(r.data());

            ByteBuffer entry = header(CENTRAL_HEADER + name.length);
            entry.putInt(0x02014b50).putShort((short) 20).putShort((short) 20);
            entryFields(entry, crc.getValue(), r.data().length, name.length);
            entry.putShort((short) 0)          // extra field length
                    .putShort((short) 0)       // comment length
                    .putShort((short) 0)       // disk number
                    .putShort((short) 0)       // internal attributes
                    .putInt(0)                 // external attributes
                    .putInt((int) offset)      // local header offset
                    .put(name);
            central.writeBytes(entry.array());
        }
        long centralOffset = out.size();
        if (centralOffset + central.size() + END_RECORD > ZIP32_LIMIT) {
            throw new IllegalArgumentException("Cannot write " + file + ": too large for a zip without zip64; save "
                    + "such large tensors as safetensors");
        }
        out.writeBytes(central.toByteArray());
        ByteBuffer end = header(END_RECORD);
        end.putInt(0x06054b50).putShort((short) 0).putShort((short) 0)
                .putShort((short) records.size()).putShort((short) records.size())
                .putInt(central.size()).putInt((int) centralOffset).putShort((short) 0);
        out.writeBytes(end.array());
        return out.toByteArray();
    }

    private static ByteBuffer header(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Flags, method (stored), DOS time and date (1980-01-01 00:00), CRC, sizes, name length. */
    private static void entryFields(ByteBuffer b, long crc, int size, int nameLength) {
        b.putShort((short) 0).putShort((short) 0).putShort((short) 0).putShort((short) 0x21)
                .putInt((int) crc).putInt(size).putInt(size).putShort((short) nameLength);
    }

    // ---------------------------------------------------------------- reading

    /**
     * Loads every tensor of a {@code torch.save} file onto the CPU, by name in file order. Fails
     * naming the file when it is not such an archive, when its pickle holds anything but a dict of
     * tensors (nothing in it is executed), or when a record is missing or too short.
     */
    public static Map<String, Tensor> load(Path file) {
        checkMagic(file);
        try (ZipFile zip = new ZipFile(file.toFile())) {
            String folder = folder(zip, file);
            if (zip.getEntry(folder + "constants.pkl") != null) {
                throw new IllegalArgumentException(file + " is a TorchScript archive (torch.jit.save), not a state "
                        + "dict: save it with torch.save(module.state_dict(), path)");
            }
            ZipEntry order = zip.getEntry(folder + "byteorder");
            if (order != null && !"little".equals(new String(read(zip, order), StandardCharsets.US_ASCII).trim())) {
                throw new IllegalArgumentException(file + " was written on a big-endian machine; load and re-save "
                        + "it with torch on a little-endian one");
            }
            Map<String, TensorRef> refs = StateDictPickle.read(read(zip, zip.getEntry(folder + "data.pkl")),
                    file.toString());
            Map<String, byte[]> storages = new LinkedHashMap<>();
            Map<String, Tensor> out = new LinkedHashMap<>();
            try {
                for (Map.Entry<String, TensorRef> e : refs.entrySet()) {
                    TensorRef t = e.getValue();
                    String key = t.storage().key();
                    byte[] data = storages.get(key);
                    if (data == null) {
                        ZipEntry record = zip.getEntry(folder + "data/" + key);
                        if (record == null) {
                            throw new IllegalArgumentException(file + ": tensor '" + e.getKey() + "' is stored in record "
                                    + "data/" + key + ", which the archive lacks: the file is incomplete; save it again");
                        }
                        data = read(zip, record);
                        storages.put(key, data);
                    }
                    out.put(e.getKey(), tensor(e.getKey(), t, data, file));
                }
            } catch (RuntimeException ex) {
                out.values().forEach(Tensor::close);
                throw ex;
            }
            return out;
        } catch (ZipException e) {
            throw new IllegalArgumentException(file + " is not a readable torch.save archive (" + e.getMessage()
                    + "): the file is damaged or truncated; save it again", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("Cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** Zip archives start with "PK\3\4"; torch.save before PyTorch 1.6 wrote a bare pickle. */
    private static void checkMagic(Path file) {
        byte[] head = new byte[4];
        int n;
        try (InputStream in = Files.newInputStream(file)) {
            n = in.readNBytes(head, 0, 4);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("Missing file " + file, e);
        } catch (IOException e) {
            throw new IllegalArgumentException("Cannot read " + file + ": " + e.getMessage(), e);
        }
        if (n == 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4) {
            return;
        }
        if (n >= 1 && (head[0] & 0xff) == 0x80) {
            throw new IllegalArgumentException(file + " is in the legacy torch.save format (before PyTorch 1.6), which "
                    + "is not read: load it in Python and save it again with a current torch.save");
        }
        throw new IllegalArgumentException(file + " is not a torch.save archive (it does not start as a zip file)");
    }

    /** The one top-level folder every record lives in, with its slash. */
    private static String folder(ZipFile zip, Path file) {
        String found = null;
        for (ZipEntry e : java.util.Collections.list(zip.entries())) {
            String n = e.getName();
            int slash = n.indexOf('/');
            if (n.endsWith("/data.pkl") && slash == n.length() - "/data.pkl".length()) {
                if (found != null) {
                    throw new IllegalArgumentException(file + " holds more than one data.pkl; it is not a torch.save "
                            + "archive");
                }
                found = n.substring(0, slash + 1);
            }
        }
        if (found == null) {
            throw new IllegalArgumentException(file + " is a zip file without <name>/data.pkl: it is not a torch.save "
                    + "archive");
        }
        return found;
    }

    private static byte[] read(ZipFile zip, ZipEntry entry) throws IOException {
        try (InputStream in = zip.getInputStream(entry)) {
            return in.readAllBytes();
        }
    }

    /** The tensor {@code t} of {@code storage}'s bytes: contiguous elements from its offset. */
    private static Tensor tensor(String name, TensorRef t, byte[] storage, Path file) {
        DType dtype = t.storage().dtype();
        long available = storage.length / dtype.byteSize();
        if (available < t.storage().numel()) {
            throw new IllegalArgumentException(file + ": storage data/" + t.storage().key() + " of tensor '" + name
                    + "' holds " + storage.length + " bytes, fewer than its " + t.storage().numel() + " " + dtype
                    + " elements: the file is truncated; save it again");
        }
        if (!t.isContiguous()) {
            throw new IllegalArgumentException(file + ": tensor '" + name + "' is a strided view (size "
                    + Arrays.toString(t.size()) + ", stride " + Arrays.toString(t.stride()) + "), which is not read; "
                    + "save contiguous tensors (.contiguous()) instead");
        }
        long end = t.offset() + t.numel();
        if (end > t.storage().numel()) {
            throw new IllegalArgumentException(file + ": tensor '" + name + "' reaches element " + end + " of a storage "
                    + "of " + t.storage().numel() + ": the file is damaged; save it again");
        }
        int from = Math.toIntExact(t.offset() * dtype.byteSize());
        int length = Math.toIntExact(t.numel() * dtype.byteSize());
        return Tensor.fromBytes(ByteBuffer.wrap(storage, from, length), dtype, t.size());
    }
}
