package comlrl.trainers.preference;

import comlrl.data.Stateful;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The progress a preference trainer carries in its checkpoints as named whole numbers (updates
 * seen, iterations done, seed-stream positions): {@link #stateDict()} reads each through its getter,
 * {@link #loadStateDict} restores each through its setter.
 */
final class Counters implements Stateful {
    private final Map<String, LongSupplier> getters = new LinkedHashMap<>();
    private final Map<String, LongConsumer> setters = new LinkedHashMap<>();

    /** Counters of one number, {@code name}. */
    static Counters of(String name, LongSupplier getter, LongConsumer setter) {
        return new Counters().and(name, getter, setter);
    }

    /** These counters and {@code name}. */
    Counters and(String name, LongSupplier getter, LongConsumer setter) {
        getters.put(name, getter);
        setters.put(name, setter);
        return this;
    }

    @Override
    public Map<String, Object> stateDict() {
        Map<String, Object> state = new LinkedHashMap<>();
        getters.forEach((name, getter) -> state.put(name, getter.getAsLong()));
        return state;
    }

    /** @throws IllegalArgumentException naming a counter {@code state} does not hold as a number */
    @Override
    public void loadStateDict(Map<String, ?> state) {
        setters.forEach((name, setter) -> {
            if (!(state.get(name) instanceof Number value)) {
                throw new IllegalArgumentException("checkpoint progress without a number \"" + name + "\": " + state);
            }
            setter.accept(value.longValue());
        });
    }
}
