package comlrl.data;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * What the streaming task sets ({@link JsonlStream}, {@link ParquetStream}) share: passes over a
 * {@link RowSource}, and the position a checkpoint saves.
 *
 * <p>Each {@link #iterator()} opens the source again and starts a new pass; only one pass is live
 * at a time (starting one closes the previous one). The stream counts the items handed out by the
 * current pass ({@link #consumed()}) and the passes completed to the end ({@link #epoch()});
 * {@link #stateDict()} records both. After {@link #loadStateDict(Map)}, the next pass skips the
 * consumed items ({@link RowSource#skip}) and continues from there, so a resumed run neither
 * repeats nor loses items; later passes start from the beginning.
 *
 * <p>Checks: after {@link #requireRows}, every row a pass reads is checked against the required
 * fields, and a bad row ends the pass with a {@link DatasetException} naming the file and the line
 * or row. Not thread-safe.
 */
abstract class RowStream implements StatefulTaskSet, AutoCloseable {
    /** State key: items handed out by the current pass. */
    static final String CONSUMED = "consumed";
    /** State key: passes completed to the end. */
    static final String EPOCH = "epoch";
    /** Rows {@link #requireRows} reads and checks up front. */
    static final int CHECKED_AHEAD = 1000;

    private RequiredFields required = RequiredFields.none();
    private long epoch;
    private long consumed;
    private long resumeFrom;
    private Pass live;

    /** A fresh source positioned at the first row. */
    abstract RowSource openSource();

    /** Where the rows come from, for messages: a file, a hub dataset. */
    abstract String describe();

    /** Entries identifying the source in {@link #stateDict()}, for information only (never checked). */
    abstract void putSourceState(Map<String, Object> state);

    /** Items handed out by the current (latest) pass; 0 before the first and after a completed pass. */
    public long consumed() {
        return consumed;
    }

    /** Passes read to the end. */
    public long epoch() {
        return epoch;
    }

    /** Always empty: a stream's size is not known before it is read. */
    @Override
    public OptionalInt knownSize() {
        return OptionalInt.empty();
    }

    /**
     * Starts a new pass: opens the source again and, right after {@link #loadStateDict}, skips the
     * items recorded as consumed. Any earlier pass is closed.
     *
     * @throws DatasetException when the recorded position lies past the end of the data (it
     *     changed since the checkpoint)
     */
    @Override
    public Iterator<TaskItem> iterator() {
        closeLive();
        long skip = resumeFrom;
        resumeFrom = 0;
        RowSource source = openSource();
        long skipped;
        try {
            if (!required.isEmpty()) {
                source.requireColumns(required);
            }
            skipped = source.skip(skip);
        } catch (RuntimeException e) {
            source.close();
            throw e;
        }
        if (skipped < skip) {
            source.close();
            throw new DatasetException(describe() + ": cannot resume after " + skip + " consumed items: it holds only "
                    + skipped + "; it changed since the checkpoint — restore the original data or start without "
                    + "the saved data state");
        }
        consumed = skip;
        live = new Pass(source);
        return live;
    }

    /**
     * Checks up front what can be checked before training reads the stream: the columns and their
     * types where the format states them (Parquet), and the first {@value #CHECKED_AHEAD} rows, read
     * in a pass of their own (which also proves the stream is not empty); every later pass checks
     * each row it reads (see {@link TaskSet#requireRows}).
     *
     * @throws DatasetException when the stream holds no rows, or a column or one of the first rows
     *     breaks a requirement, naming the file, the row and the field
     */
    @Override
    public void requireRows(RequiredFields fields) {
        Objects.requireNonNull(fields, "fields");
        required = fields;
        try (RowSource source = openSource()) {
            source.requireColumns(fields);
            long read = 0;
            Map<String, Object> row;
            while (read < CHECKED_AHEAD && (row = source.next()) != null) {
                read++;
                check(source, row);
            }
            if (read == 0) {
                throw new DatasetException(describe() + ": holds no rows; a task set needs at least one row: add rows, "
                        + "or point the config at the file that holds them");
            }
        }
    }

    /** Fails when {@code row}, just read from {@code source}, breaks the required fields. */
    private void check(RowSource source, Map<String, Object> row) {
        String problem = required.problem(row);
        if (problem != null) {
            throw new DatasetException(source.where() + ": " + problem);
        }
    }

    @Override
    public Map<String, Object> stateDict() {
        Map<String, Object> state = new LinkedHashMap<>();
        putSourceState(state);
        state.put(EPOCH, epoch);
        state.put(CONSUMED, consumed);
        return state;
    }

    /**
     * Restores {@code consumed} and {@code epoch} (non-negative integers; {@code epoch} may be
     * absent). The entries naming the source are not checked.
     */
    @Override
    public void loadStateDict(Map<String, ?> state) {
        Objects.requireNonNull(state, "state");
        long restoredConsumed = count(state, CONSUMED);
        long restoredEpoch = state.containsKey(EPOCH) ? count(state, EPOCH) : 0;
        closeLive();
        consumed = restoredConsumed;
        resumeFrom = restoredConsumed;
        epoch = restoredEpoch;
    }

    private long count(Map<String, ?> state, String key) {
        String kind = getClass().getSimpleName();
        Object value = state.get(key);
        if (value == null) {
            throw new IllegalArgumentException(kind + " state has no '" + key + "' (keys: " + state.keySet()
                    + "); pass a map produced by " + kind + ".stateDict()");
        }
        if (!(value instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue()) || n.doubleValue() < 0) {
            throw new IllegalArgumentException(kind + " state '" + key + "' must be a whole number >= 0, got " + value);
        }
        return n.longValue();
    }

    /** Closes the source of the live pass, if any; its iterator then reports no more items. */
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

    /** One pass over the source. */
    private final class Pass implements Iterator<TaskItem> {
        private final RowSource source;
        private TaskItem next;
        private boolean done;

        Pass(RowSource source) {
            this.source = source;
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
                row = source.next();
            } catch (RuntimeException e) {
                finish(false);
                throw e;
            }
            if (row == null) {
                finish(true);
                return false;
            }
            if (!required.isEmpty()) {
                try {
                    check(source, row);
                } catch (DatasetException e) {
                    finish(false);
                    throw e;
                }
            }
            next = TaskItem.of(row);
            return true;
        }

        @Override
        public TaskItem next() {
            if (!hasNext()) {
                throw new NoSuchElementException("end of " + describe());
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
            source.close();
            if (reachedEnd && live == this) {
                epoch++;
                consumed = 0;
                live = null;
            }
        }
    }
}
