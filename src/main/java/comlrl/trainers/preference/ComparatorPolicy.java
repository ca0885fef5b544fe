package comlrl.trainers.preference;

import comlrl.utils.ConfigNames;
import java.util.List;

/**
 * {@code comparator_policy}: who writes the comparator candidates the current policy is ranked
 * against in each iteration of the iterative trainers (reference §7.4).
 */
public enum ComparatorPolicy {
    /** The live agents themselves, sampling from their own persistent RNG stream. Config: "current" (alias "self"). */
    CURRENT("current", "self"),
    /** Frozen copies of the agents at the start of each iteration, on {@code comparator_devices}. Config: "current_copy" (alias "copy"). */
    CURRENT_COPY("current_copy", "copy"),
    /** Frozen models from {@code comparator_model_name} / {@code comparator_agents}. Config: "model" (alias "fixed"). */
    MODEL("model", "fixed"),
    /** The policy checkpoint of iteration idx − {@code comparator_history_k}, else an earlier one, else the initial policy. Config: "history" (alias "past"). */
    HISTORY("history", "past"),
    /** An HTTP model service ({@code comparator_api_*}). Config: "api" (alias "remote"). */
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

    /**
     * Parses a config value (case and surrounding blanks ignored, aliases accepted); null means "current".
     *
     * @throws IllegalArgumentException naming the valid values
     */
    public static ComparatorPolicy parse(String value) {
        return ConfigNames.parse("comparator_policy", value, CURRENT, values(), ComparatorPolicy::configName,
                p -> p.aliases, "");
    }

    @Override
    public String toString() {
        return configName;
    }
}
