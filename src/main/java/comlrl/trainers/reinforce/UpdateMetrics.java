package comlrl.trainers.reinforce;

import comlrl.logging.MetricsLogger;
import java.io.PrintStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The training metrics of the drains since the last log event ({@link TurnStats} per agent and turn),
 * logged as one event: per agent under {@code agent_i/turn_t/...}, and {@code turn_t/...} as the mean
 * over the agents drained, each weighted equally. Also watches for the completion-length collapse
 * reference-KL shaping can cause. With dynamic sampling on, every event has {@value #DROPPED}: the items
 * dropped since the previous event.
 */
final class UpdateMetrics {
    /** {@link #checkLengthCollapse}: log windows averaged at the start and at each check. */
    static final int LENGTH_WINDOW = 4;

    /** {@link #checkLengthCollapse}: the fraction of the first mean length below which lengths collapsed. */
    static final double LENGTH_COLLAPSE_FRACTION = 0.25;

    /** The key of the items dynamic sampling dropped since the previous event. */
    static final String DROPPED = "dynamic_sampling/dropped";

    private final double klCoef;
    private final boolean withKl;
    private final PrintStream console;
    private final boolean main;

    /** Drained since the last flush: agent -> turn -> stats. */
    private final Map<Integer, Map<Integer, TurnStats>> pending = new TreeMap<>();
    private long pendingStep = -1;
    /** Per agent: mean completion length of its first log windows. */
    private final Map<Integer, Double> initialLength = new TreeMap<>();
    private final Map<Integer, ArrayDeque<Double>> recentLengths = new TreeMap<>();
    private final Set<Integer> collapseWarned = new TreeSet<>();
    private final boolean countsDropped;
    /** Items dropped since the last event. */
    private int dropped;

    /**
     * {@code klCoef}: β; {@code withKl}: reference-KL shaping is on (its keys and the collapse warning);
     * {@code main}: this process prints warnings; {@code countsDropped}: dynamic sampling is on.
     */
    UpdateMetrics(double klCoef, boolean withKl, PrintStream console, boolean main, boolean countsDropped) {
        this.countsDropped = countsDropped;
        this.klCoef = klCoef;
        this.withKl = withKl;
        this.console = console;
        this.main = main;
    }

    /** Adds one drain's per-turn stats (several drains of one agent before a flush add up). */
    void record(int agent, Map<Integer, TurnStats> stats, long maxEnvStep) {
        stats.forEach((turn, st) -> pending.computeIfAbsent(agent, a -> new TreeMap<>())
                .computeIfAbsent(turn, t -> new TurnStats()).merge(st));
        pendingStep = Math.max(pendingStep, maxEnvStep);
    }

    /** Counts one item dropped by dynamic sampling (logged with the next event). */
    void dropped() {
        dropped++;
    }

    /** The end of an epoch, after {@link #flush}: logs the items dropped since, so no count crosses an epoch. */
    void flushDropped(MetricsLogger logger, long envStep) {
        if (dropped > 0) {
            int n = dropped;
            dropped = 0;
            logger.logTrain(envStep, Map.of(DROPPED, (double) n));
        }
    }

    /** Logs the metrics recorded since the last flush as one event. */
    void flush(MetricsLogger logger) {
        if (pending.isEmpty()) {
            return;
        }
        Map<String, Double> perAgent = new LinkedHashMap<>();
        Map<Integer, List<TurnStats>> byTurn = new TreeMap<>();
        for (Map.Entry<Integer, Map<Integer, TurnStats>> a : pending.entrySet()) {
            for (Map.Entry<Integer, TurnStats> t : a.getValue().entrySet()) {
                byTurn.computeIfAbsent(t.getKey(), x -> new ArrayList<>()).add(t.getValue());
                t.getValue().put(perAgent, "agent_" + a.getKey() + "/", t.getKey(), klCoef, withKl);
            }
            checkLengthCollapse(a.getKey(), a.getValue(), perAgent);
        }
        Map<String, Double> metrics = new LinkedHashMap<>();
        byTurn.forEach((turn, stats) -> TurnStats.meanOf(stats).put(metrics, "", turn, klCoef, withKl));
        metrics.putAll(perAgent);
        if (countsDropped) {
            metrics.put(DROPPED, (double) dropped);
            dropped = 0;
        }
        long step = pendingStep;
        pending.clear();
        pendingStep = -1;
        logger.logTrain(step, metrics);
    }

    /**
     * Under reference-KL shaping an empty answer pays no KL, so agents can learn to answer nothing.
     * Warns once per agent (console and {@code agent_i/warnings/completion_length_collapse}) when the
     * mean completion length of its last {@value #LENGTH_WINDOW} log windows falls below
     * {@value #LENGTH_COLLAPSE_FRACTION} of that of its first {@value #LENGTH_WINDOW}.
     */
    private void checkLengthCollapse(int agent, Map<Integer, TurnStats> stats, Map<String, Double> metrics) {
        if (!withKl || collapseWarned.contains(agent)) {
            return;
        }
        TurnStats all = new TurnStats();
        stats.values().forEach(all::merge);
        if (all.count() == 0) {
            return;
        }
        ArrayDeque<Double> recent = recentLengths.computeIfAbsent(agent, a -> new ArrayDeque<>());
        recent.addLast(all.meanCompletionLength());
        if (recent.size() > LENGTH_WINDOW) {
            recent.removeFirst();
        }
        if (recent.size() < LENGTH_WINDOW) {
            return;
        }
        double now = recent.stream().mapToDouble(Double::doubleValue).average().orElse(0);
        Double first = initialLength.putIfAbsent(agent, now);
        if (first != null && first >= 2 && now < LENGTH_COLLAPSE_FRACTION * first) {
            collapseWarned.add(agent);
            metrics.put("agent_" + agent + "/warnings/completion_length_collapse", 1.0);
            if (main) {
                console.printf(Locale.ROOT, "warning: agent %d's mean completion length fell from %.1f to %.1f "
                        + "tokens under reference-KL shaping (reference_kl_coef %s): an empty answer pays no KL penalty; "
                        + "lower reference_kl_coef or reward non-empty answers%n", agent, first, now, klCoef);
            }
        }
    }
}
