package comlrl.logging;

import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;

/**
 * A one-line progress bar on a terminal stream: items done of total, the latest training reward,
 * the latest evaluation reward (folded into the bar rather than printed per evaluation), speed in
 * task items per second and the estimated time left. A {@link MetricSink} for the rewards. On a
 * terminal the line is redrawn in place; otherwise it is printed 20 times per run. A stage label
 * ("preferences", "reward model") prefixes the line of a run with several stages; the training
 * reward is shown under its label ("reward (learned)" when it is a learned reward model's), or not
 * at all (a null label) for a stage that logs none.
 */
public final class ConsoleProgress implements MetricSink {
    private final PrintStream out;
    private final long total;
    private final long start = System.nanoTime();
    private long done;
    private Double lastReward;
    private Double lastEval;
    private final boolean interactive;
    private final String stage;
    private final String rewardLabel;

    public ConsoleProgress(PrintStream out, long totalItems) {
        this(out, totalItems, null, "reward");
    }

    /**
     * @param stage the label the line starts with, or null for none
     * @param rewardLabel what the training reward is called ("reward", "reward (learned)"), or null
     *        to show neither it nor the evaluation reward
     */
    public ConsoleProgress(PrintStream out, long totalItems, String stage, String rewardLabel) {
        this.out = out;
        this.total = totalItems;
        this.interactive = System.console() != null;
        this.stage = stage;
        this.rewardLabel = rewardLabel;
    }

    /** Marks {@code n} more task items done and redraws. */
    public synchronized void advance(long n) {
        done += n;
        if (interactive || done == total || done % Math.max(1, total > 0 ? total / 20 : 10) == 0) {
            draw();
        }
    }

    @Override
    public synchronized void log(long envStep, Map<String, Double> metrics) {
        Double r = metrics.get("turn_1/reward_mean");
        if (r != null) {
            lastReward = r;
        }
        Double eval = metrics.get("eval/turn_1/reward_mean");
        if (eval != null) {
            lastEval = eval;
        }
    }

    /** {@code h:mm:ss} (or {@code m:ss}) of {@code seconds}. */
    public static String clock(double seconds) {
        long s = Math.round(seconds);
        return s >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }

    private static String format(Double v) {
        return v == null ? "-" : String.format(Locale.ROOT, "%.4f", v);
    }

    private void draw() {
        double secs = (System.nanoTime() - start) / 1e9;
        int width = 24;
        int filled = total <= 0 ? 0 : (int) (width * done / total);
        String bar = "#".repeat(filled) + "-".repeat(width - filled);
        double rate = done / Math.max(secs, 1e-9);
        String rewards = rewardLabel == null ? "" : String.format(Locale.ROOT, " | %s %s | eval %s", rewardLabel,
                format(lastReward), format(lastEval));
        String line = String.format(Locale.ROOT, "%s[%s] %d/%s items%s | %.2f items/s | %s", stage == null ? ""
                : stage + " ", bar, done, total > 0 ? Long.toString(total) : "?", rewards, rate,
                total <= 0 ? clock(secs) : done >= total ? "done in " + clock(secs)
                        : "ETA " + clock((total - done) / Math.max(rate, 1e-9)));
        if (interactive) {
            out.print("\r\033[2K" + line);
            if (done == total) {
                out.println();
            }
        } else {
            out.println(line);
        }
        out.flush();
    }
}
