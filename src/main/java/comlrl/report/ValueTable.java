package comlrl.report;

import comlrl.report.MetricLayout.Chart;
import comlrl.report.MetricLayout.Line;
import java.util.List;

/**
 * Metrics with nothing to draw, as values: a series that holds one value throughout ("0.5"), or at
 * most two points ("0.30 → 0.80", first then last; one point is its value) is a row of a compact table
 * rather than a chart. A chart is shown this way only when every line of it, in every run, is such a
 * series (a chart is never split between a plot and rows). Each row is a {@code <tr class="value">}
 * carrying {@code data-run}, {@code data-metric} and {@code data-points}, like the curves of
 * {@link SvgChart}.
 */
final class ValueTable {
    private ValueTable() {
    }

    /**
     * Whether a series is a value: at most two points, or every event of every point equal
     * ({@code min == max} at each step and the same value at every step).
     */
    static boolean isValue(Series s) {
        List<Series.Point> pts = s.points();
        if (pts.size() <= 2) {
            return true;
        }
        double v = pts.get(0).min();
        return pts.stream().allMatch(p -> p.min() == v && p.max() == v);
    }

    /** Whether every line of the chart that some run logged is a value (and some run logged one). */
    static boolean isValues(Chart chart, List<RunReport> runs) {
        boolean any = false;
        for (Line line : chart.lines()) {
            for (RunReport run : runs) {
                Series s = run.metrics().get(line.key());
                if (s != null) {
                    any = true;
                    if (!isValue(s)) {
                        return false;
                    }
                }
            }
        }
        return any;
    }

    /**
     * The value as text: "—" without finite points; the value when all events are equal or there is
     * one point; "first → last" (each point the mean of its step's events) for two points.
     */
    static String text(Series s) {
        List<Series.Point> pts = s.points();
        if (pts.isEmpty()) {
            return "\u2014";
        }
        Series.Point first = pts.get(0);
        Series.Point last = pts.get(pts.size() - 1);
        boolean constant = pts.stream().allMatch(p -> p.min() == first.min() && p.max() == first.min());
        if (constant || pts.size() == 1) {
            return Ticks.format(first.mean());
        }
        return Ticks.format(first.mean()) + " \u2192 " + Ticks.format(last.mean());
    }

    /** Where the values were logged: "step 0", "steps 0 → 16", "steps 0–96 (13 points)". */
    static String steps(Series s) {
        List<Series.Point> pts = s.points();
        if (pts.isEmpty()) {
            return s.nonFinite() > 0 ? s.nonFinite() + " non-finite" : "";
        }
        long first = pts.get(0).step();
        long last = pts.get(pts.size() - 1).step();
        String where = pts.size() == 1 ? "step " + first
                : pts.size() == 2 ? "steps " + first + " \u2192 " + last
                : "steps " + first + "\u2013" + last + " (" + pts.size() + " points)";
        int events = pts.stream().mapToInt(Series.Point::count).sum();
        if (events > pts.size()) {
            where += "; mean of " + events + " events";
        }
        if (s.nonFinite() > 0) {
            where += "; " + s.nonFinite() + " non-finite";
        }
        return where;
    }

    /** The rows of the charts (all values), as one table. */
    static void render(StringBuilder out, List<Chart> charts, List<RunReport> runs) {
        boolean several = runs.size() > 1;
        out.append("<table class=\"values\">\n<thead><tr><th>metric</th>").append(several ? "<th>run</th>" : "")
                .append("<th>value</th><th>logged</th></tr></thead>\n<tbody>\n");
        for (Chart chart : charts) {
            for (Line line : chart.lines()) {
                for (int r = 0; r < runs.size(); r++) {
                    RunReport run = runs.get(r);
                    Series s = run.metrics().get(line.key());
                    if (s == null) {
                        continue;
                    }
                    String title = chart.lines().size() > 1 ? chart.title() + " (" + line.label() + ")" : chart.title();
                    out.append("<tr class=\"value\" data-run=\"").append(Xml.escape(run.name()))
                            .append("\" data-metric=\"").append(Xml.escape(line.key()))
                            .append("\" data-points=\"").append(s.points().size()).append("\"><td>")
                            .append(Xml.escape(title)).append(" <code>").append(Xml.escape(line.key())).append("</code></td>");
                    if (several) {
                        out.append("<td class=\"name\">").append(SvgChart.swatch(SvgChart.colour(r), ""))
                                .append(Xml.escape(run.name())).append("</td>");
                    }
                    out.append("<td class=\"num value\">").append(Xml.escape(text(s))).append("</td><td class=\"prov\">")
                            .append(Xml.escape(steps(s))).append("</td></tr>\n");
                }
            }
        }
        out.append("</tbody>\n</table>\n");
    }
}
