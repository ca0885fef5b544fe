package comlrl.report;

import comlrl.checkpoint.Checkpoints;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * {@code log_reward_distribution} (reference §7.4, logs): 16-bin histograms of the raw rewards of
 * one iteration's target (current-policy) and comparator samples over the reward function's
 * {@code reward_range [lo, hi]}.
 * <pre>
 *   width   = (hi − lo) / 16
 *   edges_j = lo + j · width                  j = 0..16 (edges_16 = hi)      [17]
 *   centre_b = (edges_b + edges_{b+1}) / 2     b = 0..15                      [16]
 *   bin(r)  = min(15, floor((clamp(r, lo, hi) − lo) / width))               out-of-range rewards go to the end bins;
 *                                                                           the last bin includes hi
 *   mean    = Σ r / n over a side's raw rewards (0 for a side with no samples)
 * </pre>
 * Immutable; the arrays it returns are copies.
 */
public final class RewardDistribution {
    /** The number of bins. */
    public static final int BINS = 16;
    static final int SVG_WIDTH = 240;
    static final int SVG_HEIGHT = 80;
    static final String TARGET_COLOUR = "#1f77b4";
    static final String COMPARATOR_COLOUR = "#ff7f0e";
    private static final String[] COLOURS = {TARGET_COLOUR, COMPARATOR_COLOUR};

    private final int iteration;
    private final double lo;
    private final double hi;
    private final double[] target; // [n_target] raw rewards
    private final double[] comparator; // [n_comparator] raw rewards
    private final double[] edges; // [17]
    private final int[] targetCounts; // [16]
    private final int[] comparatorCounts; // [16]

    private RewardDistribution(int iteration, double lo, double hi, double[] target, double[] comparator) {
        this.iteration = iteration;
        this.lo = lo;
        this.hi = hi;
        this.target = target.clone();
        this.comparator = comparator.clone();
        this.edges = new double[BINS + 1];
        for (int j = 0; j < BINS; j++) {
            edges[j] = lo + j * (hi - lo) / BINS;
        }
        edges[BINS] = hi;
        this.targetCounts = counts("target", this.target);
        this.comparatorCounts = counts("comparator", this.comparator);
    }

    /**
     * The histograms of iteration {@code iteration}'s raw rewards of the current policy's samples
     * ({@code target}) and the comparator's, over the reward range {@code [lo, hi]}, hi &gt; lo.
     *
     * @throws IllegalArgumentException on a range that is not finite with hi &gt; lo, or a non-finite reward
     */
    public static RewardDistribution of(int iteration, double[] target, double[] comparator, double lo, double hi) {
        if (!Double.isFinite(lo) || !Double.isFinite(hi) || !(hi > lo)) {
            throw new IllegalArgumentException("log_reward_distribution needs a finite reward_range [lo, hi] with hi > lo, "
                    + "got [" + lo + ", " + hi + "]; give the reward function a reward_range or turn "
                    + "log_reward_distribution off");
        }
        return new RewardDistribution(iteration, lo, hi, target, comparator);
    }

    private int[] counts(String side, double[] rewards) {
        int[] counts = new int[BINS];
        for (int i = 0; i < rewards.length; i++) {
            if (!Double.isFinite(rewards[i])) {
                throw new IllegalArgumentException("the raw reward of " + side + " sample " + i + " is " + rewards[i]
                        + ": the reward distribution bins finite rewards only");
            }
            double clamped = Math.min(hi, Math.max(lo, rewards[i]));
            counts[Math.min(BINS - 1, (int) Math.floor((clamped - lo) / (hi - lo) * BINS))]++;
        }
        return counts;
    }

    /** The 17 bin edges, {@code lo} to {@code hi}. */
    public double[] edges() {
        return edges.clone();
    }

    /** The 16 bin centres. */
    public double[] centres() {
        return java.util.stream.IntStream.range(0, BINS).mapToDouble(b -> (edges[b] + edges[b + 1]) / 2).toArray();
    }

    /** Samples per bin. */
    public int[] targetCounts() {
        return targetCounts.clone();
    }

    public int[] comparatorCounts() {
        return comparatorCounts.clone();
    }

    /** A side's mean raw reward (unclamped), 0 with no samples. */
    private static double mean(double[] rewards) {
        return rewards.length == 0 ? 0 : Arrays.stream(rewards).sum() / rewards.length;
    }

    /** The scalar metrics under {@code prefix}: iteration, sample counts and means. */
    public Map<String, Double> metrics(String prefix) {
        Map<String, Double> metrics = new LinkedHashMap<>();
        metrics.put(prefix + "/current_iteration", (double) iteration);
        metrics.put(prefix + "/target_sample_count", (double) target.length);
        metrics.put(prefix + "/comparator_sample_count", (double) comparator.length);
        metrics.put(prefix + "/target_mean", mean(target));
        metrics.put(prefix + "/comparator_mean", mean(comparator));
        return metrics;
    }

