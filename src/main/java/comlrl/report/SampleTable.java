package comlrl.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the agents wrote: from a run's {@code eval_samples.jsonl} (one line per evaluation, written by the
 * trainers: the first evaluation items' joint samples with every agent's prompt and completion per turn and
 * each turn's reward), a table of the first and the last evaluation, item by item, so the report shows the
 * agents' text before and after training beside the curves. A line that is not such an object (the
 * half-written last line of a killed run) is skipped; a run without the file gets no table.
 */
final class SampleTable {
    static final String FILE = "eval_samples.jsonl";
    /** Characters of a prompt shown (its end, where the task is); completions are shown whole. */
    static final int PROMPT_CHARS = 400;
    private static final ObjectMapper JSON = new ObjectMapper();

    private SampleTable() {
    }

    /** The evaluations recorded in {@code dir}, in order (empty without the file). */
    static List<JsonNode> evaluations(Path dir) {
        Path file = dir.resolve(FILE);
        List<JsonNode> out = new ArrayList<>();
        if (!Files.isRegularFile(file)) {
            return out;
        }
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                try {
                    JsonNode node = JSON.readTree(line);
                    if (node != null && node.path("env_step").isNumber() && node.path("samples").isArray()) {
                        out.add(node);
                    }
                } catch (IOException e) {
                    // a half-written line: skipped
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + file + ": " + e.getMessage(), e);
        }
        return out;
    }

    /** Whether any run recorded samples. */
    static boolean any(List<RunReport> runs) {
        return runs.stream().anyMatch(r -> !evaluations(r.dir()).isEmpty());
    }

    /** The samples section: per run, the first and (when there are several) the last evaluation. */
    static void render(StringBuilder out, List<RunReport> runs) {
        out.append("<section id=\"samples\">\n<h2>Sample completions</h2>\n");
        for (RunReport run : runs) {
            List<JsonNode> evals = evaluations(run.dir());
            if (evals.isEmpty()) {
                continue;
            }
            List<JsonNode> shown = evals.size() == 1 ? evals : List.of(evals.get(0), evals.get(evals.size() - 1));
            for (int e = 0; e < shown.size(); e++) {
                JsonNode eval = shown.get(e);
                String when = shown.size() == 1 ? "evaluation" : e == 0 ? "first evaluation" : "last evaluation";
                out.append("<h3>").append(runs.size() > 1 ? Xml.escape(run.name()) + ": " : "").append(when)
                        .append(" (env_step ").append(eval.get("env_step").asLong()).append(")</h3>\n");
                out.append("<table class=\"samples\" data-run=\"").append(Xml.escape(run.name()))
                        .append("\" data-env-step=\"").append(eval.get("env_step").asLong()).append("\">\n")
                        .append("<thead><tr><th>item</th><th>turn</th><th>agent</th><th>prompt</th><th>completion</th>")
                        .append("<th>reward</th></tr></thead>\n<tbody>\n");
                for (JsonNode sample : eval.get("samples")) {
                    row(out, sample);
                }
                out.append("</tbody>\n</table>\n");
            }
        }
        out.append("</section>\n");
    }

    /** One item: a row per turn and agent; the turn's reward on its first agent's row, spanning the others. */
    private static void row(StringBuilder out, JsonNode sample) {
        JsonNode prompts = sample.path("prompts");
        JsonNode completions = sample.path("completions");
        JsonNode rewards = sample.path("rewards");
        int agents = completions.size();
        for (int t = 0; t < rewards.size(); t++) {
            for (int i = 0; i < agents; i++) {
                out.append("<tr class=\"sample\">");
                if (t == 0 && i == 0) {
                    out.append("<td rowspan=\"").append(agents * rewards.size()).append("\">")
                            .append(sample.path("item").asInt()).append("</td>");
                }
                if (i == 0) {
                    out.append("<td rowspan=\"").append(agents).append("\">").append(t + 1).append("</td>");
                }
                String prompt = prompts.path(i).path(t).asText("");
                if (prompt.length() > PROMPT_CHARS) {
                    prompt = "\u2026" + prompt.substring(prompt.length() - PROMPT_CHARS);
                }
                out.append("<td>").append(i).append("</td><td class=\"text prompt\">").append(Xml.escape(prompt))
                        .append("</td><td class=\"text completion\">")
                        .append(Xml.escape(completions.path(i).path(t).asText(""))).append("</td>");
                if (i == 0) {
                    JsonNode r = rewards.path(t);
                    out.append("<td rowspan=\"").append(agents).append("\" class=\"reward\">")
                            .append(r.isNumber() ? String.format(Locale.ROOT, "%.4g", r.asDouble()) : Xml.escape(r.asText()))
                            .append("</td>");
                }
                out.append("</tr>\n");
            }
        }
    }
}
