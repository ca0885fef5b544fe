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
}
