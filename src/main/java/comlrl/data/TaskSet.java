package comlrl.data;

import java.util.OptionalInt;

/**
 * A source of task items for a trainer: an in-memory {@link Dataset} (indexable, sized) or a
 * stream such as {@link JsonlStream} (read lazily, size unknown until read).
 *
 * <p>Each call to {@link #iterator()} starts a new pass over the items, in the set's order.
 */
public interface TaskSet extends Iterable<TaskItem> {
    /**
     * The number of task items when it is known without reading them ({@link Dataset}), or empty
     * for a stream.
     */
    OptionalInt knownSize();

    /**
     * Fails unless the set has at least one item and every item holds {@code fields}, naming the
     * set's file, the row and the field; call it before any model loads. A {@link Dataset} checks
     * every row now; a stream ({@link JsonlStream}, {@link ParquetStream}) checks now what it can
     * read up front (a Parquet file's columns and types, its row count, and the first
     * 1,000 rows) and every later row as a pass reads it. This default
     * reads every item once.
     *
     * @throws DatasetException when the set is empty or a row lacks a field, holds null there or a
     *     value of the wrong kind
     */
    default void requireRows(RequiredFields fields) {
        long index = 0;
        for (TaskItem item : this) {
            String problem = fields.problem(item.asMap());
            if (problem != null) {
                throw new DatasetException(this + " item " + index + ": " + problem);
            }
            index++;
        }
        if (index == 0) {
            throw new DatasetException(this + " holds no task items; a task set needs at least one");
        }
    }
}
