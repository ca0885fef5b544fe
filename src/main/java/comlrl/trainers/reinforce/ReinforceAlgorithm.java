package comlrl.trainers.reinforce;

import comlrl.rl.AdvantageMode;
import comlrl.utils.ConfigMaps;
import comlrl.utils.ConfigName;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The algorithms of the MA-REINFORCE family, which share {@link MAGRPOConfig}'s fields and differ
 * only in defaults: the baseline ({@code advantage_mode}) and, for the centralized variant,
 * {@code num_turns = 1} with {@code collaboration_mode = "centralized"}.
 */
public enum ReinforceAlgorithm implements ConfigName {
    /** Group-mean baseline. Config: "magrpo". */
    MAGRPO("MAGRPO", AdvantageMode.MEAN),
    /** No baseline. Config: "mareinforce". */
    MAREINFORCE("MAREINFORCE", AdvantageMode.RAW),
    /** Group-max baseline. Config: "maremax". */
    MAREMAX("MAReMax", AdvantageMode.MAX),
    /** Leave-one-out baseline. Config: "marloo". */
    MARLOO("MARLOO", AdvantageMode.RLOO),
    /** One actor writes every role's response; single turn. Config: "centralized_magrpo". */
    CENTRALIZED_MAGRPO("CentralizedMAGRPO", AdvantageMode.MEAN);

    private final String displayName;
    private final AdvantageMode defaultAdvantageMode;

    ReinforceAlgorithm(String displayName, AdvantageMode defaultAdvantageMode) {
        this.displayName = displayName;
        this.defaultAdvantageMode = defaultAdvantageMode;
    }

    /** The reference's {@code algorithm_name} ("MAGRPO", "MAREINFORCE", "MAReMax", "MARLOO", ...). */
    public String displayName() {
        return displayName;
    }

    /** The Java config type users see in messages ("MAGRPOConfig", ...). */
    public String configTypeName() {
        return displayName + "Config";
    }

    /** The algorithm's default {@code advantage_mode}. */
    public AdvantageMode defaultAdvantageMode() {
        return defaultAdvantageMode;
    }

    /** The default {@code num_turns}: 1 for the centralized variant, else 2 (the reference default). */
    public int defaultNumTurns() {
        return this == CENTRALIZED_MAGRPO ? 1 : 2;
    }

    /** A builder of this algorithm's config type, with its defaults. */
    public MAGRPOConfig.Builder<? extends MAGRPOConfig> builder() {
        return switch (this) {
            case MAGRPO -> MAGRPOConfig.builder();
            case MAREINFORCE -> MAREINFORCEConfig.builder();
            case MAREMAX -> MAReMaxConfig.builder();
            case MARLOO -> MARLOOConfig.builder();
            case CENTRALIZED_MAGRPO -> CentralizedMAGRPOConfig.builder();
        };
    }

    /** The snake_case keys of this algorithm's config, in field order. */
    public List<String> keys() {
        return ReinforceFields.of(this).stream().map(f -> f.key).toList();
    }

    /** This algorithm's config from snake_case keys; see {@link MAGRPOConfig#fromMap(Map)}. */
    public MAGRPOConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    /** Parses a config name ("magrpo", "mareinforce", "maremax", "marloo", "centralized_magrpo"), any case. */
    public static ReinforceAlgorithm parse(String value) {
        List<String> names = Arrays.stream(values()).map(ReinforceAlgorithm::configName).toList();
        String key = value == null ? null : value.trim().toLowerCase(Locale.ROOT);
        if (key != null && names.contains(key)) {
            return values()[names.indexOf(key)];
        }
        throw new IllegalArgumentException("Unknown MA-REINFORCE algorithm " + (value == null ? "null" : "'" + value + "'")
                + (value == null ? "" : "; did you mean '" + ConfigMaps.closest(key, names) + "'?")
                + " Valid: " + String.join(", ", names));
    }

    @Override
    public String toString() {
        return configName();
    }
}
