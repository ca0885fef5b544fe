package comlrl.logging;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the agents wrote at an evaluation, for people to read: the first {@link #KEPT} evaluation items'
 * first joint sample, each with every agent's prompt and completion per turn and the reward of each turn.
 * {@link MetricsLogger#samples} appends one JSON line per evaluation to {@code eval_samples.jsonl} beside
 * {@code metrics.jsonl}: {@code {"env_step": s, "samples": [{"item": j, "prompts": [[agent][turn]],
 * "completions": [[agent][turn]], "rewards": [turn]}, ...]}}; the run report shows the first and the last.
 */
public final class EvalSamples {
    /** Items kept per evaluation. */
    public static final int KEPT = 4;
    /** The file, in the run directory. */
    static final String FILE = "eval_samples.jsonl";
    private static final ObjectMapper JSON = new ObjectMapper();

    private EvalSamples() {
    }

    /** One evaluation item's joint sample: {@code prompts}/{@code completions} [agent][turn], {@code rewards} [turn]. */
    public record Sample(int item, List<List<String>> prompts, List<List<String>> completions, List<Double> rewards) {
    }

    /** Appends one evaluation's samples at {@code envStep} to {@code file} (nothing for none). */
    static void append(Path file, long envStep, List<Sample> samples) {
        if (samples.isEmpty()) {
            return;
        }
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("env_step", envStep);
        line.put("samples", samples);
        try {
            Files.writeString(file, JSON.writeValueAsString(line) + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write " + file + ": " + e.getMessage(), e);
        }
    }
}
