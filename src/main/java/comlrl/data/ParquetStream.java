package comlrl.data;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A task set streamed from Parquet files, row group by row group, for sets that do not fit in
 * memory (the counterpart of a Hugging Face {@code IterableDataset} over Parquet shards, such as
 * {@code load_dataset(..., streaming=True)} of a hub dataset).
 *
 * <pre>{@code
 * try (ParquetStream tasks = ParquetStream.open(Path.of("train-00000.parquet"), Path.of("train-00001.parquet"))) {
 *     for (TaskItem item : tasks) { ... }          // file by file, row group by row group
 *     Map<String, Object> state = tasks.stateDict();   // {files, epoch, consumed}
 * }
 * ParquetStream hub = Dataset.streamHub("openai/gsm8k", "main", "train", "main");
 * }</pre>
 *
 * <p>Memory: the files are read in order, each one row group at a time (only the current row
 * group's column chunks are held; rows are converted one by one as the iterator asks), so memory
 * does not grow with the number of rows read. The shards of a hub dataset
 * ({@link HubDatasets#stream}) are downloaded into the Hugging Face cache when the stream first
 * reaches them.
 *
 * <p>Position: as for {@link JsonlStream}, the stream counts the items handed out by the current
 * pass ({@link #consumed()}) and the passes completed ({@link #epoch()}); {@link #stateDict()}
 * records both, with the file names for information. After {@link #loadStateDict(Map)} the next
 * pass skips the consumed rows, whole files and whole row groups by the row counts in their
 * footers (unread) and at most one row group by decoding, and continues at the very row where the
 * checkpointed run stopped. Each later {@link #iterator()} starts a new pass from the first row.
 *
 * <p>Values convert as in {@link Dataset#fromParquet}; every row holds its file's columns. Errors
 * are {@link DatasetException}s naming the file and row group. Not thread-safe.
 */
public final class ParquetStream extends RowStream {
    /** State key: items handed out by the current pass. */
    public static final String CONSUMED = RowStream.CONSUMED;
    /** State key: passes completed to the end of the last file. */
    public static final String EPOCH = RowStream.EPOCH;
    /** State key: the files' names, for information only (moved files may be resumed). */
    public static final String FILES = "files";
    /** State key: where the files come from (their directory or hub dataset), for information only. */
    public static final String SOURCE = "source";

    /**
     * One file of a stream: its name (a path, or its path inside a hub repository) and how to get
     * it on disk (a hub file is downloaded on the first call).
     */
    record Shard(String name, Supplier<Path> location) {
        Shard {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(location, "location");
        }
    }

    private final String description;
    private final List<Shard> shards;

    private ParquetStream(String description, List<Shard> shards) {
        this.description = description;
        this.shards = List.copyOf(shards);
    }

    /** A stream over {@code files}, in this order; see {@link #open(List)}. */
    public static ParquetStream open(Path... files) {
        return open(Arrays.asList(Objects.requireNonNull(files, "files")));
    }

    /**
     * A stream over {@code files}, in this order, as one sequence of rows; only the footers are
     * read, and only when the first pass starts.
     *
     * @throws IllegalArgumentException when {@code files} is empty
     * @throws DatasetException when a file does not exist or cannot be read
     */
    public static ParquetStream open(List<Path> files) {
        Objects.requireNonNull(files, "files");
        if (files.isEmpty()) {
            throw new IllegalArgumentException("ParquetStream needs at least one Parquet file");
        }
        List<Shard> shards = new ArrayList<>();
        for (Path file : files) {
            Dataset.requireReadableFile(file);
            shards.add(new Shard(file.toString(), () -> file));
        }
        String description = files.size() == 1 ? files.get(0).toString()
                : files.size() + " Parquet files (" + files.get(0) + ", ...)";
        return new ParquetStream(description, shards);
    }

    /** A stream over shards fetched on demand (a hub dataset's files), described as {@code description}. */
    static ParquetStream ofShards(String description, List<Shard> shards) {
        if (shards.isEmpty()) {
            throw new IllegalArgumentException(description + " has no Parquet files to stream");
        }
        return new ParquetStream(description, shards);
    }

    /** The files' names in reading order: paths, or paths inside a hub repository. */
    public List<String> files() {
        return shards.stream().map(Shard::name).toList();
    }

    @Override
    RowSource openSource() {
        return new ShardRows();
    }

    @Override
    String describe() {
        return description;
    }

    @Override
    void putSourceState(Map<String, Object> state) {
        state.put(SOURCE, description);
        state.put(FILES, files());
    }

    /** The shards' rows as one sequence, one file open at a time. */
    private final class ShardRows implements RowSource {
        private int nextShard;
        private ParquetRows current;
        /** What each file's columns must hold, checked as it opens. */
        private RequiredFields required = RequiredFields.none();

        /** Opens the next file when none is open; false after the last. */
        private boolean ensureFile() {
            if (current == null) {
                if (nextShard >= shards.size()) {
                    return false;
                }
                current = ParquetRows.open(shards.get(nextShard++).location().get());
                try {
                    current.requireColumns(required);
                } catch (DatasetException e) {
                    closeFile();
                    throw e;
                }
            }
            return true;
        }

        @Override
        public void requireColumns(RequiredFields fields) {
            required = fields;
            if (current != null) {
                current.requireColumns(fields);
            } else {
                ensureFile(); // the first file's columns are checked before any row is read
            }
        }

        @Override
        public String where() {
            return current == null ? description : current.where();
        }

        private void closeFile() {
            if (current != null) {
                current.close();
                current = null;
            }
        }

        @Override
        public Map<String, Object> next() {
            while (ensureFile()) {
                Map<String, Object> row = current.next();
                if (row != null) {
                    return row;
                }
                closeFile();
            }
            return null;
        }

        @Override
        public long skip(long rows) {
            long skipped = 0;
            while (skipped < rows && ensureFile()) {
                skipped += current.skip(rows - skipped);
                if (skipped < rows) {
                    closeFile(); // this file is used up
                }
            }
            return skipped;
        }

        @Override
        public void close() {
            closeFile();
            nextShard = shards.size();
        }
    }
}
