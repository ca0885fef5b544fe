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

    /** Releases the file; reading ends. */
    @Override
    void close();
}
