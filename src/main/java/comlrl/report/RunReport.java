package comlrl.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A training run directory read back: its resolved {@code config.json} (the config, {@code
 * provenance}, per-agent {@code generation}) and every metric key of its {@code metrics.jsonl} as a
 * {@link Series}, keys in the order they first appear. A line that is not a JSON object with a
 * numeric {@code env_step} (the half-written last line of a killed run) is skipped and counted.
 *
 * @param name            how the report names the run (the directory's name unless renamed)
 * @param config          the resolved config, or a missing node when the directory has none
 * @param metrics         key -> series, in first-logged order
 * @param unreadableLines lines of {@code metrics.jsonl} that were skipped
 * @param times           the run's {@code run.json} (wall time), or null when it has none
 */
public record RunReport(String name, Path dir, JsonNode config, Map<String, Series> metrics, int unreadableLines,
        RunTimes times) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public RunReport {
        metrics = Collections.unmodifiableMap(new LinkedHashMap<>(metrics));
    }

    /** Reads {@code dir/config.json} and {@code dir/run.json} (optional) and {@code dir/metrics.jsonl} (required). */
    public static RunReport read(Path dir) {
        Path metricsFile = dir.resolve("metrics.jsonl");
        Path configFile = dir.resolve("config.json");
        if (!Files.isRegularFile(metricsFile)) {
            throw new IllegalArgumentException(dir + " is not a run directory: it has no metrics.jsonl (give the "
                    + "output_dir of a training run)");
        }
        JsonNode config = MissingNode.getInstance();
        if (Files.isRegularFile(configFile)) {
            try {
                config = JSON.readTree(configFile.toFile());
            } catch (IOException e) {
                throw new IllegalArgumentException("Cannot read " + configFile + ": " + e.getMessage(), e);
            }
        }
        Map<String, Series.Builder> builders = new LinkedHashMap<>();
        int unreadable = 0;
        try (BufferedReader in = Files.newBufferedReader(metricsFile, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode event;
                try {
                    event = JSON.readTree(line);
                } catch (IOException e) {
                    unreadable++;
                    continue;
                }
                if (event == null || !event.isObject() || !event.path("env_step").isNumber()) {
                    unreadable++;
                    continue;
                }
                long step = event.get("env_step").asLong();
                for (Iterator<Map.Entry<String, JsonNode>> it = event.fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> field = it.next();
                    JsonNode value = field.getValue();
                    if (field.getKey().equals("env_step") || !(value.isNumber() || value.isNull())) {
                        continue;
                    }
                    Series.Builder series = builders.computeIfAbsent(field.getKey(), Series.Builder::new);
                    if (value.isNull()) {
                        series.addNonFinite();
                    } else {
                        series.add(step, value.asDouble());
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + metricsFile + ": " + e.getMessage(), e);
        }
        Map<String, Series> metrics = new LinkedHashMap<>();
        builders.forEach((key, b) -> metrics.put(key, b.build()));
        Path fileName = dir.toAbsolutePath().normalize().getFileName();
        return new RunReport(fileName == null ? dir.toString() : fileName.toString(), dir, config, metrics, unreadable,
                RunTimes.read(dir).orElse(null));
    }

    /** The same run under another name (to tell apart runs whose directories share a name). */
    public RunReport withName(String newName) {
        return new RunReport(newName, dir, config, metrics, unreadableLines, times);
    }

    /** {@code algorithm} of the config, or "?" without one. */
    public String algorithm() {
        return config.path("algorithm").isValueNode() ? config.get("algorithm").asText() : "?";
    }

    /**
     * The models the run names, each as "role: source": the agents ({@code agent_model} or {@code
     * agents}), critics ({@code critic_model}, {@code critics}), the reward model of preference runs
     * ({@code args.reward_model_name}, {@code reward.model}), LoRA adapters' rank.
     */
    public List<String> models() {
        List<String> models = new ArrayList<>();
        addModels(models, "agents", config.path("agents").isMissingNode() ? config.path("agent_model") : config.path("agents"));
        addModels(models, "critics", config.path("critics").isMissingNode() ? config.path("critic_model") : config.path("critics"));
        addModels(models, "reward model", config.path("args").path("reward_model_name"));
        addModels(models, "reward model", config.path("reward").path("model"));
        addModels(models, "adapters", config.path("lora_adapters"));
        JsonNode lora = config.path("lora");
        if (lora.isObject()) {
            models.add("LoRA: r " + text(lora.path("r"), "8") + ", alpha " + text(lora.path("alpha"), "8"));
        }
        return models;
    }

    private static void addModels(List<String> out, String role, JsonNode node) {
        List<String> names = new ArrayList<>();
        if (node.isArray()) {
            node.forEach(n -> names.add(n.isValueNode() ? n.asText() : n.toString()));
        } else if (node.isValueNode() && !node.isNull()) {
            names.add(node.asText());
        }
        if (names.isEmpty()) {
            return;
        }
        boolean same = names.stream().distinct().count() == 1;
        out.add(role + ": " + (same && names.size() > 1 ? names.get(0) + " \u00d7" + names.size() : String.join(", ", names)));
    }

    private static String text(JsonNode node, String otherwise) {
        return node.isValueNode() && !node.isNull() ? node.asText() : otherwise;
    }

    /** {@code provenance} of the config as text values, in its order (null values left out). */
    public Map<String, String> provenance() {
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = config.path("provenance").fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isNull()) {
                out.put(e.getKey(), e.getValue().isValueNode() ? e.getValue().asText() : e.getValue().toString());
            }
        }
        return out;
    }

    /** The metric the iterative trainers (MADPOIter, MARLHFIter) log at the end of iteration i (from 1), valued i. */
    public static final String ITERATION_KEY = "iter/current_iteration";

    /** Iteration {@code iteration} of an iterative run starts at env_step {@code step}. */
    public record IterationStart(long step, int iteration) {
    }

    /**
     * Where the iterations after the first start: iteration i + 1 at the env_step at which iteration
     * i logged {@value #ITERATION_KEY} (its end), for every i but the last. Empty for other runs.
     */
    public List<IterationStart> iterationStarts() {
        Series iterations = metrics.get(ITERATION_KEY);
        List<IterationStart> out = new ArrayList<>();
        if (iterations == null || iterations.points().isEmpty()) {
            return out;
        }
        double last = iterations.points().stream().mapToDouble(Series.Point::max).max().orElseThrow();
        for (Series.Point p : iterations.points()) {
            if (p.max() < last) {
                out.add(new IterationStart(p.step(), (int) Math.round(p.max()) + 1));
            }
        }
        return out;
    }

    /** The last env_step any metric reached, or 0 for an empty log. */
    public long lastStep() {
        return metrics.values().stream().flatMap(s -> s.points().stream()).mapToLong(Series.Point::step).max().orElse(0);
    }
}
