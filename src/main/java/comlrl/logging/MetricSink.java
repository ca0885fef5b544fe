package comlrl.logging;

import java.util.Map;

/** Receives logged metric events: one map of scalar metrics at an {@code env_step}. */
public interface MetricSink extends AutoCloseable {
    void log(long envStep, Map<String, Double> metrics);

    @Override
    default void close() {
    }
}
