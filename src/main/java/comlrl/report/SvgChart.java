package comlrl.report;

import comlrl.report.MetricLayout.Chart;
import comlrl.report.MetricLayout.Line;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One chart of a report as a {@code <figure>}: a title, the key it plots, an inline SVG (light grid,
 * nice ticks on both axes, env_step across), a legend when it holds several turns or agents, and a
 * note on what it averages or leaves out.
 *
 * <p>Each (run, key) curve is one {@code <polyline class="curve">} carrying {@code data-run},
 * {@code data-metric} and {@code data-points} (its number of points: the distinct env_steps at which
 * the key has a finite value), whatever the number of points, so that a report can be checked by
 * machine. Steps with several events (repeated evaluation) are drawn at their mean, with a band from
 * their minimum to their maximum. The dash pattern tells the turns or agents of a chart apart (so that
 * equal curves stay visible), and so does colour with one run; with several, colour is the run.
 */
final class SvgChart {
    /** Observable's 10-colour categorical palette (colour-blind safe, distinct in print). */
    static final List<String> PALETTE = List.of("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7",
            "#a463f2", "#97bbf5", "#9c6b4e", "#9498a0");
    private static final List<String> DASHES = List.of("", "7 4", "2 3", "10 3 2 3", "4 2", "1 2");
    /** Curves with at most this many points also get a marker (with a tooltip) per point. */
    private static final int MAX_MARKERS = 60;

    private static final double LEFT = 56;
    private static final double RIGHT = 16;
    private static final double TOP = 12;
    private static final double BOTTOM = 40;

    private SvgChart() {
    }

    static String colour(int index) {
        return PALETTE.get(Math.floorMod(index, PALETTE.size()));
    }

    static String dash(int index) {
        return DASHES.get(Math.floorMod(index, DASHES.size()));
    }

    /** The curves of a chart that some run has: one per (run, line). */
    private record Curve(int run, RunReport report, Line line, Series series) {
    }

