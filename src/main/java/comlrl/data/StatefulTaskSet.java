package comlrl.data;

import java.util.Map;

/**
 * A task set whose position can be saved in a training checkpoint and restored, so that a resumed
 * run continues where the interrupted one stopped instead of repeating items (the Python
 * library's {@code state_dict()} / {@code load_state_dict()} protocol for stateful datasets).
 *
 * <p>Call order: a checkpoint stores {@link #stateDict()}; after a restart the resuming code calls
 * {@link #loadStateDict(Map)} on a freshly opened set, before its first {@link #iterator()}.
 */
public interface StatefulTaskSet extends TaskSet {
    /** The position as a JSON-serialisable map of strings, numbers and booleans. */
    Map<String, Object> stateDict();

    /**
     * Restores a position produced by {@link #stateDict()}. The next {@link #iterator()} resumes
     * from it; later iterators start from the beginning again.
     *
     * @throws IllegalArgumentException when {@code state} is not a state of this kind of set
     */
    void loadStateDict(Map<String, ?> state);
}
