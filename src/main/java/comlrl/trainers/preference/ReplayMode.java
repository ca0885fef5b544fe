package comlrl.trainers.preference;

import comlrl.utils.ConfigNames;
import java.util.List;

/**
 * {@code preference_replay_mode}: which replay shards (one per iteration) the iterative trainers
 * train on (reference §7.4 step 3); {@link PreferenceReplay#shardWeights} gives each mode's weights.
 */
public enum ReplayMode {
    /** Only the newest shard: this iteration's pairs. Config: "current" (aliases "latest", "new"); the default. */
    CURRENT("current", "latest", "new"),
    /**
     * The last {@code preference_replay_k} shards, uniformly. Config: "nearest_k" (aliases
     * "recent_k", "last_k", "k").
     */
    NEAREST_K("nearest_k", "recent_k", "last_k", "k"),
    /** Every shard, uniformly. Config: "all_history". */
    ALL_HISTORY("all_history"),
    /**
     * Shards weighted {@code ∝ (1−λ)·λ^age} by age (0 = newest), {@code λ = preference_replay_lambda}.
     * Config: "lambda_decay" (aliases "lambda", "td_lambda").
     */
    LAMBDA_DECAY("lambda_decay", "lambda", "td_lambda");

    private final String configName;
    private final List<String> aliases;

    ReplayMode(String configName, String... aliases) {
        this.configName = configName;
        this.aliases = List.of(aliases);
    }

    /** The config spelling: "current", "nearest_k", "all_history" or "lambda_decay". */
    public String configName() {
        return configName;
    }

    /** The other spellings {@link #parse} accepts for this mode. */
    public List<String> aliases() {
        return aliases;
    }

    /**
     * Parses a config value or alias (case and surrounding blanks ignored); null means "current".
     *
     * @throws IllegalArgumentException listing the values and their aliases
     */
    public static ReplayMode parse(String value) {
        return ConfigNames.parse("preference_replay_mode", value, CURRENT, values(), ReplayMode::configName,
                ReplayMode::aliases, "");
    }

    @Override
    public String toString() {
        return configName;
    }
}
