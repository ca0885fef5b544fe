package comlrl.data;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Task sets that ship with the library, named {@code builtin:NAME} in config files. */
public final class BuiltinTasks {
    public static final String PREFIX = "builtin:";
    /** The built-in task sets, as config files name them. */
    public static final List<String> NAMES = List.of("builtin:length-ratio", "builtin:writing-tldr", "builtin:writing-arxiv");

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

    /**
     * Writing tasks of this library's own for the offline writing examples: {@code writing-tldr},
     * twelve short posts (column {@code prompt}, as the TL;DR set names it) to summarize and
     * elaborate; {@code writing-arxiv}, eight abstracts (column {@code abstract_text}) to expand
     * into an introduction. All invented for this library.
     */
    public static Dataset writing(String task) {
        String resource = "/comlrl/data/writing-" + task + ".jsonl";
        try (java.io.InputStream in = BuiltinTasks.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("no built-in writing task set '" + task + "'");
            }
            com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
            List<Map<String, Object>> rows = new java.util.ArrayList<>();
            for (String line : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank()) {
                    rows.add(json.readValue(line, new com.fasterxml.jackson.core.type.TypeReference<Map<String, Object>>() {}));
                }
            }
            return Dataset.fromRows(rows);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    public static boolean isBuiltin(String source) {
        return source != null && source.startsWith(PREFIX);
    }

    /** The built-in task set {@code builtin:NAME}; fails listing the available names. */
    public static Dataset load(String source) {
        String name = source.substring(PREFIX.length());
        return switch (name) {
            case "length-ratio" -> lengthRatio();
            case "writing-tldr" -> writing("tldr");
            case "writing-arxiv" -> writing("arxiv");
            default -> throw new IllegalArgumentException("Unknown built-in task set '" + source + "'; available: "
                    + String.join(", ", NAMES));
        };
    }
}
