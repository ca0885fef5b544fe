package comlrl.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One metric key of one run, as a curve over {@code env_step}: one {@link Point} per step at which
 * the key has a finite value. Events logged at the same step (evaluation repeated before and after
 * training) are averaged into one point that keeps their range. Values logged as {@code null} (NaN or
 * infinite when logged) make no point and are counted in {@code nonFinite}.
 */
public record Series(String key, List<Point> points, int nonFinite) {

    public Series {
        points = List.copyOf(points);
    }

    /**
     * The events of one step: {@code mean} of their values, {@code min} and {@code max}, and how many
     * there were ({@code count}, at least 1).
     */
    public record Point(long step, double mean, double min, double max, int count) {
    }

    /** Whether some step holds several events with different values (drawn as a band). */
    public boolean hasRange() {
        return points.stream().anyMatch(p -> p.count() > 1 && p.max() > p.min());
    }

    /**
     * The point means smoothed by an exponential moving average of weight {@code w} in [0, 1), debiased
     * as TensorBoard's smoothing is: {@code e_i = w e_(i-1) + (1 - w) v_i} with {@code e_(-1) = 0}, shown
     * as {@code e_i / (1 - w^(i+1))}, so that the first value is {@code v_0} and a constant series
     * stays constant. {@code w = 0} gives the values themselves. Steps are taken as evenly spaced.
     */
    public double[] ema(double w) {
        if (!(w >= 0 && w < 1)) {
            throw new IllegalArgumentException("smoothing weight " + w + " is not in [0, 1)");
        }
        double[] out = new double[points.size()];
        double e = 0;
        double debias = 1;
        for (int i = 0; i < out.length; i++) {
            e = w * e + (1 - w) * points.get(i).mean();
            debias *= w;
            out[i] = e / (1 - debias);
        }
        return out;
    }

    /** The most events any one step holds. */
    public int maxCount() {
        return points.stream().mapToInt(Point::count).max().orElse(0);
    }

    /** Collects the values of one key event by event. */
    static final class Builder {
        private final String key;
        /** step -> {sum, min, max, count} */
        private final Map<Long, double[]> steps = new TreeMap<>();
        private int nonFinite;

        Builder(String key) {
            this.key = key;
        }

        void add(long step, double value) {
            if (!Double.isFinite(value)) {
                nonFinite++;
                return;
            }
            double[] acc = steps.computeIfAbsent(step, s -> new double[] {0, value, value, 0});
            acc[0] += value;
            acc[1] = Math.min(acc[1], value);
            acc[2] = Math.max(acc[2], value);
            acc[3]++;
        }

        void addNonFinite() {
            nonFinite++;
        }

        Series build() {
            List<Point> points = new ArrayList<>(steps.size());
            steps.forEach((step, acc) -> points.add(new Point(step, acc[0] / acc[3], acc[1], acc[2], (int) acc[3])));
            return new Series(key, points, nonFinite);
        }
    }
}