    /**
     * The chart of {@code chart}'s lines in {@code runs}. With {@code smoothing} in (0, 1), each curve
     * is also drawn smoothed ({@link Series#ema}, a {@code <polyline class="smoothed">} with {@code
     * data-smoothing}), the raw curve kept faintly beneath it.
     */
    static void render(StringBuilder out, Chart chart, List<RunReport> runs, double smoothing) {
        double width = chart.large() ? 620 : 330;
        double height = chart.large() ? 290 : 210;
        List<Curve> curves = new ArrayList<>();
        for (Line line : chart.lines()) {
            for (int r = 0; r < runs.size(); r++) {
                Series s = runs.get(r).metrics().get(line.key());
                if (s != null) {
                    curves.add(new Curve(r, runs.get(r), line, s));
                }
            }
        }
        double minX = Double.POSITIVE_INFINITY;
        double maxX = Double.NEGATIVE_INFINITY;
        double minY = Double.POSITIVE_INFINITY;
        double maxY = Double.NEGATIVE_INFINITY;
        boolean band = false;
        int maxCount = 0;
        int nonFinite = 0;
        for (Curve c : curves) {
            for (Series.Point p : c.series().points()) {
                minX = Math.min(minX, p.step());
                maxX = Math.max(maxX, p.step());
                minY = Math.min(minY, p.min());
                maxY = Math.max(maxY, p.max());
            }
            band |= c.series().hasRange();
            maxCount = Math.max(maxCount, c.series().maxCount());
            nonFinite += c.series().nonFinite();
        }
        boolean empty = minX > maxX;
        Ticks xTicks = empty ? Ticks.nice(0, 1, 5, true) : Ticks.within(Math.min(0, minX), maxX, chart.large() ? 8 : 5, true);
        Ticks yTicks = empty ? Ticks.nice(0, 1, 5, false) : Ticks.nice(minY, maxY, chart.large() ? 6 : 5, false);
        Frame f = new Frame(xTicks, yTicks, width, height);

        out.append("<figure class=\"chart").append(chart.large() ? " large" : "").append("\">\n");
        out.append("<figcaption><span class=\"title\">").append(Xml.escape(chart.title())).append("</span> <code>")
                .append(Xml.escape(chart.subtitle())).append("</code></figcaption>\n");
        out.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">%n",
                width, height));
        out.append("<title>").append(Xml.escape(chart.title() + " (" + chart.subtitle() + ")")).append("</title>\n");
        axes(out, f, chart);
        if (empty) {
            out.append(String.format(Locale.ROOT, "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">no finite values</text>%n",
                    (f.x0 + f.x1) / 2, (f.y0 + f.y1) / 2));
        }
        boolean several = runs.size() > 1;
        if (!empty) {
            iterationMarkers(out, f, runs, curves);
        }
        for (Curve c : curves) {
            if (c.series().hasRange()) {
                StringBuilder upper = new StringBuilder();
                StringBuilder lower = new StringBuilder();
                List<Series.Point> pts = c.series().points();
                for (Series.Point p : pts) {
                    upper.append(f.point(p.step(), p.max())).append(' ');
                }
                for (int i = pts.size() - 1; i >= 0; i--) {
                    lower.append(f.point(pts.get(i).step(), pts.get(i).min())).append(' ');
                }
                out.append("<polygon class=\"band\" fill=\"").append(style(c, several).colour).append("\" points=\"")
                        .append(upper).append(lower.toString().trim()).append("\"/>\n");
            }
        }
        for (Curve c : curves) {
            Style style = style(c, several);
            List<Series.Point> pts = c.series().points();
            StringBuilder points = new StringBuilder();
            for (Series.Point p : pts) {
                points.append(points.length() == 0 ? "" : " ").append(f.point(p.step(), p.mean()));
            }
            String name = c.report().name() + " \u00b7 " + c.line().key();
            out.append("<polyline class=\"curve\" data-run=\"").append(Xml.escape(c.report().name()))
                    .append("\" data-metric=\"").append(Xml.escape(c.line().key()))
                    .append("\" data-points=\"").append(pts.size())
                    .append("\" stroke=\"").append(style.colour).append('"');
            if (!style.dash.isEmpty()) {
                out.append(" stroke-dasharray=\"").append(style.dash).append('"');
            }
            boolean smooth = smoothing > 0 && pts.size() > 2;
            if (smooth) {
                out.append(" stroke-opacity=\"0.3\" stroke-width=\"1.2\"");
            }
            out.append(" points=\"").append(points).append("\">");
            if (!pts.isEmpty()) {
                Series.Point last = pts.get(pts.size() - 1);
                out.append("<title>").append(Xml.escape(name + ": " + pts.size() + " points, last "
                        + Ticks.format(last.mean()) + " at step " + last.step())).append("</title>");
            }
            out.append("</polyline>\n");
            if (smooth) {
                double[] ema = c.series().ema(smoothing);
                StringBuilder smoothed = new StringBuilder();
                for (int i = 0; i < pts.size(); i++) {
                    smoothed.append(i == 0 ? "" : " ").append(f.point(pts.get(i).step(), ema[i]));
                }
                out.append("<polyline class=\"smoothed\" data-run=\"").append(Xml.escape(c.report().name()))
                        .append("\" data-metric=\"").append(Xml.escape(c.line().key()))
                        .append("\" data-smoothing=\"").append(Ticks.format(smoothing))
                        .append("\" stroke=\"").append(style.colour).append('"');
                if (!style.dash.isEmpty()) {
                    out.append(" stroke-dasharray=\"").append(style.dash).append('"');
                }
                out.append(" points=\"").append(smoothed).append("\"><title>")
                        .append(Xml.escape(name + ", smoothed (EMA weight " + Ticks.format(smoothing) + "): last "
                                + Ticks.format(ema[ema.length - 1]))).append("</title></polyline>\n");
            }
            if (pts.size() <= MAX_MARKERS) {
                for (Series.Point p : pts) {
                    out.append(String.format(Locale.ROOT, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"%s>",
                            f.x(p.step()), f.y(p.mean()), pts.size() <= 20 ? "2.6" : "1.8", style.colour,
                            smooth ? " fill-opacity=\"0.35\"" : ""));
                    String tip = name + "\nstep " + p.step() + ": " + Ticks.format(p.mean());
                    if (p.count() > 1) {
                        tip += " (mean of " + p.count() + ", " + Ticks.format(p.min()) + " to " + Ticks.format(p.max()) + ")";
                    }
                    out.append("<title>").append(Xml.escape(tip)).append("</title></circle>\n");
                }
            }
        }
        out.append("</svg>\n");
        legend(out, chart, several);
        List<String> notes = new ArrayList<>();
        if (band) {
            notes.add("points: mean of up to " + maxCount + " events per step; band: their range");
        }
        if (smoothing > 0 && curves.stream().anyMatch(c -> c.series().points().size() > 2)) {
            notes.add("smoothed: EMA weight " + Ticks.format(smoothing) + " (faint: raw)");
        }
        if (nonFinite > 0) {
            notes.add(nonFinite + " non-finite value" + (nonFinite == 1 ? "" : "s") + " not drawn");
        }
        if (!notes.isEmpty()) {
            out.append("<p class=\"note\">").append(Xml.escape(String.join("; ", notes))).append("</p>\n");
        }
        out.append("</figure>\n");
    }

    /**
     * A vertical line where each iteration of an iterative run after the first starts ({@link
     * RunReport#iterationStarts}), for the runs with a curve on the chart: {@code <line class="iteration"
     * data-run data-iteration>}, labelled "iter i" at the top; in the run's colour when there are several.
     */
    private static void iterationMarkers(StringBuilder out, Frame f, List<RunReport> runs, List<Curve> curves) {
        for (int r = 0; r < runs.size(); r++) {
            int run = r;
            if (curves.stream().noneMatch(c -> c.run() == run)) {
                continue;
            }
            for (RunReport.IterationStart start : runs.get(r).iterationStarts()) {
                if (start.step() < f.xTicks.lo() || start.step() > f.xTicks.hi()) {
                    continue;
                }
                double x = f.x(start.step());
                out.append(String.format(Locale.ROOT, "<line class=\"iteration\" data-run=\"%s\" data-iteration=\"%d\" "
                        + "x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"><title>%s</title></line>%n",
                        Xml.escape(runs.get(r).name()), start.iteration(), x, x, f.y0, f.y1,
                        runs.size() > 1 ? colour(r) : "#98a2b3",
                        Xml.escape(runs.get(r).name() + ": iteration " + start.iteration() + " starts at step " + start.step())));
                out.append(String.format(Locale.ROOT, "<text class=\"iteration-label\" x=\"%.1f\" y=\"%.1f\">iter %d</text>%n",
                        x + 3, f.y1 + 9, start.iteration()));
            }
        }
    }

    private record Style(String colour, String dash) {
    }

    private static Style style(Curve c, boolean severalRuns) {
        return new Style(colour(severalRuns ? c.run() : c.line().variant()), dash(c.line().variant()));
    }

    /** A legend of the chart's turns or agents (runs are in the report's legend). */
    private static void legend(StringBuilder out, Chart chart, boolean severalRuns) {
        if (chart.variants() < 2) {
            return;
        }
        Map<Integer, String> variants = new LinkedHashMap<>();
        chart.lines().forEach(l -> variants.putIfAbsent(l.variant(), l.label()));
        out.append("<div class=\"legend\">");
        variants.forEach((variant, label) -> out.append("<span class=\"key\">")
                .append(swatch(severalRuns ? "#4b5563" : colour(variant), dash(variant))).append(Xml.escape(label)).append("</span>"));
        out.append("</div>\n");
    }

    /** A short line in a colour and dash pattern, for legends. */
    static String swatch(String colour, String dash) {
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"swatch\" viewBox=\"0 0 24 10\" width=\"24\" height=\"10\">"
                + "<line x1=\"1\" y1=\"5\" x2=\"23\" y2=\"5\" stroke=\"" + colour + "\" stroke-width=\"2.5\" stroke-linecap=\"round\""
                + (dash.isEmpty() ? "" : " stroke-dasharray=\"" + dash + "\"") + "/></svg>";
    }

    private static void axes(StringBuilder out, Frame f, Chart chart) {
        out.append("<g class=\"axes\">\n");
        for (double v : f.yTicks.values()) {
            double y = f.y(v);
            out.append(String.format(Locale.ROOT, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                    v == 0 && f.yTicks.lo() < 0 ? "zero" : "grid", f.x0, f.x1, y, y));
            out.append(String.format(Locale.ROOT, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>%n",
                    f.x0 - 6, y, Xml.escape(f.yTicks.label(v))));
        }
        for (double v : f.xTicks.values()) {
            if (v < 0) {
                continue; // around a single step 0: env steps are never negative
            }
            double x = f.x(v);
            out.append(String.format(Locale.ROOT, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                    x, x, f.y0, f.y1));
            out.append(String.format(Locale.ROOT, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>%n",
                    x, f.y0 + 16, Xml.escape(f.xTicks.label(v))));
        }
        out.append(String.format(Locale.ROOT, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>%n",
                f.x0, f.x1, f.y0, f.y0));
        out.append(String.format(Locale.ROOT, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">env step</text>%n",
                (f.x0 + f.x1) / 2, f.height - 6));
        String yLabel = chart.large() ? "reward" : chart.title().replaceFirst(", turn \\d+$", "");
        out.append(String.format(Locale.ROOT, "<text class=\"label\" transform=\"translate(13 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>%n",
                (f.y0 + f.y1) / 2, Xml.escape(yLabel)));
        out.append("</g>\n");
    }

    /** Data to SVG coordinates: x0..x1 left to right, y0 (bottom) .. y1 (top). */
    private static final class Frame {
        final Ticks xTicks;
        final Ticks yTicks;
        final double height;
        final double x0;
        final double x1;
        final double y0;
        final double y1;

        Frame(Ticks xTicks, Ticks yTicks, double width, double height) {
            this.xTicks = xTicks;
            this.yTicks = yTicks;
            this.height = height;
            this.x0 = LEFT;
            this.x1 = width - RIGHT;
            this.y0 = height - BOTTOM;
            this.y1 = TOP;
        }

        double x(double step) {
            return x0 + (step - xTicks.lo()) / (xTicks.hi() - xTicks.lo()) * (x1 - x0);
        }

        double y(double value) {
            return y0 - (value - yTicks.lo()) / (yTicks.hi() - yTicks.lo()) * (y0 - y1);
        }

        String point(double step, double value) {
            return String.format(Locale.ROOT, "%.1f,%.1f", x(step), y(value));
        }
    }
}
