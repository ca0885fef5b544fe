package comlrl.logging;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Combines the rows logged at one {@code env_step} into the single row W&amp;B keeps per step (a later
 * {@code run.log} at the same step overwrites a key, so of {@code eval_repeats: 8} passes only the last
 * would survive). Keys logged once pass through unchanged; a key logged n &gt; 1 times at the step gets
 * the mean of its values, and {@code <key>_std} their sample standard deviation,
 * <pre>
 *   mean = (1/n) Σ v_i          std = sqrt( Σ (v_i − mean)² / (n − 1) )
 * </pre>
 * so W&amp;B shows what the console and TensorBoard show, with the spread beside it. A NaN value makes
 * the mean NaN (never silently dropped). Rows arrive in step order; a row at a new step releases the
 * previous step's combined row, {@link #flush()} the last one.
 */
final class SameStepRows {
    private long step;
    private final Map<String, List<Double>> values = new LinkedHashMap<>();

    /** A step's combined row. */
    record Row(long step, Map<String, Double> metrics) {
    }

    /** Adds a row; returns the previous step's combined row when this row starts a new step, else null. */
    synchronized Row add(long envStep, Map<String, Double> metrics) {
        Row released = values.isEmpty() || envStep == step ? null : flush();
        step = envStep;
        metrics.forEach((k, v) -> values.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
        return released;
    }

    /** The pending step's combined row (null when none is pending); nothing is pending afterwards. */
    synchronized Row flush() {
        if (values.isEmpty()) {
            return null;
        }
        Map<String, Double> row = new LinkedHashMap<>();
        values.forEach((key, vs) -> {
            if (vs.size() == 1) {
                row.put(key, vs.get(0));
                return;
            }
            double mean = 0;
            for (double v : vs) {
                mean += v;
            }
            mean /= vs.size();
            double squares = 0;
            for (double v : vs) {
                squares += (v - mean) * (v - mean);
            }
            row.put(key, mean);
            row.put(key + "_std", Math.sqrt(squares / (vs.size() - 1)));
        });
        values.clear();
        return new Row(step, row);
    }
}
