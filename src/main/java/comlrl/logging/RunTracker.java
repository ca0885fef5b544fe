package comlrl.logging;

import java.util.Map;

/**
 * A metric sink that is a run in an experiment tracker (Weights &amp; Biases): it has an identity a
 * checkpoint keeps (so a resumed run continues it), a summary, and an outcome.
 */
public interface RunTracker extends MetricSink {
    /** The run's identity for checkpoint metadata ({@code id}, {@code project}, {@code entity}, {@code name}), or null. */
    Map<String, Object> identity();

    /** Sets summary values of the run (e.g. {@code final_model_saved}). */
    void summary(Map<String, Object> values);

    /** Marks the run as failed: {@link #close()} then ends it with a non-zero exit code. */
    void markFailed();
}
