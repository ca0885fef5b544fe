package comlrl.data;

import java.util.Map;

/**
 * Rows read one at a time from a file or a list of files, for the streams built on
 * {@link RowStream}: a JSON Lines file ({@link JsonlReader}), a Parquet file ({@link ParquetRows}).
 */
interface RowSource extends AutoCloseable {
    /** The next row (field to value, in the source's order), or null at the end. */
    Map<String, Object> next();

    /**
     * Passes over the next {@code rows} rows, as cheaply as the format allows.
     *
     * @return the rows passed over: {@code rows}, or fewer when the source ends first
     */
    long skip(long rows);

    /**
     * Where the row {@link #next()} returned last lies, for messages: {@code FILE line 7},
     * {@code FILE row 1234 (row group 1)}.
     */
    String where();

    /**
     * Checks what the source's metadata says about {@code fields} (a Parquet file: its columns and
     * their types) for the file now open and each file opened later; nothing for a format without
     * a schema.
     *
     * @throws DatasetException naming the file and the column
     */
    default void requireColumns(RequiredFields fields) {
        // JSON Lines has no schema: each row is checked as it is read
    }

    /** Releases the file; reading ends. */
    @Override
    void close();
}
