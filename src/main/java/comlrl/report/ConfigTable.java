package comlrl.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The resolved configs of a report's runs as one table: every setting as a dotted path
 * ({@code args.num_generations}, {@code generation.agent_0.top_k}) with one column per run, rows whose
 * values differ between runs marked. A {@code {value, source}} pair (the per-agent generation
 * settings) shows as "value (source)"; a list of short values as one line of JSON, any other list one
 * row per element ({@code formatters[0]}).
 */
final class ConfigTable {
    /** Settings every run has its own value of: not worth listing as differences. */
    private static final Set<String> ALWAYS_DIFFERENT = Set.of("output_dir", "provenance.started_at");

    private final List<RunReport> runs;
    private final List<Map<String, String>> flat = new ArrayList<>();
    private final Set<String> paths = new LinkedHashSet<>();

    ConfigTable(List<RunReport> runs) {
        this.runs = runs;
        for (RunReport run : runs) {
            Map<String, String> values = new LinkedHashMap<>();
            flatten("", run.config(), values);
            flat.add(values);
            paths.addAll(values.keySet());
        }
    }

    /** path -> display value of {@code node}, depth first in the config's order. */
    static void flatten(String path, JsonNode node, Map<String, String> out) {
        if (node.isMissingNode()) {
            return;
        }
        if (node.isObject() && node.size() == 2 && node.has("value") && node.has("source") && node.get("source").isTextual()) {
            out.put(path, display(node.get("value")) + " (" + node.get("source").asText() + ")");
        } else if (node.isObject() && node.size() > 0) {
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                flatten(path.isEmpty() ? e.getKey() : path + "." + e.getKey(), e.getValue(), out);
            }
        } else if (node.isArray() && node.size() > 0 && !shortValues(node)) {
            for (int i = 0; i < node.size(); i++) {
                flatten(path + "[" + i + "]", node.get(i), out);
            }
        } else {
            out.put(path, display(node));
        }
    }

    /** Whether an array reads well as one line of JSON: values only, any strings short and on one line. */
    private static boolean shortValues(JsonNode array) {
        for (JsonNode n : array) {
            if (!n.isValueNode() || n.isTextual() && (n.asText().length() > 40 || n.asText().contains("\n"))) {
                return false;
            }
        }
        return true;
    }

    /** Strings as they are; everything else as JSON. */
    private static String display(JsonNode node) {
        return node.isTextual() ? node.asText() : node.toString();
    }

    private boolean differs(String path) {
        return flat.stream().map(m -> m.get(path)).distinct().count() > 1;
    }

    /** The table of settings whose values differ between runs (empty with one run, or with none differing). */
    void renderDifferences(StringBuilder out) {
        if (runs.size() < 2) {
            return;
        }
        List<String> rows = paths.stream().filter(p -> !ALWAYS_DIFFERENT.contains(p) && differs(p)).toList();
        out.append("<h3>Settings that differ</h3>\n");
        if (rows.isEmpty()) {
            out.append("<p class=\"note\">The runs' configs are the same (apart from their output directories and start times).</p>\n");
            return;
        }
        table(out, rows, "diff-table");
    }

    /** Every setting of every run. */
    void renderAll(StringBuilder out) {
        table(out, new ArrayList<>(paths), "config-table");
    }

    private void table(StringBuilder out, List<String> rows, String cssClass) {
        out.append("<table class=\"").append(cssClass).append("\">\n<thead><tr><th>setting</th>");
        for (int r = 0; r < runs.size(); r++) {
            out.append("<th>");
            if (runs.size() > 1) {
                out.append(SvgChart.swatch(SvgChart.colour(r), ""));
            }
            out.append(Xml.escape(runs.get(r).name())).append("</th>");
        }
        out.append("</tr></thead>\n<tbody>\n");
        for (String path : rows) {
            boolean differs = runs.size() > 1 && differs(path);
            out.append(differs ? "<tr class=\"differs\">" : "<tr>").append("<td class=\"path\">").append(Xml.escape(path)).append("</td>");
            for (Map<String, String> values : flat) {
                String value = values.get(path);
                out.append(value == null ? "<td class=\"absent\">\u2014</td>" : "<td>" + Xml.escape(value) + "</td>");
            }
            out.append("</tr>\n");
        }
        out.append("</tbody>\n</table>\n");
    }

    /** Whether any run has a config. */
    boolean isEmpty() {
        return paths.isEmpty();
    }
}
