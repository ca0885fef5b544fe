package comlrl.utils;

import java.util.Locale;

/** An enum whose config-file spelling is its constant's name in lower case ({@code SEQUENCE_SUM} → "sequence_sum"). */
public interface ConfigName {
    /** The constant's name ({@link Enum#name()}). */
    String name();

    /** The config-file spelling. */
    default String configName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
