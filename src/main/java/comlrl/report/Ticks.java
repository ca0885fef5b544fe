package comlrl.report;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A "nice" axis (Heckbert, Graphics Gems, 1990): a step of 1, 2 or 5 times a power of ten giving
 * about {@code target} ticks, and the data range widened to whole steps.
 *
 * @param lo   the axis start, a multiple of {@code step}, at or below the data's minimum
 * @param hi   the axis end, a multiple of {@code step}, at or above the data's maximum
 * @param step the distance between ticks
 */
record Ticks(double lo, double hi, double step) {

    /** An axis over [min, max]; {@code integers} keeps the step at 1 or more (env steps). */
    static Ticks nice(double min, double max, int target, boolean integers) {
        if (!(max > min)) { // one value: a range around it
            double pad = min == 0 ? 1 : Math.abs(min) * 0.1;
            min -= pad;
            max += pad;
            if (integers) {
                min = Math.floor(min);
                max = Math.ceil(max);
            }
        }
        double step = niceNumber(niceNumber(max - min, false) / Math.max(1, target - 1), true);
        if (integers) {
            step = Math.max(1, step);
        }
        return new Ticks(Math.floor(min / step + 1e-9) * step, Math.ceil(max / step - 1e-9) * step, step);
    }

    /**
     * An axis over exactly [min, max] (the env steps a run covers) with nice ticks inside it; the
     * first and last tick need not be at the ends.
     */
    static Ticks within(double min, double max, int target, boolean integers) {
        Ticks nice = nice(min, max, target, integers);
        return max > min ? new Ticks(min, max, nice.step) : nice;
    }

    /** The nice number near {@code x}: 1, 2, 5 or 10 times a power of ten, rounded or the next above. */
    private static double niceNumber(double x, boolean round) {
        double exp = Math.floor(Math.log10(x));
        double fraction = x / Math.pow(10, exp);
        double nice;
        if (round) {
            nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10;
        } else {
            nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
        }
        return nice * Math.pow(10, exp);
    }

    /** The tick values from lo to hi. */
    List<Double> values() {
        List<Double> out = new ArrayList<>();
        double first = Math.ceil(lo / step - 1e-9);
        long n = Math.round(Math.floor(hi / step + 1e-9) - first);
        for (long i = 0; i <= n; i++) {
            double v = (first + i) * step;
            out.add(Math.abs(v) < step * 1e-9 ? 0.0 : v);
        }
        return out;
    }

    /** A tick label with as many decimals as the step needs; thousands as "k", millions as "M". */
    String label(double value) {
        double scale = 1;
        String suffix = "";
        double extent = Math.max(Math.abs(lo), Math.abs(hi));
        if (extent >= 1e7 && step >= 1e6) {
            scale = 1e6;
            suffix = "M";
        } else if (extent >= 1e4 && step >= 1e3) {
            scale = 1e3;
            suffix = "k";
        }
        if (value == 0 && !suffix.isEmpty()) {
            return "0";
        }
        double s = step / scale;
        if (s < 1e-4) {
            return String.format(Locale.ROOT, "%.1e", value);
        }
        int decimals = (int) Math.max(0, -Math.floor(Math.log10(s) + 1e-9));
        return String.format(Locale.ROOT, "%." + decimals + "f", value / scale) + suffix;
    }

    /** A value for tables and tooltips: 4 significant digits, plain notation unless very large or small. */
    static String format(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return Long.toString((long) value);
        }
        double abs = Math.abs(value);
        if (abs >= 1e-4 && abs < 1e7) {
            return new BigDecimal(value).round(new MathContext(4)).stripTrailingZeros().toPlainString();
        }
        return String.format(Locale.ROOT, "%.3e", value);
    }
}
