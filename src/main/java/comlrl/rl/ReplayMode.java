package comlrl.rl;

import comlrl.utils.ConfigNames;
import java.util.List;

/**
 * {@code preference_replay_mode}: which replay shards (one per iteration) the iterative trainers
 * train on (reference §7.4 step 3); {@link ReplaySampling#shardWeights} gives each mode's weights.
 * The first name is the config spelling, the others aliases {@link #parse} accepts.
 */
public enum ReplayMode {
    /** Only the newest shard: this iteration's pairs. The default. */
    CURRENT("current", "latest", "new"),
    /** The last {@code preference_replay_k} shards, uniformly. */
    NEAREST_K("nearest_k", "recent_k", "last_k", "k"),
    /** Every shard, uniformly. */
    ALL_HISTORY("all_history"),
    /** Shards weighted {@code ∝ (1−λ)·λ^age} by age (0 = newest), {@code λ = preference_replay_lambda}. */
    LAMBDA_DECAY("lambda_decay", "lambda", "td_lambda");

    private final String configName;
    private final List<String> aliases;

    ReplayMode(String configName, String... aliases) {
        this.configName = configName;
        this.aliases = List.of(aliases);
    }

    public String configName() {
        return configName;
    }

    /** Parses a config value or alias (case and surrounding blanks ignored); null means "current". */
    public static ReplayMode parse(String value) {
        return ConfigNames.parse("preference_replay_mode", value, CURRENT, values(), ReplayMode::configName,
                m -> m.aliases, "");
    }

    @Override
    public String toString() {
        return configName;
    }
}
