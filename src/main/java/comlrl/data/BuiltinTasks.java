package comlrl.data;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Task sets that ship with the library, named {@code builtin:NAME} in config files. */
public final class BuiltinTasks {
    public static final String PREFIX = "builtin:";

    private BuiltinTasks() {
    }

    /**
     * The seed documents' length-ratio task: ten creative prompts, each with {@code target_min} 2
     * and {@code target_max} 3 (the detailed answer should be 2-3 times as long as the brief one).
     */
    public static Dataset lengthRatio() {
        Map<String, List<?>> columns = new LinkedHashMap<>();
        columns.put("prompt", List.of(
                        "Describe a city in the clouds.",
                        "Invent a new holiday.",
                        "Write a bedtime story for a dragon.",
                        "Explain how teleportation might work.",
                        "Tell a story about dinosaurs.",
                        "Describe a world without electricity.",
                        "Create a superhero with a unique power.",
                        "Write a scene where the moon talks.",
                        "Invent a new type of fruit.",
                        "Design a playground on Mars."));
        columns.put("target_min", Collections.nCopies(10, 2.0));
        columns.put("target_max", Collections.nCopies(10, 3.0));
        return Dataset.fromColumns(columns);
    }

    public static boolean isBuiltin(String source) {
        return source != null && source.startsWith(PREFIX);
    }

    /** The built-in task set {@code builtin:NAME}; fails listing the available names. */
    public static Dataset load(String source) {
        String name = source.substring(PREFIX.length());
        if (name.equals("length-ratio")) {
            return lengthRatio();
        }
        throw new IllegalArgumentException("Unknown built-in task set '" + source + "'; available: builtin:length-ratio");
    }
}
