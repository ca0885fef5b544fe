package comlrl.logging;

import comlrl.logging.JsonlMetricSink;
import comlrl.logging.MetricSink;
import comlrl.rl.TrainLogGate;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a trainer's metric events go: the run's {@code metrics.jsonl} (with an output directory),
 * extra sinks, and a bounded in-memory history. Training events pass the {@code logging_steps} gate
 * ({@link TrainLogGate}); evaluation events and callback metrics are logged as they come.
 *
 * <p>With a {@link RunRecord} ({@link #record(RunRecord)}) the logger also records the run beside
 * {@code metrics.jsonl}: {@code config.json} and {@code splits.json} before the first event written
 * into a directory (again after {@link #relocate}), {@code run.json} (and {@code report.html} when
 * asked) when the last owner closes it, unless the run failed ({@link #markFailed}) or logged nothing.
 */
public final class MetricsLogger implements AutoCloseable {
    private final List<MetricSink> sinks = new ArrayList<>();
    private JsonlMetricSink metricsFile;
    private int users = 1;
    /** Set by {@link #relocate}: the file is new, so a checkpoint's line count does not apply to it. */
    private boolean relocated;
    private final TrainLogGate gate;
    private final ArrayDeque<Map<String, Double>> history = new ArrayDeque<>();
    private final int historyLimit;
    /** What the run records beside its metrics; null: metrics only. */
    private RunRecord record;
    /** The directory {@link #record} was last written into; null before the first event. */
    private Path recordedIn;
    /** When this logger was made (the run's start for {@code run.json}), Unix seconds. */
    private final double startedAt = comlrl.report.RunTimes.now();
    /** Seconds and items of training reported by the epoch loop ({@link #trained}). */
    private double trainS;
    private long trainItems;
    private boolean trainReported;
    /** Seconds of whole training reported by {@link #timeRun}; they replace the epoch loop's when set. */
    private double runS;
    private boolean runTimed;
    /** Set by {@link #retain}: a stage trains into this logger too, so the epoch loop's time is not the run's. */
    private boolean shared;
    private boolean failed;
    private String rewardLabel = "reward";

    /**
     * @param outputDir the run directory ({@code metrics.jsonl} is appended there), or null
     * @param extra further sinks, closed with this logger
     * @param historyLimit events kept by {@link #history()} (0: none)
     */
    public MetricsLogger(Path outputDir, List<MetricSink> extra, int loggingSteps, int historyLimit) {
        if (historyLimit < 0) {
            throw new IllegalArgumentException("log_history_limit must be >= 0, got " + historyLimit);
        }
        this.historyLimit = historyLimit;
        this.gate = new TrainLogGate(loggingSteps);
        this.metricsFile = outputDir == null ? null : new JsonlMetricSink(outputDir.resolve("metrics.jsonl"));
        if (metricsFile != null) {
            sinks.add(metricsFile);
        }
        sinks.addAll(extra);
    }

    /** Logs {@code metrics} at {@code step} if the training-log gate lets it through. */
    public synchronized void logTrain(long step, Map<String, Double> metrics) {
        if (gate.shouldLog(step)) {
            log(step, metrics);
        }
    }

    /** Logs {@code metrics} at {@code step}, ungated. */
    public synchronized void log(long step, Map<String, Double> metrics) {
        recordStart();
        Map<String, Double> event = new LinkedHashMap<>();
        event.put("env_step", (double) step);
        event.putAll(metrics);
        if (historyLimit > 0) {
            if (history.size() == historyLimit) {
                history.removeFirst();
            }
            history.addLast(Collections.unmodifiableMap(event));
        }
        for (MetricSink s : sinks) {
            s.log(step, metrics);
        }
    }

    /** Appends an evaluation's samples to {@code eval_samples.jsonl} ({@link EvalSamples}); nothing without an output directory. */
    public synchronized void samples(long step, List<EvalSamples.Sample> samples) {
        if (metricsFile != null) {
            recordStart();
            EvalSamples.append(metricsFile.file().resolveSibling(EvalSamples.FILE), step, samples);
        }
    }

    /** Records the run in the output directory, if any, as the class comment says. */
    public synchronized MetricsLogger record(RunRecord record) {
        this.record = record;
        return this;
    }

    /** Each agent's generate settings for the recorded {@code config.json} (given before the first event). */
    public synchronized void recordGeneration(List<comlrl.generation.GenerationSettings.Resolved> settings) {
        if (record != null) {
            record = record.withGeneration(settings);
        }
    }

    /** {@code config.json} and {@code splits.json} into the directory of {@code metrics.jsonl}, once per directory. */
    private void recordStart() {
        if (record == null || metricsFile == null) {
            return;
        }
        Path dir = metricsFile.file().getParent();
        if (!dir.equals(recordedIn)) {
            record.writeStart(dir);
            recordedIn = dir;
        }
    }

    /** Training time for {@code run.json}: the epoch loop reports each stretch of training and the items it trained. */
    public synchronized void trained(double seconds, long items) {
        trainS += seconds;
        trainItems += items;
        trainReported = true;
    }

    /**
     * Runs {@code training}, the whole training of a trainer whose stages are not all epoch loops (the
     * preference trainers), and reports its time for {@code run.json} in place of the epoch loops'
     * (items unknown). When it throws, the run is marked failed ({@link #markFailed}).
     */
    public void timeRun(Runnable training) {
        double started = comlrl.report.RunTimes.now();
        try {
            training.run();
        } catch (RuntimeException | Error e) {
            markFailed();
            throw e;
        }
        synchronized (this) {
            runS += comlrl.report.RunTimes.now() - started;
            runTimed = true;
        }
    }

    /** The latest events, oldest first, each with its {@code env_step}. */
    public synchronized List<Map<String, Double>> history() {
        return List.copyOf(history);
    }

    /** A sink for a while (console progress during {@code train}). */
    public synchronized void addSink(MetricSink sink) {
        sinks.add(sink);
    }

    public synchronized void removeSink(MetricSink sink) {
        sinks.remove(sink);
    }

    /** What the console progress calls the training reward: "reward", or e.g. "reward (learned)". */
    public synchronized String rewardLabel() {
        return rewardLabel;
    }

    /** Names the training reward on the console (MARLHF's RL stage trains on a learned reward). */
    public synchronized void labelReward(String label) {
        this.rewardLabel = label;
    }

    /** The identity of the experiment-tracker run logged to (W&amp;B), for checkpoints; null when none. */
    public synchronized Map<String, Object> trackerIdentity() {
        return trackers().map(comlrl.logging.RunTracker::identity).filter(java.util.Objects::nonNull).findFirst()
                .orElse(null);
    }

    private java.util.stream.Stream<comlrl.logging.RunTracker> trackers() {
        return sinks.stream().filter(s -> s instanceof comlrl.logging.RunTracker).map(s -> (comlrl.logging.RunTracker) s);
    }

    /** Sets summary values in the tracker runs (W&amp;B's {@code run.summary}), e.g. {@code final_model_saved}. */
    public synchronized void summary(Map<String, Object> values) {
        trackers().forEach(t -> t.summary(values));
    }

    /** Marks the tracker runs as failed: closing ends them with a non-zero exit code. */
    public synchronized void markFailed() {
        failed = true;
        trackers().forEach(comlrl.logging.RunTracker::markFailed);
    }

    /** Lines in {@code metrics.jsonl} (null without an output directory), for checkpoints. */
    public Long metricsLines() {
        return metricsFile == null ? null : metricsFile.lines();
    }

    /** The gate's last logged step (null before the first), for checkpoints. */
    public synchronized Long lastLoggedStep() {
        return gate.lastLoggedStep().isPresent() ? gate.lastLoggedStep().getAsLong() : null;
    }

    /**
     * Sends the events from now on to {@code dir/metrics.jsonl} (a resumed preference-learning run's
     * {@code resume-*} subdirectory); the old file is left as it was.
     */
    public synchronized void relocate(Path dir) {
        if (metricsFile == null) {
            return;
        }
        int at = sinks.indexOf(metricsFile);
        metricsFile.close();
        metricsFile = new JsonlMetricSink(dir.resolve("metrics.jsonl"));
        sinks.set(at, metricsFile);
        relocated = true;
    }

    /** One more owner (a stage logging into its parent's logger); the sinks close with the last {@link #close()}. */
    public synchronized MetricsLogger retain() {
        if (users == 0) {
            throw new IllegalStateException("this metrics logger is closed");
        }
        users++;
        shared = true;
        return this;
    }

    /**
     * Restores a checkpoint's log position: {@code metrics.jsonl} cut back to {@code lines} (not after
     * {@link #relocate}: that file starts empty), the gate, and a restart marker in TensorBoard event
     * files so that the points an interrupted run logged after the checkpoint's {@code envStep} are
     * dropped from its curves.
     */
    public synchronized void restore(Long lines, Long lastLoggedStep, long envStep) {
        if (metricsFile != null && lines != null && !relocated) {
            metricsFile.truncateTo(lines);
        }
        if (envStep >= 0) {
            for (MetricSink s : sinks) {
                if (s instanceof comlrl.logging.TensorBoardSink tb) {
                    tb.purgeFrom(envStep + 1);
                }
            }
        }
        if (lastLoggedStep != null) {
            gate.restore(lastLoggedStep);
        }
    }

    /**
     * Closes the sinks with the last owner, every one even when one fails, then throws the first failure
     * (a TensorBoard file on a full disk fails the run here, after training and saving). Then a recorded
     * run that did not fail gets its {@code run.json}: the training time of {@link #timeRun}, else the
     * epoch loop's time and items unless a stage shared this logger (then unmeasured).
     */
    @Override
    public synchronized void close() {
        if (users == 0 || --users > 0) {
            return;
        }
        RuntimeException failure = null;
        for (MetricSink sink : sinks) {
            try {
                sink.close();
            } catch (RuntimeException e) { // a failing sink must not keep the others from closing
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        if (recordedIn != null && !failed) {
            boolean measured = trainReported && !shared && !runTimed;
            record.writeEnd(recordedIn, new comlrl.report.RunTimes(startedAt, comlrl.report.RunTimes.now(),
                    runTimed ? runS : measured ? trainS : Double.NaN, measured ? trainItems : -1));
        }
    }
}
