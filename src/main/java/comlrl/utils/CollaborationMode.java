package comlrl.utils;

import java.util.Locale;

/**
 * {@code collaboration_mode}: whether each role is played by its own actor model
 * ({@link #DECENTRALIZED}) or one actor writes every role's response in a single joint completion
 * ({@link #CENTRALIZED}).
 */
public enum CollaborationMode {
    /** One actor per agent (the default of the preference trainers). */
    DECENTRALIZED("decentralized"),
    /** One actor writes all roles' responses; used by the centralized trainers. */
    CENTRALIZED("centralized");

    private final String configName;

    CollaborationMode(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    /** Parses "decentralized" or "centralized" (case and blanks ignored). */
    public static CollaborationMode parse(String value) {
        if (value != null) {
            String key = value.trim().toLowerCase(Locale.ROOT);
            for (CollaborationMode mode : values()) {
                if (mode.configName.equals(key)) {
                    return mode;
                }
            }
        }
        throw new IllegalArgumentException("collaboration_mode must be \"decentralized\" or \"centralized\" (got "
                + (value == null ? "null" : "\"" + value + "\"") + ")");
    }

    @Override
    public String toString() {
        return configName;
    }
}
