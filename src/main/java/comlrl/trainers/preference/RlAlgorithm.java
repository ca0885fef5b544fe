package comlrl.trainers.preference;

import comlrl.rl.AdvantageMode;
import comlrl.utils.ConfigNames;

/**
 * {@code rl_algorithm}: the online RL backend that MARLHF runs against its learned joint reward
 * model (reference §7.3). The MAGRPO family differs only in its baseline ({@link #advantageMode()});
 * IAC and MAAC train critics. The first constructor argument is the config spelling.
 */
public enum RlAlgorithm {
    /** MAGRPO (the default). */
    MAGRPO("magrpo", AdvantageMode.MEAN),
    /** MA-REINFORCE; the reference's alias "mareforce" is read as it. */
    MAREINFORCE("mareinforce", AdvantageMode.RAW),
    MAREMAX("maremax", AdvantageMode.MAX),
    MARLOO("marloo", AdvantageMode.RLOO),
    /** Multi-agent actor-critic with one shared critic. */
    MAAC("maac", null),
    /** Independent actor-critic. */
    IAC("iac", null);

    private final String configName;
    private final AdvantageMode advantageMode;

    RlAlgorithm(String configName, AdvantageMode advantageMode) {
        this.configName = configName;
        this.advantageMode = advantageMode;
    }

    public String configName() {
        return configName;
    }

    /** Whether this is IAC or MAAC (critics, no group baseline) rather than the MAGRPO family. */
    public boolean isActorCritic() {
        return advantageMode == null;
    }

    /** The baseline of a MAGRPO-family backend (its constructor's second argument); null for IAC and MAAC. */
    public AdvantageMode advantageMode() {
        return advantageMode;
    }

    /** The fewest {@code num_generations} the backend trains with: 2 for a group baseline, 1 for IAC/MAAC. */
    public int minGenerations() {
        return isActorCritic() ? 1 : 2;
    }

    /** Parses a config value (case and surrounding blanks ignored); null means "magrpo", as the reference. */
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
