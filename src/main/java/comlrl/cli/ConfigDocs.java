package comlrl.cli;

import comlrl.trainers.Algorithms;
import comlrl.trainers.Algorithms.Algorithm;
import comlrl.utils.ConfigField;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code config-docs}: writes {@code docs/CONFIG.md}, the reference of every config key, generated
 * from the declarations: the run config's top-level keys ({@link RunConfig#TOP_LEVEL}) and, for each
 * {@code args:} key, its type, default, allowed values and the algorithms that take it, from the
 * {@link ConfigField}s of every algorithm in {@link Algorithms}.
 */
@Command(name = "config-docs", mixinStandardHelpOptions = true,
        description = "Write the config reference (docs/CONFIG.md) from the config declarations.")
final class ConfigDocs implements Callable<Integer> {
    /** Where the reference lives, relative to the repository root. */
    static final String FILE = "docs/CONFIG.md";
    static final String REGENERATE = "bin/comlrl config-docs --out " + FILE;

    @Option(names = "--out", paramLabel = "FILE", description = "write here instead of to standard output")
    Path out;

    @Override
    public Integer call() throws Exception {
        String text = render();
        if (out == null) {
            System.out.print(text);
        } else {
            Files.writeString(out, text);
            System.err.println("wrote " + out);
        }
        return 0;
    }

    /** The reference as Markdown. */
    static String render() {
        StringBuilder md = new StringBuilder();
        md.append("# Configuration reference\n\n")
                .append("Generated from the config declarations by `").append(REGENERATE).append("`; do not edit by hand ")
                .append("(`ConfigDocsTest` fails when this file is stale).\n\n")
                .append("## Run config: top-level keys\n\n| key | what it holds |\n|---|---|\n");
        RunConfig.TOP_LEVEL.forEach((key, meaning) -> md.append("| `").append(key).append("` | ")
                .append(cell(meaning)).append(" |\n"));
        md.append("\n## Algorithms\n\n| `algorithm:` | config type | reference name |\n|---|---|---|\n");
        Map<Algorithm, List<ConfigField<?>>> tables = new LinkedHashMap<>();
        for (Algorithm algorithm : Algorithms.all()) {
            tables.put(algorithm, algorithm.fields());
            md.append("| `").append(algorithm.configName()).append("` | `").append(algorithm.defaults().configTypeName())
                    .append("` | ").append(algorithm.displayName()).append(" |\n");
        }
        md.append("\n## `args:` keys\n\n")
                .append("A key with different types or rules in different algorithms has a row for each. \"all\" = ")
                .append("every algorithm above.\n\n")
                .append("| key | meaning | type | default | allowed values | algorithms |\n|---|---|---|---|---|---|\n");
        for (Row row : rows(tables)) {
            md.append("| `").append(row.key).append("` | ").append(cell(row.meaning)).append(" | ").append(row.type)
                    .append(" | ").append(cell(row.defaultCell())).append(" | ").append(cell(row.allowed)).append(" | ")
                    .append(row.count() == tables.size() ? "all"
                            : String.join(", ", row.algorithms())).append(" |\n");
        }
        return md.toString();
    }

    /**
     * The keys as plain text for a terminal ({@code config-keys}, {@code train --help}): the run config's
     * top-level keys, then every {@code args:} key of {@code algorithm} (every algorithm's when null) with
     * its meaning, type, default and allowed values.
     */
    static String keysText(Algorithm algorithm) {
        StringBuilder out = new StringBuilder("Run config, top-level keys:\n");
        RunConfig.TOP_LEVEL.forEach((key, meaning) -> entry(out, key, meaning, null));
        Map<Algorithm, List<ConfigField<?>>> tables = new LinkedHashMap<>();
        for (Algorithm a : algorithm != null ? List.of(algorithm) : Algorithms.all()) {
            tables.put(a, a.fields());
        }
        out.append("\nargs: keys").append(algorithm != null ? " of " + algorithm.configName() + " ("
                + algorithm.defaults().configTypeName() + ")" : " (all algorithms; `bin/comlrl config-keys ALGORITHM` "
                + "lists one)").append(":\n");
        for (Row row : rows(tables)) {
            String detail = row.type + ", default " + row.defaultCell() + (row.allowed.isEmpty() ? "" : "; " + row.allowed)
                    + (algorithm != null || row.count() == tables.size() ? "" : "; " + String.join(", ", row.algorithms()));
            entry(out, row.key, row.meaning, detail);
        }
        return out.toString();
    }

    private static void entry(StringBuilder out, String key, String meaning, String detail) {
        String pad = " ".repeat(4);
        out.append("  ").append(key).append('\n').append(pad).append(meaning.replace("\n", " ")).append('\n');
        if (detail != null) {
            out.append(pad).append("(").append(detail.replace("\n", " ")).append(")\n");
        }
    }

    /** One key with one type and rule, and, per default value, the algorithms that have it. */
    private record Row(String key, String meaning, String type, String allowed, Map<String, List<String>> defaults) {
        int count() {
            return defaults.values().stream().mapToInt(List::size).sum();
        }

        List<String> algorithms() {
            List<String> all = new ArrayList<>();
            defaults.values().forEach(all::addAll);
            return all;
        }

        /** "20" when every algorithm agrees, else "20 (magrpo, ...); 40 (iac, maac)". */
        String defaultCell() {
            if (defaults.size() == 1) {
                return defaults.keySet().iterator().next();
            }
            List<String> parts = new ArrayList<>();
            defaults.forEach((value, algorithms) -> parts.add(value + " (" + String.join(", ", algorithms) + ")"));
            return String.join("; ", parts);
        }
    }

    /** The rows in the order the keys first appear (MAGRPO's order first). */
    private static List<Row> rows(Map<Algorithm, List<ConfigField<?>>> tables) {
        Map<String, Row> rows = new LinkedHashMap<>();
        tables.forEach((algorithm, fields) -> {
            for (ConfigField<?> field : fields) {
                Row row = rows.computeIfAbsent(String.join("\u0000", field.key, field.type, field.allowed, field.meaning),
                        k -> new Row(field.key, field.meaning, field.type, field.allowed, new LinkedHashMap<>()));
                row.defaults.computeIfAbsent(defaultOf(field), k -> new ArrayList<>()).add(algorithm.configName());
            }
        });
        List<Row> ordered = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        rows.values().forEach(r -> {
            if (!keys.contains(r.key)) {
                keys.add(r.key);
            }
        });
        for (String key : keys) {
            rows.values().stream().filter(r -> r.key.equals(key)).forEach(ordered::add);
        }
        return ordered;
    }

    /** The default as a config file writes it; an unset field with a fallback names it. */
    private static String defaultOf(ConfigField<?> field) {
        if (field.defaultValue == null) {
            return field.fallback != null ? "null (= " + field.fallback.key + ")" : "null";
        }
        Object written = field.write(field.defaultValue);
        if (written instanceof String s) {
            return "\"" + s + "\"";
        }
        if (written instanceof Map<?, ?> m && m.isEmpty()) {
            return "{}";
        }
        if (written instanceof Double d && d != Math.rint(d) && Double.isFinite(d)) {
            return new java.math.BigDecimal(d.toString()).stripTrailingZeros().toPlainString(); // 5e-6 as 0.000005, not 5.0E-6
        }
        return Objects.toString(written);
    }

    /** A table cell: pipes escaped, on one line. */
    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }
}
