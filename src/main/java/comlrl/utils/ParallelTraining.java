package comlrl.utils;

import java.util.Locale;

/**
 * {@code parallel_training}: how agents are placed and run: "none", "mp" (reference §3.1) and
 * "ddp" (several processes, reference §9's {@code DistributedContext}; the reference's trainers reject
 * it, every trainer here runs it, dividing the work as {@code ddp_split} says). "auto" and
 * "scheduler" are rejected.
 */
public enum ParallelTraining {
    /** Every model on one device, agents run one after another. Config: "none", "null" or null. */
    NONE("none"),
    /** Model parallel: one device per agent from {@code agent_devices}; agents run on their own threads. */
    MP("mp"),
    /**
     * Several processes (started by {@code bin/comlrl launch}, torchrun or Slurm with torchrun's
     * variables), each computing on its own device; {@code ddp_split} says how the work is divided.
     */
    DDP("ddp");

    private final String configName;

    ParallelTraining(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    /**
     * Parses null, "none" or "null" → {@link #NONE}; "mp" → {@link #MP}; "ddp" → {@link #DDP} (case
     * and blanks ignored).
     *
     * @throws IllegalArgumentException for anything else, "auto" included
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
        if (key.equals("ddp")) {
            return DDP;
        }
        throw new IllegalArgumentException("parallel_training must be \"none\", \"mp\" or \"ddp\" (got \"" + value
                + "\"); \"auto\" and \"scheduler\" are not supported: use \"mp\" with agent_devices to put each agent "
                + "on its own device, or \"ddp\" under bin/comlrl launch for several processes");
    }

    @Override
    public String toString() {
        return configName;
    }
}
