package comlrl.utils;

import java.util.Locale;

/**
 * {@code parallel_training}: how agents are placed and run. Only "none" and "mp" exist (reference
 * §3.1, §14 item 3: the docs' "auto", "ddp" and "scheduler" modes are not implemented and are
 * rejected, as the reference tests require).
 */
public enum ParallelTraining {
    /** Every model on one device, agents run one after another. Config: "none", "null" or null. */
    NONE("none"),
    /** Model parallel: one device per agent from {@code agent_devices}; agents run on their own threads. */
    MP("mp");

    private final String configName;

    ParallelTraining(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    /**
     * Parses null, "none" or "null" → {@link #NONE}; "mp" → {@link #MP} (case and blanks ignored).
     *
     * @throws IllegalArgumentException for anything else, "auto" and "ddp" included
     */
    public static ParallelTraining parse(String value) {
        if (value == null) {
            return NONE;
        }
        String key = value.trim().toLowerCase(Locale.ROOT);
        if (key.equals("none") || key.equals("null")) {
            return NONE;
        }
        if (key.equals("mp")) {
            return MP;
        }
        throw new IllegalArgumentException("parallel_training must be \"none\" or \"mp\" (got \"" + value + "\"); "
                + "\"auto\", \"ddp\" and \"scheduler\" are not supported: use \"mp\" with agent_devices to put "
                + "each agent on its own device");
    }

    @Override
    public String toString() {
        return configName;
    }
}
