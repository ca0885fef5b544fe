package comlrl.trainers.actorcritic;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an evaluation logs, gathered item by item: per turn t the rollout means of every item's
 * samples of that turn ({@link TurnMetrics#ofRollouts}, under {@code eval/turn_t/}), then per
 * {@code metrics_callback} key the mean over the items that returned it ({@code eval/<key>}).
 */
final class EvaluationMetrics {
    private final Map<Integer, List<RolloutSample>> byTurn = new TreeMap<>();
    private final Map<String, List<Double>> custom = new LinkedHashMap<>();

    /** One item's rollouts. */
    void addRollouts(List<RolloutSample> rollouts) {
        for (RolloutSample s : rollouts) {
            byTurn.computeIfAbsent(s.turnIdx(), t -> new ArrayList<>()).add(s);
        }
    }

    /** One item's {@code metrics_callback} values. */
    void addCallback(Map<String, Double> values) {
        values.forEach((k, v) -> custom.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
    }

    /** The turn keys in turn order, then the callback keys in the order first seen. */
    Map<String, Double> metrics() {
        Map<String, Double> metrics = new LinkedHashMap<>();
        byTurn.forEach((t, samples) -> TurnMetrics.ofRollouts(samples).putInto(metrics, "eval/", t));
        custom.forEach((k, values) -> {
            double sum = 0;
            for (double v : values) {
                sum += v;
            }
            metrics.put("eval/" + k, sum / values.size());
        });
        return metrics;
    }
}