    /** {@code dir/reward_distributions/iteration_NNNN} + {@code suffix}. */
    private Path file(Path dir, String suffix) {
        return dir.resolve("reward_distributions").resolve(String.format("iteration_%04d%s", iteration, suffix));
    }

    /** Writes {@code dir/reward_distributions/iteration_NNNN.json} (atomically); returns the file. */
    public Path writeJson(Path dir) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("iteration", iteration);
        doc.put("reward_range", new double[] {lo, hi});
        doc.put("bin_edges", edges());
        doc.put("bin_centres", centres());
        doc.put("target_counts", targetCounts());
        doc.put("comparator_counts", comparatorCounts());
        doc.put("target_rewards", target.clone());
        doc.put("comparator_rewards", comparator.clone());
        doc.put("target_sample_count", target.length);
        doc.put("comparator_sample_count", comparator.length);
        doc.put("target_mean", mean(target));
        doc.put("comparator_mean", mean(comparator));
        Path file = file(dir, ".json");
        Checkpoints.writeAtomically(file, tmp -> Checkpoints.writeJson(tmp, doc));
        return file;
    }

    /** Writes {@link #lineSvg} and {@link #barSvg} as {@code iteration_NNNN_line.svg} and {@code _bar.svg}. */
    public Path[] writeSvgs(Path dir) {
        Path line = file(dir, "_line.svg");
        Path bar = file(dir, "_bar.svg");
        writeText(line, lineSvg());
        writeText(bar, barSvg());
        return new Path[] {line, bar};
    }

    private static void writeText(Path file, String text) {
        Checkpoints.writeAtomically(file, tmp -> {
            try {
                Files.writeString(tmp, comlrl.net.Secrets.scrub(text));
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot write " + tmp + ": " + e.getMessage(), e);
            }
        });
    }

    // Plot area: 240×80 with a 14 px legend strip on top and 4 px margins; bin b spans
    // x ∈ [LEFT + b·BIN_W, LEFT + (b+1)·BIN_W]; a count c is drawn at height c / max(1, max count) · PLOT_H.
    private static final double LEFT = 4;
    private static final double TOP = 14;
    private static final double PLOT_W = SVG_WIDTH - 8;
    private static final double PLOT_H = SVG_HEIGHT - TOP - 4;
    private static final double BIN_W = PLOT_W / BINS;

    private double scale() {
        int max = Math.max(1, Math.max(Arrays.stream(targetCounts).max().orElse(0),
                Arrays.stream(comparatorCounts).max().orElse(0)));
        return PLOT_H / max;
    }

    /** A 240×80 SVG: per side a polyline through (bin centre, count), with a legend. */
    public String lineSvg() {
        StringBuilder svg = header();
        double scale = scale();
        for (int side = 0; side < 2; side++) {
            int[] counts = side == 0 ? targetCounts : comparatorCounts;
            StringBuilder points = new StringBuilder();
            for (int b = 0; b < BINS; b++) {
                points.append(b == 0 ? "" : " ").append(num(LEFT + (b + 0.5) * BIN_W)).append(',')
                        .append(num(TOP + PLOT_H - counts[b] * scale));
            }
            svg.append(format("<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" points=\"%s\"/>\n",
                    COLOURS[side], points));
        }
        return svg.append("</svg>\n").toString();
    }

    /** A 240×80 SVG: per bin a target bar and a comparator bar side by side, with a legend. */
    public String barSvg() {
        StringBuilder svg = header();
        double scale = scale();
        for (int b = 0; b < BINS; b++) {
            for (int side = 0; side < 2; side++) {
                double height = (side == 0 ? targetCounts[b] : comparatorCounts[b]) * scale;
                svg.append(format("<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                        + "fill=\"%s\"/>\n", LEFT + b * BIN_W + side * BIN_W / 2, TOP + PLOT_H - height, BIN_W / 2,
                        height, COLOURS[side]));
            }
        }
        return svg.append("</svg>\n").toString();
    }

    /** The svg element, the axis line and the legend (target, comparator). */
    private StringBuilder header() {
        StringBuilder svg = new StringBuilder(format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                + "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"8\">\n"
                + "<title>iteration %d rewards in [%.2f, %.2f]</title>\n"
                + "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#999\"/>\n",
                SVG_WIDTH, SVG_HEIGHT, SVG_WIDTH, SVG_HEIGHT, iteration, lo, hi, LEFT, TOP + PLOT_H, LEFT + PLOT_W,
                TOP + PLOT_H));
        String[] labels = {"target", "comparator"};
        for (int side = 0; side < 2; side++) {
            double x = LEFT + side * 60;
            svg.append(format("<rect class=\"legend\" x=\"%.2f\" y=\"3\" width=\"8\" height=\"8\" fill=\"%s\"/><text "
                    + "x=\"%.2f\" y=\"10\">%s</text>\n", x, COLOURS[side], x + 11, labels[side]));
        }
        return svg;
    }

    private static String num(double v) {
        return format("%.2f", v);
    }

    private static String format(String template, Object... args) {
        return String.format(Locale.ROOT, template, args);
    }
}
