package comlrl.report;

import comlrl.report.MetricLayout.Chart;
import comlrl.report.MetricLayout.Section;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A self-contained HTML report of one or more training runs: one file with inline CSS and SVG, no
 * scripts and nothing fetched, that opens the same anywhere and can be mailed or archived beside the
 * run. It holds, in order:
 * <ol>
 *   <li>the runs: name, algorithm, models, agents, last env_step, evaluation reward first and last,
 *       provenance (revision, start time, Java, seed, threads);</li>
 *   <li>training and evaluation reward per turn against env_step;</li>
 *   <li>one chart per other metric key, by family (training, evaluation, per agent with one line per
 *       agent, reward model, preference, iterations...) and kind (rewards, losses, KL, lengths,
 *       other), see {@link MetricLayout};</li>
 *   <li>the resolved configs, collapsed (and, for several runs, the settings that differ).</li>
 * </ol>
 * Several runs share each chart, one colour per run. The markup is XHTML (well-formed XML), every
 * text escaped; curves carry {@code data-run}, {@code data-metric} and {@code data-points} (see
 * {@link SvgChart}).
 */
public final class HtmlReport {
    /** The report's file name in a run directory ({@code bin/comlrl report RUN_DIR} writes {@code RUN_DIR/report.html}). */
    public static final String FILE_NAME = "report.html";

    private HtmlReport() {
    }

    /**
     * The report of one run, written into its directory as {@value #FILE_NAME} (what {@code bin/comlrl
     * report RUN_DIR} writes); returns the file. A trainer built from Java writes it when it closes if its
     * builder was given {@code report(true)}; this call writes it for any run directory, at any time.
     *
     * @throws IllegalArgumentException when {@code runDir} is not a run directory (no {@code metrics.jsonl})
     */
    public static Path write(Path runDir) {
        Path out = runDir.resolve(FILE_NAME);
        write(List.of(runDir), out);
        return out;
    }

    /**
     * Reads the run directories and writes their report to {@code out} (its directory is created;
     * the file is replaced whole, never left half-written).
     *
     * @throws IllegalArgumentException when a directory is not a run directory (no {@code metrics.jsonl})
     */
    public static void write(List<Path> runDirs, Path out) {
        write(runDirs, out, 0);
    }

