package comlrl.data;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Task sets that ship with the library, named {@code builtin:NAME} in config files. */
public final class BuiltinTasks {
    public static final String PREFIX = "builtin:";
    /** The built-in task sets, as config files name them. */
    public static final List<String> NAMES = List.of("builtin:length-ratio", "builtin:writing-tldr", "builtin:writing-arxiv",
            "builtin:code-tasks");

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
        return jsonl("writing-" + task, "writing task set '" + task + "'");
    }

    /**
     * Twenty small Python tasks of this library's own for the offline code example (string, list and number
     * utilities), with HumanEval's columns: {@code task_id}, {@code prompt} (a signature and docstring),
     * {@code entry_point} and {@code test} (a {@code check(candidate)} function of asserts).
     */
    public static Dataset codeTasks() {
        return jsonl("code-tasks", "code task set");
    }

    /** The rows of resource {@code comlrl/data/NAME.jsonl}. */
    private static Dataset jsonl(String name, String what) {
        String resource = "/comlrl/data/" + name + ".jsonl";
        try (java.io.InputStream in = BuiltinTasks.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("no built-in " + what);
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
            case "code-tasks" -> codeTasks();
            default -> throw new IllegalArgumentException("Unknown built-in task set '" + source + "'; available: "
                    + String.join(", ", NAMES));
        };
    }
}
