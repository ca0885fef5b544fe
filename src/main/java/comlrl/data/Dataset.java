package comlrl.data;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * An immutable, indexable task set: rows of {@link TaskItem}s sharing a list of columns (the Java
 * counterpart of a Hugging Face {@code Dataset}).
 *
 * <p>Every row holds every column, in {@link #columnNames()} order; a row that lacked a column when
 * the set was built holds null there, as in Hugging Face datasets. Derived sets ({@link #select},
 * {@link #shuffle}, {@link #trainTestSplit}) share the rows and never copy them.
 *
 * <pre>{@code
 * Dataset tasks = Dataset.fromColumns(Map.of("prompt", prompts, "target_min", mins));
 * Dataset.Split split = tasks.trainTestSplit(0.2, 42);   // 10 rows -> 8 train, 2 test
 * Dataset train = split.train().shuffle(42);            // a fixed order, not reshuffled per epoch
 * }</pre>
 *
 * <p>{@link #shuffle} and {@link #trainTestSplit} select exactly what Python's {@code datasets}
 * selects for the same seed (NumPy's {@code default_rng(seed).permutation}, reproduced bit for
 * bit), so splits and orders ported from Python experiments match row for row.
 *
 * <p>Loaders ({@link #load}, {@link #fromJsonl}, {@link #fromJson}, {@link #fromCsv},
 * {@link #fromParquet}, {@link #loadFromDisk}) throw {@link DatasetException} with the file, the line or row, and a fix.
 */
public final class Dataset implements TaskSet {
    private final List<TaskItem> rows;
    private final List<String> columns;
    private final String source;
    /** The set this one was derived from (by select, split, shuffle, filter, map), or null for a loaded set. */
    private final Dataset root;
    /** Row i of this set is row {@code origin[i]} of {@link #root}; null for a loaded set. */
    private final int[] origin;
    /** For a set loaded from a line-based file (JSON Lines, CSV): the line each row starts on; else null. */
    private final long[] lines;

    private Dataset(List<TaskItem> rows, List<String> columns, String source) {
        this(rows, columns, source, null, null, null);
    }

    private Dataset(List<TaskItem> rows, List<String> columns, String source, Dataset root, int[] origin,
            long[] lines) {
        this.rows = rows;
        this.columns = columns;
        this.source = source;
        this.root = root;
        this.origin = origin;
        this.lines = lines;
    }

    /** A set derived from this one: its row i is row {@code positions[i]} of this set. */
    private Dataset derived(List<TaskItem> picked, List<String> cols, int[] positions) {
        int[] rootRows = new int[positions.length];
        for (int i = 0; i < positions.length; i++) {
            rootRows[i] = origin == null ? positions[i] : origin[positions[i]];
        }
        return new Dataset(picked, cols, source, root == null ? this : root, rootRows, null);
    }

    // ---------------------------------------------------------------- provenance

    /**
     * The set this one was derived from by {@link #select}, {@link #shuffle}, {@link #trainTestSplit},
     * {@link #filter} or {@link #map} (through any chain of them), or this set itself when it was loaded.
     */
    public Dataset root() {
        return root == null ? this : root;
    }

    /** For each row of this set, its index in {@link #root()} (0..size-1 for a loaded set). */
    public int[] rootRows() {
        return origin != null ? origin.clone() : range(0, rows.size());
    }

    /** {@code from, from+1, .., to-1}. */
    private static int[] range(int from, int to) {
        int[] out = new int[to - from];
        for (int i = 0; i < out.length; i++) {
            out[i] = from + i;
        }
        return out;
    }

    /**
     * A fingerprint of the rows (columns and values in order): {@code sha256:} and the hex SHA-256
     * of their canonical JSON, one row per line; equal rows give equal fingerprints on any machine.
     */
    public String fingerprint() {
        try {
            java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
            com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
            sha.update(json.writeValueAsBytes(columns));
            for (TaskItem row : rows) {
                sha.update((byte) '\n');
                sha.update(json.writeValueAsBytes(row.asMap()));
            }
            return "sha256:" + java.util.HexFormat.of().formatHex(sha.digest());
        } catch (java.security.NoSuchAlgorithmException | com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot fingerprint the task set: " + e.getMessage(), e);
        }
    }

    /** The outcome of {@link #trainTestSplit}: disjoint train and test sets covering the input. */
    public record Split(Dataset train, Dataset test) {
        /** Checks that neither part is null. */
        public Split {
            Objects.requireNonNull(train, "train");
            Objects.requireNonNull(test, "test");
        }
    }

    // ---------------------------------------------------------------- construction

    /** A set with no rows and no columns. */
    public static Dataset empty() {
        return new Dataset(List.of(), List.of(), "empty");
    }

    /**
     * A set of the given items, in order. Columns are the union of the items' fields in order of
     * first appearance; items lacking a column get null there.
     */
    public static Dataset of(Iterable<TaskItem> items) {
        Objects.requireNonNull(items, "items");
        List<Map<String, ?>> maps = new ArrayList<>();
        int index = 0;
        for (TaskItem item : items) {
            if (item == null) {
                throw new DatasetException("task item " + index + " is null; remove it or give it fields");
            }
            maps.add(item.asMap());
            index++;
        }
        return rectangular(maps, "items");
    }

    /**
     * A set with one row per map (like {@code Dataset.from_list}). Columns are the union of the
     * maps' keys in order of first appearance; a row lacking a column gets null there.
     *
     * @throws DatasetException when a row is null
     */
    public static Dataset fromRows(List<? extends Map<String, ?>> rows) {
        Objects.requireNonNull(rows, "rows");
        for (int i = 0; i < rows.size(); i++) {
            if (rows.get(i) == null) {
                throw new DatasetException("row " + i + " is null; every row must be a map of field to value");
            }
        }
        return rectangular(rows, "rows");
    }

    /**
     * A set from named columns of equal length (like {@code Dataset.from_dict}); row {@code i}
     * holds element {@code i} of every column. Column order is the map's iteration order (pass a
     * {@link LinkedHashMap} to fix it).
     *
     * @throws DatasetException when the columns differ in length, naming each column's length
     */
    public static Dataset fromColumns(Map<String, ? extends List<?>> columns) {
        Objects.requireNonNull(columns, "columns");
        List<String> names = new ArrayList<>(columns.keySet());
        int n = -1;
        for (String name : names) {
            List<?> values = columns.get(name);
            if (values == null) {
                throw new DatasetException("column '" + name + "' is null; give it a list with one value per row");
            }
            if (n < 0) {
                n = values.size();
            } else if (values.size() != n) {
                String lengths = names.stream()
                        .map(c -> c + "=" + (columns.get(c) == null ? "null" : columns.get(c).size()))
                        .collect(Collectors.joining(", "));
                throw new DatasetException("columns have different lengths (" + lengths
                        + "); every column must hold exactly one value per row");
            }
        }
        List<TaskItem> items = new ArrayList<>(Math.max(n, 0));
        for (int i = 0; i < n; i++) {
            Map<String, Object> row = new LinkedHashMap<>();
            for (String name : names) {
                row.put(name, columns.get(name).get(i));
            }
            items.add(TaskItem.of(row));
        }
        return new Dataset(Collections.unmodifiableList(items), List.copyOf(names), "columns");
    }

    /** Rows made rectangular over the union of their keys. */
    private static Dataset rectangular(List<? extends Map<String, ?>> maps, String source) {
        Set<String> union = new LinkedHashSet<>();
        for (Map<String, ?> map : maps) {
            union.addAll(map.keySet());
        }
        List<String> names = List.copyOf(union);
        List<TaskItem> items = new ArrayList<>(maps.size());
        for (Map<String, ?> map : maps) {
            if (map.size() == names.size() && new ArrayList<>(map.keySet()).equals(names)) {
                items.add(TaskItem.of(map));
            } else {
                Map<String, Object> row = new LinkedHashMap<>();
                for (String name : names) {
                    row.put(name, map.get(name));
                }
                items.add(TaskItem.of(row));
            }
        }
        return new Dataset(Collections.unmodifiableList(items), names, source);
    }

    /** This set's rows under a new source description. */
    Dataset withSource(String newSource) {
        return new Dataset(rows, columns, newSource, root, origin, lines);
    }

    /** This loaded set, recording the line of its file each row starts on (one per row), for messages. */
    Dataset withLines(long[] rowLines) {
        if (root != null || rowLines.length != rows.size()) {
            throw new IllegalArgumentException("line numbers need a loaded set and one line per row");
        }
        return new Dataset(rows, columns, source, null, null, rowLines.clone());
    }

    // ---------------------------------------------------------------- loaders

    /**
     * Loads a task set from a file, choosing the format by extension: {@code .jsonl} /
     * {@code .ndjson} ({@link #fromJsonl}), {@code .json} ({@link #fromJson}), {@code .csv}
     * ({@link #fromCsv}), {@code .tsv} ({@link #fromTsv}), {@code .parquet} ({@link #fromParquet}).
     *
     * @throws DatasetException when the file is missing, its extension unknown, or its content
     *     malformed
     */
    public static Dataset load(Path file) {
        Objects.requireNonNull(file, "file");
        String name = file.getFileName() == null ? "" : file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".jsonl") || name.endsWith(".ndjson")) {
            return fromJsonl(file);
        }
        if (name.endsWith(".json")) {
            return fromJson(file);
        }
        if (name.endsWith(".csv")) {
            return fromCsv(file);
        }
        if (name.endsWith(".tsv")) {
            return fromTsv(file);
        }
        if (name.endsWith(".parquet")) {
            return fromParquet(file);
        }
        throw DatasetException.inFile(file, "unknown task set format; supported extensions are "
                + ".jsonl (.ndjson), .json, .csv, .tsv and .parquet — rename the file or call the matching "
                + "Dataset.fromXxx loader");
    }

    /**
     * Loads JSON Lines: one JSON object per line, each a row. Blank lines are skipped. Values are
     * converted as described in {@link TaskItem}: integers become {@link Long}, other numbers
     * {@link Double}, arrays unmodifiable lists, objects unmodifiable maps.
     *
     * @throws DatasetException naming the file and line of the first malformed line
     */
    public static Dataset fromJsonl(Path file) {
        List<Map<String, Object>> maps = new ArrayList<>();
        List<Long> lines = new ArrayList<>();
        try (JsonlReader reader = JsonlReader.open(file)) {
            Map<String, Object> row;
            while ((row = reader.next()) != null) {
                maps.add(row);
                lines.add(reader.lineNumber());
            }
        }
        return rectangular(maps, file.toString()).withLines(lines.stream().mapToLong(Long::longValue).toArray());
    }

    /**
     * Loads a JSON document in one of three shapes: an array of row objects
     * ({@code [{"prompt": ...}, ...]}), an object with a {@code "data"} array of row objects
     * ({@code {"data": [...]}}, as Hugging Face's {@code field="data"}), or an object of columns
     * ({@code {"prompt": [...], "target": [...]}}, lists of equal length).
     *
     * @throws DatasetException naming the file and the offending element or column
     */
    public static Dataset fromJson(Path file) {
        return JsonDocumentLoader.load(file).withSource(file.toString());
    }

    /**
     * Loads comma-separated values (RFC 4180): the first record is the header of column names;
     * fields may be quoted with {@code "}, doubling quotes inside; quoted fields may hold commas
     * and line breaks; a UTF-8 byte-order mark is ignored.
     *
     * <p>Values stay strings exactly as written (numbers are not guessed; {@link
     * TaskItem#getDouble} and {@link TaskItem#getLong} parse them when asked). An empty unquoted
     * field is a missing value (null), an empty quoted field {@code ""} is the empty string.
     *
     * @throws DatasetException naming the file and line of a record with the wrong number of
     *     fields, an unterminated quote, or a bad header
     */
    public static Dataset fromCsv(Path file) {
        return CsvLoader.load(file, ',').withSource(file.toString());
    }

    /** Like {@link #fromCsv} with tab-separated fields. */
    public static Dataset fromTsv(Path file) {
        return CsvLoader.load(file, '\t').withSource(file.toString());
    }

    /**
     * Loads an Apache Parquet file (any compression the Parquet library supports: uncompressed,
     * Snappy, gzip, zstd, LZ4; no native install needed). Strings become {@link String}, integers
     * {@link Long}, floating point {@link Double}, booleans {@link Boolean}, decimals
     * {@link java.math.BigDecimal}, lists (LIST) unmodifiable lists, structs and maps unmodifiable
     * maps, missing optional values null; other binary columns stay {@code byte[]}, and dates and
     * timestamps stay their stored integers.
     *
     * @throws DatasetException naming the file (and row group) when it cannot be read
     */
    public static Dataset fromParquet(Path file) {
        return rectangular(ParquetLoader.load(file), file.toString());
    }

    /**
     * Loads one split of a Hugging Face hub dataset into memory, like {@code load_dataset(repoId,
     * config, split=split, revision=revision)}: its Parquet files (or the hub's Parquet conversion
     * of other formats) through the Hugging Face cache, downloading what is missing unless
     * {@code HF_HUB_OFFLINE} is set. See {@link HubDatasets} for the layouts and the environment.
     *
     * @param repoId the dataset's id, e.g. {@code openai/gsm8k}
     * @param config the config, e.g. {@code main}; null for the dataset's default config
     * @param split the split; null for {@code train}
     * @param revision a branch, tag or commit hash; null for {@code main}
     * @throws DatasetException naming the configs and splits that exist when one is missing
     * @throws comlrl.model.io.HubException when the hub refuses, cannot be reached, or (offline)
     *     the files are not cached
     */
    public static Dataset fromHub(String repoId, String config, String split, String revision) {
        return HubDatasets.fromEnvironment().load(new HubSplit(repoId, config, split, revision));
    }

    /**
     * Streams one split of a Hugging Face hub dataset row group by row group, like
     * {@code load_dataset(..., streaming=True)}; resumable from a checkpoint
     * ({@link ParquetStream#stateDict()}). Arguments as for {@link #fromHub}; each Parquet file is
     * downloaded into the cache when the stream first reaches it.
     */
    public static ParquetStream streamHub(String repoId, String config, String split, String revision) {
        return HubDatasets.fromEnvironment().stream(new HubSplit(repoId, config, split, revision));
    }

    /**
     * Loads a directory written by Python {@code datasets}' {@code Dataset.save_to_disk}
     * ({@code dataset_info.json}, {@code state.json} and its {@code data-0000i-of-0000n.arrow} files,
     * read in order). Values become what {@link #fromParquet} gives: strings (also large_string)
     * {@link String}, integers of every width {@link Long} (uint64 above {@code Long.MAX_VALUE}
     * {@link java.math.BigInteger}), float16/32/64 {@link Double}, booleans {@link Boolean}, class
     * labels their integer, decimals {@link java.math.BigDecimal}, binary {@code byte[]}, dates,
     * times and timestamps their stored integers, lists (list, large_list, fixed-size) unmodifiable
     * lists, structs unmodifiable maps, nulls null. A dataset saved by {@code datasets} 1.x with an
     * indices mapping ({@code _indices_data_files}) is read through the mapping.
     *
     * <p>Arrow needs the JVM option {@code --add-opens=java.base/java.nio=ALL-UNNAMED} on Java 17
     * ({@code bin/comlrl} passes it).
     *
     * @throws DatasetException when the directory is missing, is a {@code DatasetDict} (naming its
     *     splits: use {@link #loadFromDisk(Path, String)}), is incomplete, or has a column of a type
     *     a task item cannot hold (naming the column and the type)
     */
    public static Dataset loadFromDisk(Path dir) {
        return DiskDatasets.load(dir, null);
    }

    /**
     * Loads split {@code split} of a directory written by {@code DatasetDict.save_to_disk}
     * ({@code dataset_dict.json} naming the splits, one directory per split), or, when {@code split}
     * is null, a {@code Dataset.save_to_disk} directory as {@link #loadFromDisk(Path)}.
     *
     * @throws DatasetException when the split does not exist (naming those that do), when
     *     {@code dir} holds one Dataset and {@code split} is not the split it was saved from, or as
     *     {@link #loadFromDisk(Path)}
     */
    public static Dataset loadFromDisk(Path dir, String split) {
        return DiskDatasets.load(dir, split);
    }

    /**
     * Saves this set as Python {@code datasets}' {@code save_to_disk} does, so that
     * {@code datasets.load_from_disk(dir)} (and {@link #loadFromDisk}) opens it with the same values:
     * one data file {@code data-00000-of-00001.arrow} (Arrow IPC stream, batches of 1000 rows),
     * {@code dataset_info.json} with the features and {@code state.json}.
     *
     * <p>Column types are inferred from the values as pyarrow infers them from Python objects:
     * strings {@code string}, booleans {@code bool}, integers {@code int64} ({@code uint64} when a
     * value lies above {@code Long.MAX_VALUE}), {@link Float} {@code float32}, {@link Double} (and
     * columns mixing integers and floats) {@code float64}, {@link java.math.BigDecimal}
     * {@code decimal128(38, s)}, {@code byte[]} {@code binary}, lists {@code list}, maps with string
     * keys {@code struct} (over the union of their keys), all-null columns {@code null}. So a set
     * loaded from disk saves back with its values, not necessarily its types: float32 columns come
     * back float64, class labels int64, dates and timestamps their stored integers.
     *
     * <p>The save is atomic: the directory is written beside {@code dir} and swapped in only when
     * complete, so a failure leaves {@code dir} as it was. An existing {@code dir} is replaced whole
     * when it is empty or was written by {@code save_to_disk}; any other directory is refused.
     *
     * @throws DatasetException naming the column and row of a value that cannot be saved (another
     *     Java type, a column mixing kinds of values), or the directory and cause of a write failure
     */
    public void saveToDisk(Path dir) {
        DiskDatasets.save(this, dir);
    }

    /** Fails with a clear message unless {@code file} is a readable regular file. */
    static void requireReadableFile(Path file) {
        Objects.requireNonNull(file, "file");
        if (!Files.exists(file)) {
            throw DatasetException.inFile(file, "file not found (working directory: "
                    + Path.of("").toAbsolutePath() + "); check the path");
        }
        if (Files.isDirectory(file)) {
            throw DatasetException.inFile(file, "is a directory; pass one data file");
        }
        if (!Files.isReadable(file)) {
            throw DatasetException.inFile(file, "file is not readable; check its permissions");
        }
    }

    // ---------------------------------------------------------------- checks

    /**
     * Fails unless this set has rows and every row holds {@code fields}: the message names the
     * file (the {@link #source()}), the row as the loaded file counts it (1-based, with its line
     * for JSON Lines and CSV) and the field. See {@link TaskSet#requireRows}.
     *
     * @throws DatasetException when the set is empty or a row breaks a requirement
     */
    @Override
    public void requireRows(RequiredFields fields) {
        Objects.requireNonNull(fields, "fields");
        if (rows.isEmpty()) {
            throw new DatasetException(source + ": holds no rows" + (root == null ? "" : " (after the split or "
                    + "selection; the loaded set has " + root.size() + ")") + "; a task set needs at least one row: "
                    + "add rows, or point the config at the file or split that holds them");
        }
        if (fields.isEmpty()) {
            return;
        }
        for (int i = 0; i < rows.size(); i++) {
            String problem = fields.problem(rows.get(i).asMap());
            if (problem != null) {
                throw new DatasetException(source + " " + root().rowLabel(origin == null ? i : origin[i]) + ": " + problem);
            }
        }
    }

    /** Row {@code index} of this loaded set as its file counts it: {@code row 3}, {@code line 5 (row 3)}. */
    private String rowLabel(int index) {
        return lines == null ? "row " + (index + 1) : "line " + lines[index] + " (row " + (index + 1) + ")";
    }

    // ---------------------------------------------------------------- access

    /** The number of rows. */
    public int size() {
        return rows.size();
    }

    /** Whether there are no rows. */
    public boolean isEmpty() {
        return rows.isEmpty();
    }

    @Override
    public OptionalInt knownSize() {
        return OptionalInt.of(rows.size());
    }

    /**
     * Row {@code index} (0-based).
     *
     * @throws IndexOutOfBoundsException when {@code index} is not in {@code [0, size())}
     */
    public TaskItem get(int index) {
        if (index < 0 || index >= rows.size()) {
            throw new IndexOutOfBoundsException("index " + index + " is out of range for a task set of "
                    + rows.size() + " rows");
        }
        return rows.get(index);
    }

    /** All rows, in order (unmodifiable). */
    public List<TaskItem> items() {
        return rows;
    }

    @Override
    public Iterator<TaskItem> iterator() {
        return rows.iterator();
    }

    /** The rows as a sequential stream. */
    public Stream<TaskItem> stream() {
        return rows.stream();
    }

    /** The column names, in order (unmodifiable). */
    public List<String> columnNames() {
        return columns;
    }

    /**
     * One column's values, row by row (unmodifiable; may hold nulls).
     *
     * @throws IllegalArgumentException when there is no such column
     */
    public List<Object> column(String name) {
        if (!columns.contains(name)) {
            throw new IllegalArgumentException("task set has no column '" + name + "'; columns: " + columns);
        }
        List<Object> values = new ArrayList<>(rows.size());
        for (TaskItem row : rows) {
            values.add(row.get(name));
        }
        return Collections.unmodifiableList(values);
    }

    /** Where the rows came from: a file path, or "columns", "rows", "items". */
    public String source() {
        return source;
    }

    // ---------------------------------------------------------------- derived sets

    /**
     * The rows at {@code indices}, in that order (repeats allowed), like {@code Dataset.select}.
     *
     * @throws IndexOutOfBoundsException naming the first index out of range
     */
    public Dataset select(int[] indices) {
        Objects.requireNonNull(indices, "indices");
        List<TaskItem> picked = new ArrayList<>(indices.length);
        for (int index : indices) {
            picked.add(get(index));
        }
        return derived(Collections.unmodifiableList(picked), columns, indices.clone());
    }

    /** The rows at {@code indices}, in that order; see {@link #select(int[])}. */
    public Dataset select(List<Integer> indices) {
        Objects.requireNonNull(indices, "indices");
        return select(indices.stream().mapToInt(i -> Objects.requireNonNull(i, "index")).toArray());
    }

    /**
     * The rows {@code fromInclusive .. toExclusive-1}.
     *
     * @throws IndexOutOfBoundsException unless {@code 0 <= fromInclusive <= toExclusive <= size()}
     */
    public Dataset selectRange(int fromInclusive, int toExclusive) {
        if (fromInclusive < 0 || toExclusive > rows.size() || fromInclusive > toExclusive) {
            throw new IndexOutOfBoundsException("range [" + fromInclusive + ", " + toExclusive
                    + ") is not within a task set of " + rows.size() + " rows");
        }
        return derived(rows.subList(fromInclusive, toExclusive), columns, range(fromInclusive, toExclusive));
    }

    /** The first {@code min(n, size())} rows. */
    public Dataset take(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0, got " + n);
        }
        return selectRange(0, Math.min(n, rows.size()));
    }

    /**
     * The rows in the random order Hugging Face {@code datasets} gives them for {@code seed}:
     * {@code shuffle(seed)} selects exactly the rows, in exactly the order, of Python's
     * {@code Dataset.shuffle(seed=seed)} on the same rows, that is
     * {@code select(np.random.default_rng(seed).permutation(size()))} (NumPy's PCG64 seeded
     * through its SeedSequence, and NumPy's Fisher–Yates; see the package-private
     * {@code NumpyPermutation}). An empty set stays empty.
     *
     * <p>There is no seedless variant: {@code datasets} with {@code seed=None} draws a seed from
     * NumPy's global state, which no port can reproduce; pass the seed explicitly.
     *
     * @throws DatasetException when {@code seed < 0} (NumPy rejects negative seeds)
     */
    public Dataset shuffle(long seed) {
        requireSeed(seed);
        return select(NumpyPermutation.of(rows.size(), seed));
    }

    /**
     * Splits into train and test sets exactly as Hugging Face's
     * {@code train_test_split(test_size=testSize, seed=seed)} does (with its defaults
     * {@code train_size=None, shuffle=True}): the same rows, in the same order, in each part.
     *
     * <ul>
     *   <li>Sizes: a fraction {@code testSize} in {@code (0, 1)} gives
     *       {@code n_test = ceil(testSize * size())} test rows (in binary floating point, as
     *       Python computes it, so {@code 0.07 * 100 = 7.000000000000001} gives 8), and
     *       {@code n_train = size() - n_test}. A whole number {@code >= 1} is an absolute count, as
     *       {@link #trainTestSplit(int, long)} (Python would insist on an {@code int} here).</li>
     *   <li>Selection: {@code p = np.random.default_rng(seed).permutation(size())} (the
     *       permutation of {@link #shuffle(long) shuffle(seed)}); test = rows {@code p[:n_test]},
     *       train = rows {@code p[n_test:]}, each in that permuted order.</li>
     *   <li>An empty set splits into two empty sets, as in {@code datasets}.</li>
     * </ul>
     * (For {@code datasets}' {@code shuffle=False}, take {@link #selectRange} {@code (0, n_train)}
     * as train and {@code (n_train, size())} as test.)
     *
     * @throws DatasetException when {@code testSize} is neither in {@code (0, 1)} nor a whole count,
     *     when the train set would be empty (where {@code datasets} raises {@code ValueError}), or
     *     when {@code seed < 0}
     */
    public Split trainTestSplit(double testSize, long seed) {
        boolean fraction = testSize > 0 && testSize < 1;
        boolean count = testSize >= 1 && testSize == Math.rint(testSize) && testSize <= Integer.MAX_VALUE;
        if (!fraction && !count) {
            throw new DatasetException("test_size=" + testSize + " must be a fraction in (0, 1) or a whole "
                    + "number of rows >= 1 (e.g. 0.2 or 2)");
        }
        if (count) {
            return trainTestSplit((int) testSize, seed);
        }
        requireSeed(seed);
        int n = rows.size();
        if (n == 0) {
            return new Split(this, this);
        }
        int testCount = (int) Math.ceil(testSize * n);
        if (testCount >= n) {
            throw emptyTrainSet("test_size=" + testSize + " takes ceil(" + testSize + " * " + n + ") = "
                    + testCount + " test rows");
        }
        return splitWithTestCount(testCount, seed);
    }

    /**
     * Splits with exactly {@code testCount} test rows, as {@code train_test_split(test_size=<int>,
     * seed=seed)}; see {@link #trainTestSplit(double, long)}.
     *
     * @throws DatasetException unless {@code 1 <= testCount < size()} (an empty set splits into two
     *     empty sets for any {@code testCount >= 1}), or when {@code seed < 0}
     */
    public Split trainTestSplit(int testCount, long seed) {
        if (testCount < 1) {
            throw new DatasetException("test_size=" + testCount + " must be >= 1 row (or a fraction in (0, 1))");
        }
        requireSeed(seed);
        int n = rows.size();
        if (n == 0) {
            return new Split(this, this);
        }
        if (testCount >= n) {
            throw emptyTrainSet("test_size=" + testCount + " takes " + testCount + " test rows");
        }
        return splitWithTestCount(testCount, seed);
    }

    private Split splitWithTestCount(int testCount, long seed) {
        int[] order = NumpyPermutation.of(rows.size(), seed);
        int[] test = Arrays.copyOfRange(order, 0, testCount);
        int[] train = Arrays.copyOfRange(order, testCount, order.length);
        return new Split(select(train), select(test));
    }

    /** The error for a test size that leaves no train rows, as {@code datasets} raises it. */
    private DatasetException emptyTrainSet(String takes) {
        int n = rows.size();
        String fix = n == 1
                ? "a task set of 1 row cannot be split; add rows, or give the evaluation set as its own file"
                : "use a smaller test_size: at most " + (n - 1) + " rows, or a fraction of at most "
                        + (n - 1) + "/" + n;
        return new DatasetException("with " + n + " rows, " + takes + " and leaves an empty train set; " + fix);
    }

    /** Fails unless {@code seed >= 0}, the seeds NumPy (and so {@code datasets}) accepts. */
    private static void requireSeed(long seed) {
        if (seed < 0) {
            throw new DatasetException("seed=" + seed + " is negative; datasets seeds NumPy's default_rng, "
                    + "which rejects negative seeds (ValueError: expected non-negative integer); use a seed >= 0, "
                    + "e.g. 42");
        }
    }

    /** The rows for which {@code keep} holds, in order. */
    public Dataset filter(Predicate<TaskItem> keep) {
        Objects.requireNonNull(keep, "keep");
        List<TaskItem> kept = new ArrayList<>();
        List<Integer> positions = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
            if (keep.test(rows.get(i))) {
                kept.add(rows.get(i));
                positions.add(i);
            }
        }
        return derived(Collections.unmodifiableList(kept), columns, positions.stream().mapToInt(Integer::intValue).toArray());
    }

    /**
     * Each row transformed by {@code fn} (e.g. {@code item -> item.with("id", ...)}); the columns
     * are recomputed from the results.
     */
    public Dataset map(UnaryOperator<TaskItem> fn) {
        Objects.requireNonNull(fn, "fn");
        List<Map<String, ?>> mapped = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            TaskItem out = fn.apply(rows.get(i));
            if (out == null) {
                throw new DatasetException("map function returned null for row " + i + "; return a TaskItem");
            }
            mapped.add(out.asMap());
        }
        Dataset fresh = rectangular(mapped, source);
        return derived(fresh.rows, fresh.columns, range(0, rows.size()));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Dataset d && d.columns.equals(columns) && d.rows.equals(rows);
    }

    @Override
    public int hashCode() {
        return 31 * columns.hashCode() + rows.hashCode();
    }

    @Override
    public String toString() {
        return "Dataset(rows=" + rows.size() + ", columns=" + columns + ", source=" + source + ")";
    }
}
