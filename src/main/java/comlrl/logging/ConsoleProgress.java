package comlrl.logging;

import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;

/**
 * A one-line progress bar on a terminal stream: items done of total, the latest training reward,
 * and speed in task items per second. Also a {@link MetricSink} that prints evaluation events.
 */
public final class ConsoleProgress implements MetricSink {
    private final PrintStream out;
    private final long total;
    private final long start = System.nanoTime();
    private long done;
    private Double lastReward;
    private final boolean interactive;

    public ConsoleProgress(PrintStream out, long totalItems) {
        this.out = out;
        this.total = totalItems;
        this.interactive = System.console() != null;
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
            if (interactive) {
                out.print("\r\033[2K");
            }
            out.printf(Locale.ROOT, "eval at env_step %d: reward %.4f%n", envStep, eval);
        }
    }

    private void draw() {
        double secs = (System.nanoTime() - start) / 1e9;
        int width = 24;
        int filled = total <= 0 ? 0 : (int) (width * done / total);
        String bar = "#".repeat(filled) + "-".repeat(width - filled);
        String line = String.format(Locale.ROOT, "[%s] %d/%s items | reward %s | %.2f items/s", bar, done,
                total > 0 ? Long.toString(total) : "?",
                lastReward == null ? "-" : String.format(Locale.ROOT, "%.4f", lastReward), done / Math.max(secs, 1e-9));
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
