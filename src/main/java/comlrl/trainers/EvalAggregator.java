package comlrl.trainers;

import java.util.List;
import java.util.Map;

/** Reduces the rows of an {@link EvalLogger} to scalar metrics (without the {@code eval/} prefix). */
@FunctionalInterface
public interface EvalAggregator {
    Map<String, Double> aggregate(List<Map<String, Double>> rows, int numTurns);
}