    /**
     * {@link #write(List, Path)} with each curve also drawn smoothed by an exponential moving average
     * of weight {@code smoothing} in [0, 1) (0: none; see {@link Series#ema}).
     */
    public static void write(List<Path> runDirs, Path out, double smoothing) {
        if (runDirs.isEmpty()) {
            throw new IllegalArgumentException("A report needs at least one run directory");
        }
        requireSmoothing(smoothing);
        String html = render(runDirs.stream().map(RunReport::read).toList(), smoothing);
        Path target = out.toAbsolutePath();
        try {
            Files.createDirectories(target.getParent());
            Path tmp = target.resolveSibling(comlrl.model.io.StaleTemps.tmpName("." + target.getFileName()));
            try {
                Files.writeString(tmp, comlrl.net.Secrets.scrub(html), StandardCharsets.UTF_8); // a name of this process's own
                try {
                    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write report " + out + ": " + e.getMessage(), e);
        }
    }

    /** The report of runs already read, as a string. Runs whose names clash are renamed by their parent directory. */
    public static String render(List<RunReport> runs) {
        return render(runs, 0);
    }

    /** {@link #render(List)} with curves smoothed by an EMA of weight {@code smoothing} in [0, 1) (0: none). */
    public static String render(List<RunReport> runs, double smoothing) {
        requireSmoothing(smoothing);
        runs = distinctNames(runs);
        List<RunReport> named = runs;
        List<String> keys = new ArrayList<>(runs.stream().flatMap(r -> r.metrics().keySet().stream())
                .collect(Collectors.toCollection(LinkedHashSet::new)));
        List<Section> sections = MetricLayout.of(keys);
        ConfigTable config = new ConfigTable(runs);
        String title = runs.size() == 1 ? runs.get(0).name() : String.join(" vs ", runs.stream().map(RunReport::name).toList());

        StringBuilder out = new StringBuilder(1 << 16);
        out.append("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
                .append("<title>").append(Xml.escape(title)).append(" \u2014 training report</title>\n")
                .append("<style>\n").append(CSS).append("</style>\n</head>\n<body>\n<main>\n");
        out.append("<header>\n<p class=\"kicker\">Training report</p>\n<h1>").append(Xml.escape(title)).append("</h1>\n");
        Set<String> algorithms = new LinkedHashSet<>(runs.stream().map(RunReport::algorithm).toList());
        out.append("<p class=\"lede\">").append(Xml.escape(String.join(", ", algorithms))).append(" \u00b7 ")
                .append(runs.size()).append(runs.size() == 1 ? " run" : " runs").append(" \u00b7 ")
                .append(keys.size()).append(" metrics</p>\n</header>\n");
        runsTable(out, runs);
        if (runs.size() > 1) {
            out.append("<div class=\"run-legend\">");
            for (int r = 0; r < runs.size(); r++) {
                out.append("<span class=\"key\">").append(SvgChart.swatch(SvgChart.colour(r), ""))
                        .append(Xml.escape(runs.get(r).name())).append("</span>");
            }
            out.append("</div>\n");
        }
        out.append("<nav>");
        for (Section s : sections) {
            out.append("<a href=\"#").append(Xml.escape(s.id())).append("\">").append(Xml.escape(s.title())).append("</a>");
        }
        boolean samples = SampleTable.any(runs);
        if (samples) {
            out.append("<a href=\"#samples\">Samples</a>");
        }
        out.append("<a href=\"#config\">Config</a></nav>\n");
        if (sections.isEmpty()) {
            out.append("<p class=\"note\">No metrics logged yet.</p>\n");
        }
        for (Section s : sections) {
            out.append("<section id=\"").append(Xml.escape(s.id())).append("\">\n<h2>").append(Xml.escape(s.title())).append("</h2>\n");
            List<Chart> plotted = new ArrayList<>();
            List<Chart> values = new ArrayList<>();
            s.charts().forEach(c -> (ValueTable.isValues(c, named) ? values : plotted).add(c));
            if (!plotted.isEmpty()) {
                boolean large = plotted.stream().anyMatch(Chart::large);
                out.append("<div class=\"").append(large ? "grid large" : "grid").append("\">\n");
                for (Chart c : plotted) {
                    SvgChart.render(out, c, runs, smoothing);
                }
                out.append("</div>\n");
            }
            if (!values.isEmpty()) {
                ValueTable.render(out, values, runs);
            }
            out.append("</section>\n");
        }
        if (samples) {
            SampleTable.render(out, runs);
        }
        out.append("<section id=\"config\">\n<h2>Config</h2>\n");
        if (config.isEmpty()) {
            out.append("<p class=\"note\">No config.json in the run director").append(runs.size() == 1 ? "y" : "ies").append(".</p>\n");
        } else {
            config.renderDifferences(out);
            out.append("<details>\n<summary>Resolved config").append(runs.size() == 1 ? "" : "s")
                    .append(" (config.json)</summary>\n");
            config.renderAll(out);
            out.append("</details>\n");
        }
        out.append("</section>\n<footer>");
        for (RunReport r : runs) {
            out.append("<div>").append(Xml.escape(r.name())).append(": <code>")
                    .append(Xml.escape(r.dir().toAbsolutePath().normalize().toString())).append("</code>");
            if (r.unreadableLines() > 0) {
                out.append(" (").append(r.unreadableLines()).append(" unreadable line")
                        .append(r.unreadableLines() == 1 ? "" : "s").append(" of metrics.jsonl skipped)");
            }
            out.append("</div>");
        }
        out.append("</footer>\n</main>\n</body>\n</html>\n");
        return out.toString();
    }

    private static void requireSmoothing(double smoothing) {
        if (!(smoothing >= 0 && smoothing < 1)) {
            throw new IllegalArgumentException("smoothing must be in [0, 1) (0: none; TensorBoard's default is 0.6), not " + smoothing);
        }
    }

    private static void runsTable(StringBuilder out, List<RunReport> runs) {
        out.append("<table class=\"runs\">\n<thead><tr><th>run</th><th>algorithm</th><th>models</th><th>agents</th>")
                .append("<th>env steps</th><th>eval reward</th><th>wall time</th><th>provenance</th></tr></thead>\n<tbody>\n");
        for (int r = 0; r < runs.size(); r++) {
            RunReport run = runs.get(r);
            out.append("<tr><td class=\"name\">");
            if (runs.size() > 1) {
                out.append(SvgChart.swatch(SvgChart.colour(r), ""));
            }
            out.append(Xml.escape(run.name())).append("</td><td>").append(Xml.escape(run.algorithm())).append("</td><td>");
            lines(out, run.models());
            out.append("</td><td class=\"num\">").append(Xml.escape(run.config().path("num_agents").asText("?")))
                    .append("</td><td class=\"num\">").append(run.lastStep()).append("</td><td class=\"num\">");
            lines(out, evalRewards(run));
            out.append("</td><td class=\"num time\">");
            lines(out, timing(run));
            out.append("</td><td class=\"prov\">");
            lines(out, provenance(run.provenance()));
            out.append("</td></tr>\n");
        }
        out.append("</tbody>\n</table>\n");
    }

    /** Provenance in two lines: revision, start time; then the rest as "key value" pairs. */
    private static List<String> provenance(Map<String, String> provenance) {
        List<String> first = new ArrayList<>();
        List<String> rest = new ArrayList<>();
        provenance.forEach((key, value) -> {
            switch (key) {
                case "git_revision" -> first.add(0, "git " + (value.length() > 10 ? value.substring(0, 10) : value));
                case "started_at" -> first.add(value.length() >= 16 && value.charAt(10) == 'T'
                        ? value.substring(0, 10) + " " + value.substring(11, 16) + (value.endsWith("Z") ? " UTC" : "") : value);
                default -> rest.add(key.replace("_version", "").replace('_', ' ') + " " + value);
            }
        });
        List<String> out = new ArrayList<>();
        if (!first.isEmpty()) {
            out.add(String.join(" \u00b7 ", first));
        }
        if (!rest.isEmpty()) {
            out.add(String.join(" \u00b7 ", rest));
        }
        return out;
    }

    /**
     * From {@code run.json}: the run's wall time; its training time; training seconds per env step
     * ({@code train_time_s / last env_step}); items per second ({@code train_items / train_time_s},
     * where the item count is known). Nothing without {@code run.json}.
     */
    static List<String> timing(RunReport run) {
        List<String> out = new ArrayList<>();
        RunTimes t = run.times();
        if (t == null) {
            return out;
        }
        out.add(duration(t.wallS()));
        if (Double.isFinite(t.trainS())) {
            out.add("training " + duration(t.trainS()));
            double perStep = t.secondsPerEnvStep(run.lastStep());
            if (Double.isFinite(perStep)) {
                out.add(Ticks.format(perStep) + " s / env step");
            }
            if (Double.isFinite(t.itemsPerSecond())) {
                out.add(Ticks.format(t.itemsPerSecond()) + " items/s");
            }
        }
        return out;
    }

    /** "42.5 s", "3 min 05 s", "2 h 07 min". */
    static String duration(double seconds) {
        if (!(seconds >= 0)) {
            return "?";
        }
        if (seconds < 60) {
            return String.format(Locale.ROOT, "%.1f s", seconds);
        }
        long s = Math.round(seconds);
        if (s < 3600) {
            return String.format(Locale.ROOT, "%d min %02d s", s / 60, s % 60);
        }
        long m = Math.round(seconds / 60);
        return String.format(Locale.ROOT, "%d h %02d min", m / 60, m % 60);
    }

    /** "0.40 → 0.97" per turn of {@code eval/turn_t/reward_mean}: the first evaluation and the last. */
    private static List<String> evalRewards(RunReport run) {
        List<String> out = new ArrayList<>();
        List<String> keys = run.metrics().keySet().stream().filter(k -> k.matches("eval/turn_\\d+/reward_mean"))
                .sorted(MetricLayout::natural).toList();
        for (String key : keys) {
            List<Series.Point> pts = run.metrics().get(key).points();
            if (pts.isEmpty()) {
                continue;
            }
            String range = String.format(Locale.ROOT, "%.2f \u2192 %.2f", pts.get(0).mean(), pts.get(pts.size() - 1).mean());
            out.add(keys.size() > 1 ? key.substring(5, key.indexOf('/', 5)).replace('_', ' ') + ": " + range : range);
        }
        return out;
    }

    private static void lines(StringBuilder out, List<String> lines) {
        if (lines.isEmpty()) {
            out.append("\u2014");
        }
        for (int i = 0; i < lines.size(); i++) {
            out.append(i == 0 ? "" : "<br/>").append(Xml.escape(lines.get(i)));
        }
    }

    /** Runs renamed "parent/name" (then "name #i") where their directory names clash. */
    static List<RunReport> distinctNames(List<RunReport> runs) {
        Map<String, Integer> counts = new HashMap<>();
        runs.forEach(r -> counts.merge(r.name(), 1, Integer::sum));
        List<RunReport> out = new ArrayList<>();
        Set<String> used = new HashSet<>();
        for (RunReport r : runs) {
            String name = r.name();
            if (counts.get(name) > 1) {
                Path parent = r.dir().toAbsolutePath().normalize().getParent();
                name = parent != null && parent.getFileName() != null ? parent.getFileName() + "/" + name : name;
            }
            String unique = name;
            for (int i = 2; !used.add(unique); i++) {
                unique = name + " #" + i;
            }
            out.add(unique.equals(r.name()) ? r : r.withName(unique));
        }
        return out;
    }

    private static final String CSS = """
            :root { --ink: #1d2330; --muted: #667085; --rule: #e4e7ec; --grid: #eef0f3; --axis: #98a2b3; --bg: #ffffff; --panel: #f8f9fb; }
            * { box-sizing: border-box; }
            body { margin: 0; background: var(--bg); color: var(--ink);
                   font: 14px/1.45 "Inter", "Helvetica Neue", "Segoe UI", "Liberation Sans", Arial, "DejaVu Sans", sans-serif;
                   font-variant-numeric: tabular-nums; -webkit-font-smoothing: antialiased; }
            main { max-width: 1360px; margin: 0 auto; padding: 28px 32px 48px; }
            header { margin-bottom: 14px; }
            .kicker { margin: 0; color: var(--muted); text-transform: uppercase; letter-spacing: .08em; font-size: 11.5px; font-weight: 600; }
            h1 { margin: 2px 0 2px; font-size: 28px; font-weight: 650; letter-spacing: -.01em; }
            .lede { margin: 0; color: var(--muted); font-size: 14px; }
            h2 { font-size: 19px; font-weight: 650; margin: 30px 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--rule); }
            h3 { font-size: 12px; font-weight: 600; color: var(--muted); text-transform: uppercase; letter-spacing: .06em; margin: 16px 0 8px; }
            code { font-family: "JetBrains Mono", "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 11.5px; }
            table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
            table.samples td { vertical-align: top; }
            table.samples td.text { white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 11.5px; }
            table.samples td.prompt { color: var(--muted); max-width: 28em; }
            th { text-align: left; font-weight: 600; color: var(--muted); font-size: 11.5px; text-transform: uppercase; letter-spacing: .04em;
                 border-bottom: 1px solid var(--rule); padding: 6px 10px 6px 0; }
            td { border-bottom: 1px solid var(--grid); padding: 6px 10px 6px 0; vertical-align: top; }
            table.runs td.name { font-weight: 600; white-space: nowrap; }
            table.runs td.prov { color: var(--muted); font-size: 11.5px; }
            td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
            .swatch { vertical-align: middle; margin-right: 6px; }
            .run-legend { position: sticky; top: 0; z-index: 1; background: rgba(255,255,255,.94); padding: 8px 0; margin-top: 10px;
                          border-bottom: 1px solid var(--rule); display: flex; flex-wrap: wrap; gap: 6px 20px; font-weight: 600; }
            nav { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 14px 0 0; font-size: 13px; }
            nav a { color: #3a5ccc; text-decoration: none; }
            .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 14px 18px; }
            .grid.large { grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); }
            figure.chart { margin: 0; padding: 10px 12px 8px; background: var(--bg); border: 1px solid var(--rule); border-radius: 8px; }
            figcaption { margin-bottom: 4px; }
            figcaption .title { display: block; }
            figcaption .title { font-weight: 600; font-size: 13.5px; }
            .chart.large figcaption .title { font-size: 15.5px; }
            figcaption code { color: var(--muted); }
            figure svg { display: block; width: 100%; height: auto; overflow: visible; }
            svg .grid { stroke: var(--grid); stroke-width: 1; }
            svg .zero { stroke: #c9ced6; stroke-width: 1; }
            svg .axis { stroke: var(--axis); stroke-width: 1; }
            svg text { font-family: inherit; }
            svg .tick { fill: var(--muted); font-size: 11px; }
            svg .label { fill: var(--muted); font-size: 11px; }
            svg .empty { fill: var(--muted); font-size: 12px; }
            svg .curve, svg .smoothed { fill: none; stroke-width: 2; stroke-linejoin: round; stroke-linecap: round; }
            svg .band { opacity: .14; stroke: none; }
            svg .iteration { stroke-width: 1; stroke-dasharray: 3 3; }
            svg .iteration-label { fill: var(--muted); font-size: 10px; }
            svg .dot { stroke: #fff; stroke-width: .8; }
            .legend { display: flex; flex-wrap: wrap; gap: 2px 14px; font-size: 12px; color: var(--muted); margin-top: 2px; }
            .key { display: inline-flex; align-items: center; white-space: nowrap; }
            .note { color: var(--muted); font-size: 11.5px; margin: 4px 0 0; }
            details { margin-top: 10px; }
            summary { cursor: pointer; color: #3a5ccc; font-weight: 600; font-size: 13px; padding: 4px 0; }
            table.config-table td, table.diff-table td { font-family: "JetBrains Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace;
                 font-size: 11.5px; white-space: pre-wrap; word-break: break-word; }
            td.path { color: #475467; width: 32%; }
            tr.differs td { background: #fff8e6; }
            td.absent { color: var(--axis); }
            table.values { margin-top: 12px; }
            table.values td.value { font-weight: 600; }
            footer { margin-top: 36px; color: var(--muted); font-size: 11.5px; border-top: 1px solid var(--rule); padding-top: 10px; }
            """;
}
