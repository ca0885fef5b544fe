package comlrl.data;

import java.nio.file.Path;
import java.util.Map;

/**
 * A task set read lazily from a JSON Lines file, one line at a time, for sets that do not fit in
 * memory (the counterpart of a Hugging Face {@code IterableDataset}). Each {@link #iterator()}
 * re-opens the file and starts a new pass; only one pass is live at a time (starting one closes
 * the previous one).
 *
 * <p>Position: the stream counts the items handed out by the current pass ({@link #consumed()})
 * and the passes completed to the end ({@link #epoch()}). {@link #stateDict()} records both;
 * after {@link #loadStateDict(Map)}, the next pass skips the consumed items (reading but not
 * parsing their lines) and continues from there, so a resumed run does not repeat them (the
 * same bookkeeping as {@link ParquetStream}'s).
 *
 * <p>Rows hold the fields their line holds (there is no column list to fill missing fields from;
 * a missing field reads as null through {@link TaskItem#get}). Values convert as in
 * {@link Dataset#fromJsonl}. Malformed lines fail when reached, with file and line number. Not
 * thread-safe.
 */
public final class JsonlStream extends RowStream {
    /** State key: items handed out by the current pass. */
    public static final String CONSUMED = RowStream.CONSUMED;
    /** State key: passes completed to the end of the file. */
    public static final String EPOCH = RowStream.EPOCH;
    /** State key: the file, for information only (a moved file may be resumed). */
    public static final String FILE = "file";

    private final Path file;

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

    @Override
    RowSource openSource() {
        return JsonlReader.open(file);
    }

    @Override
    String describe() {
        return file.toString();
    }

    @Override
    void putSourceState(Map<String, Object> state) {
        state.put(FILE, file.toString());
    }
}
