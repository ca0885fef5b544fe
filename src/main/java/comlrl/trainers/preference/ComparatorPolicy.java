package comlrl.trainers.preference;

import comlrl.utils.ConfigNames;
import java.util.List;

/**
 * {@code comparator_policy}: who writes the comparator candidates the current policy is ranked
 * against in each iteration of the iterative trainers (reference §7.4). The first name is the config
 * spelling, the other an alias {@link #parse} accepts.
 */
public enum ComparatorPolicy {
    /** The live agents themselves, sampling from their own persistent RNG stream. */
    CURRENT("current", "self"),
    /** Frozen copies of the agents at the start of each iteration, on {@code comparator_devices}. */
    CURRENT_COPY("current_copy", "copy"),
    /** Frozen models from {@code comparator_model_name} / {@code comparator_agents}. */
    MODEL("model", "fixed"),
    /** The policy saved after iteration idx − {@code comparator_history_k}, else an earlier one, else the initial. */
    HISTORY("history", "past"),
    /** An HTTP model service ({@code comparator_api_*}). */
    API("api", "remote");

    private final String configName;
    private final List<String> aliases;

    ComparatorPolicy(String configName, String... aliases) {
        this.configName = configName;
        this.aliases = List.of(aliases);
    }

    public String configName() {
        return configName;
    }

    /** Whether the comparator is a set of frozen models loaded by the trainer (current_copy, model, history). */
    public boolean loadsFrozenModels() {
        return this == CURRENT_COPY || this == MODEL || this == HISTORY;
    }

    /** Parses a config value or alias (case and surrounding blanks ignored); null means "current". */
    public static ComparatorPolicy parse(String value) {
        return ConfigNames.parse("comparator_policy", value, CURRENT, values(), ComparatorPolicy::configName,
                p -> p.aliases, "");
    }

    @Override
    public String toString() {
        return configName;
    }
}
