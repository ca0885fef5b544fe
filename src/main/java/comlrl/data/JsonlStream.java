package comlrl.data;

import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * A task set read lazily from a JSON Lines file, one line at a time, for sets that do not fit in
 * memory (the counterpart of a Hugging Face {@code IterableDataset}). Each {@link #iterator()}
 * re-opens the file and starts a new pass; only one pass is live at a time (starting one closes
 * the previous one).
 *
 * <p>Position: the stream counts the items handed out by the current pass ({@link #consumed()})
 * and the passes completed to the end ({@link #epoch()}). {@link #stateDict()} records both;
 * after {@link #loadStateDict(Map)}, the next pass skips the consumed items (reading but not
 * parsing their lines) and continues from there, so a resumed run does not repeat them.
 *
 * <p>Rows hold the fields their line holds (there is no column list to fill missing fields from;
 * a missing field reads as null through {@link TaskItem#get}). Values convert as in
 * {@link Dataset#fromJsonl}. Malformed lines fail when reached, with file and line number. Not
 * thread-safe.
 */
public final class JsonlStream implements StatefulTaskSet, AutoCloseable {
    /** State key: items handed out by the current pass. */
    public static final String CONSUMED = "consumed";
    /** State key: passes completed to the end of the file. */
    public static final String EPOCH = "epoch";
    /** State key: the file, for information only (a moved file may be resumed). */
    public static final String FILE = "file";

    private final Path file;
    private long epoch;
    private long consumed;
    private long resumeFrom;
    private Pass live;

    private JsonlStream(Path file) {
        this.file = file;
    }

    /**
     * A stream over {@code file}; nothing is read until the first {@link #iterator()}.
     *
     * @throws DatasetException when the file does not exist or cannot be read
     */
    public static JsonlStream open(Path file) {
        Dataset.requireReadableFile(file);
        return new JsonlStream(file);
    }

    /** The file read. */
    public Path file() {
        return file;
    }

    /** Items handed out by the current (latest) pass; 0 before the first and after a completed pass. */
    public long consumed() {
        return consumed;
    }

    /** Passes read to the end of the file. */
    public long epoch() {
        return epoch;
    }

    /** Always empty: the size is unknown without reading the file. */
    @Override
    public OptionalInt knownSize() {
        return OptionalInt.empty();
    }

    /**
     * Starts a new pass: re-opens the file and, right after {@link #loadStateDict}, skips the
     * items recorded as consumed. Any earlier pass is closed.
     *
     * @throws DatasetException when the recorded position lies past the end of the file (the file
     *     changed since the checkpoint)
     */
    @Override
    public Iterator<TaskItem> iterator() {
        closeLive();
        long skip = resumeFrom;
        resumeFrom = 0;
        JsonlReader reader = JsonlReader.open(file);
        long skipped = reader.skip(skip);
        if (skipped < skip) {
            reader.close();
            throw DatasetException.inFile(file, "cannot resume after " + skip + " consumed items: the file holds only "
                    + skipped + "; it changed since the checkpoint — restore the original file or start without "
                    + "the saved data state");
        }
        consumed = skip;
        live = new Pass(reader);
        return live;
    }

    @Override
    public Map<String, Object> stateDict() {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put(FILE, file.toString());
        state.put(EPOCH, epoch);
        state.put(CONSUMED, consumed);
        return state;
    }

    /**
     * Restores {@code consumed} and {@code epoch} (non-negative integers; {@code epoch} may be
     * absent). The {@code file} entry is not checked.
     */
    @Override
    public void loadStateDict(Map<String, ?> state) {
        Objects.requireNonNull(state, "state");
        long restoredConsumed = count(state, CONSUMED, true);
        long restoredEpoch = state.containsKey(EPOCH) ? count(state, EPOCH, false) : 0;
        closeLive();
        consumed = restoredConsumed;
        resumeFrom = restoredConsumed;
        epoch = restoredEpoch;
    }

    private static long count(Map<String, ?> state, String key, boolean required) {
        Object value = state.get(key);
        if (value == null) {
            throw new IllegalArgumentException("JsonlStream state has no '" + key + "' (keys: " + state.keySet()
                    + "); pass a map produced by JsonlStream.stateDict()");
        }
        if (!(value instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue()) || n.doubleValue() < 0) {
            throw new IllegalArgumentException("JsonlStream state '" + key + "' must be a whole number >= 0, got "
                    + value);
        }
        return n.longValue();
    }

    /** Closes the file of the live pass, if any; its iterator then reports no more items. */
    @Override
    public void close() {
        closeLive();
    }

    private void closeLive() {
        if (live != null) {
            live.finish(false);
            live = null;
        }
    }

    /** One pass over the file. */
    private final class Pass implements Iterator<TaskItem> {
        private final JsonlReader reader;
        private TaskItem next;
        private boolean done;

        Pass(JsonlReader reader) {
            this.reader = reader;
        }

        @Override
        public boolean hasNext() {
            if (next != null) {
                return true;
            }
            if (done) {
                return false;
            }
            Map<String, Object> row;
            try {
                row = reader.next();
            } catch (RuntimeException e) {
                finish(false);
                throw e;
            }
            if (row == null) {
                finish(true);
                return false;
            }
            next = TaskItem.of(row);
            return true;
        }

        @Override
        public TaskItem next() {
            if (!hasNext()) {
                throw new NoSuchElementException("end of " + file);
            }
            TaskItem item = next;
            next = null;
            consumed++;
            return item;
        }

        void finish(boolean reachedEnd) {
            if (done) {
                return;
            }
            done = true;
            next = null;
            reader.close();
            if (reachedEnd && live == this) {
                epoch++;
                consumed = 0;
                live = null;
            }
        }
    }
}
