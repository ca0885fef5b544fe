package comlrl.data;

import java.util.Map;

/**
 * Anything whose state a training checkpoint should carry: stateful task sets, and reward
 * functions, transitions or evaluation callbacks that keep state (the Python library's
 * {@code state_dict()} / {@code load_state_dict()} protocol). Trainers save {@link #stateDict()}
 * with each checkpoint and call {@link #loadStateDict(Map)} when resuming, before training
 * continues. State of external services (a reward server, an API) is not restored.
 */
public interface Stateful {
    /** The state as a JSON-serialisable map of strings, numbers, booleans, lists and maps. */
    Map<String, Object> stateDict();

    /**
     * Restores a state produced by {@link #stateDict()}.
     *
     * @throws IllegalArgumentException when {@code state} is not a state of this kind of object
     */
    void loadStateDict(Map<String, ?> state);
}
