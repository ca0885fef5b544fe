package comlrl.trainers;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reduces the rows of an {@link EvalLogger} to scalar metrics (without the {@code eval/} prefix). */
@FunctionalInterface
public interface EvalAggregator {
    Map<String, Double> aggregate(List<Map<String, Double>> rows, int numTurns);

    /**
     * Each key's mean over the rows that hold it ({@code Σ v / count}), keys in first-seen order; a
     * key no row holds is absent.
     */
    static EvalAggregator mean() {
        return (rows, numTurns) -> {
            Map<String, double[]> sums = new LinkedHashMap<>(); // key -> {sum, count}
            for (Map<String, Double> row : rows) {
                row.forEach((k, v) -> {
                    double[] s = sums.computeIfAbsent(k, x -> new double[2]);
                    s[0] += v;
                    s[1] += 1;
                });
            }
            Map<String, Double> means = new LinkedHashMap<>();
            sums.forEach((k, s) -> means.put(k, s[0] / s[1]));
            return means;
        };
    }
}
