package comlrl.trainers.preference;

import comlrl.rl.AdvantageMode;
import comlrl.utils.ConfigNames;

/**
 * {@code rl_algorithm}: the online RL backend that MARLHF runs against its learned joint reward
 * model (reference §7.3). The MAGRPO family differs only in its baseline, which this choice sets
 * ({@link #advantageMode()}); IAC and MAAC train critics.
 */
public enum RlAlgorithm {
    /** MAGRPO, {@code advantage_mode = "mean"}. Config: "magrpo" (the default; null means it too). */
    MAGRPO("magrpo", AdvantageMode.MEAN),
    /** MA-REINFORCE, {@code advantage_mode = "raw"}. Config: "mareinforce", or the reference's alias "mareforce". */
    MAREINFORCE("mareinforce", AdvantageMode.RAW),
    /** MAReMax, {@code advantage_mode = "max"}. Config: "maremax". */
    MAREMAX("maremax", AdvantageMode.MAX),
    /** MARLOO, {@code advantage_mode = "rloo"}. Config: "marloo". */
    MARLOO("marloo", AdvantageMode.RLOO),
    /** Multi-agent actor-critic with one shared critic. Config: "maac". */
    MAAC("maac", null),
    /** Independent actor-critic. Config: "iac". */
    IAC("iac", null);

    private final String configName;
    private final AdvantageMode advantageMode;

    RlAlgorithm(String configName, AdvantageMode advantageMode) {
        this.configName = configName;
        this.advantageMode = advantageMode;
    }

    /** The config spelling: "magrpo", "mareinforce", "maremax", "marloo", "maac" or "iac". */
    public String configName() {
        return configName;
    }

    /** Whether this is IAC or MAAC (critics, no group baseline) rather than the MAGRPO family. */
    public boolean isActorCritic() {
        return advantageMode == null;
    }

    /**
     * The baseline of a MAGRPO-family backend (magrpo → mean, mareinforce → raw, maremax → max,
     * marloo → rloo), or null for IAC and MAAC.
     */
    public AdvantageMode advantageMode() {
        return advantageMode;
    }

    /** The fewest {@code num_generations} the backend trains with: 2 for a group baseline, 1 for IAC/MAAC. */
    public int minGenerations() {
        return isActorCritic() ? 1 : 2;
    }

    /**
     * Parses a config value (case and surrounding blanks ignored; "mareforce" is read as
     * "mareinforce"); null means "magrpo", as the reference's {@code rl_algorithm or "magrpo"}.
     *
     * @throws IllegalArgumentException naming the valid values
     */
    public static RlAlgorithm parse(String value) {
        if (value != null && value.trim().equalsIgnoreCase("mareforce")) {
            return MAREINFORCE;
        }
        return ConfigNames.parse("rl_algorithm", value, MAGRPO, values(), RlAlgorithm::configName, "");
    }

    @Override
    public String toString() {
        return configName;
    }
}
