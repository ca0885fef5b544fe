package comlrl.data;


/**
 * A task set whose position can be saved in a training checkpoint and restored, so that a resumed
 * run continues where the interrupted one stopped instead of repeating items (the Python
 * library's {@code state_dict()} / {@code load_state_dict()} protocol for stateful datasets).
 *
 * <p>Call order: a checkpoint stores {@link #stateDict()}; after a restart the resuming code calls
 * {@link #loadStateDict(Map)} on a freshly opened set, before its first {@link #iterator()}.
 */
public interface StatefulTaskSet extends TaskSet, Stateful {
    // stateDict(): the position; loadStateDict(state): the next iterator() resumes from it and
    // later iterators start from the beginning again.
}
