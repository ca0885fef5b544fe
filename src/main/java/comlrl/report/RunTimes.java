package comlrl.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A run's wall-clock times, {@code run.json} in its run directory (written when a run ends; a run
 * that failed has none), apart from {@code metrics.jsonl} so that its rows stay the same for the same
 * seed. Times are Unix seconds.
 *
 * @param startedAt  when the run started (before its models loaded)
 * @param finishedAt when it ended (after the last evaluation and the save)
 * @param trainS     seconds spent in training alone (no evaluation before or after, no save), or NaN when
 *                   not measured (the file then has no {@code train_time_s})
 * @param trainItems dataset items trained on (train items × epochs), or -1 when the data set's size is unknown
 */
public record RunTimes(double startedAt, double finishedAt, double trainS, long trainItems) {
    /** The file name in a run directory. */
    public static final String FILE_NAME = "run.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Wall time of the whole run, seconds: {@code finishedAt - startedAt}. */
    public double wallS() {
        return finishedAt - startedAt;
    }

    /** Training seconds per env step: {@code trainS / envSteps} (NaN without steps). */
    public double secondsPerEnvStep(long envSteps) {
        return envSteps > 0 ? trainS / envSteps : Double.NaN;
    }

    /** Items trained per second: {@code trainItems / trainS} (NaN without a known item count or time). */
    public double itemsPerSecond() {
        return trainItems >= 0 && trainS > 0 ? trainItems / trainS : Double.NaN;
    }

    /** Writes {@code dir/run.json}. */
    public void write(Path dir) {
        ObjectNode o = JSON.createObjectNode();
        o.put("started_at", startedAt);
        o.put("finished_at", finishedAt);
        o.put("wall_time_s", wallS());
        if (Double.isFinite(trainS)) {
            o.put("train_time_s", trainS);
        }
        if (trainItems >= 0) {
            o.put("train_items", trainItems);
        }
        try {
            Files.writeString(dir.resolve(FILE_NAME), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(o) + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write " + dir.resolve(FILE_NAME) + ": " + e.getMessage(), e);
        }
    }

    /** {@code dir/run.json}, or empty when the directory has none (or an unreadable one). */
    public static Optional<RunTimes> read(Path dir) {
        Path file = dir.resolve(FILE_NAME);
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        try {
            JsonNode n = JSON.readTree(file.toFile());
            if (!n.path("started_at").isNumber() || !n.path("finished_at").isNumber()) {
                return Optional.empty();
            }
            return Optional.of(new RunTimes(n.get("started_at").asDouble(), n.get("finished_at").asDouble(),
                    n.path("train_time_s").asDouble(Double.NaN), n.path("train_items").asLong(-1)));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Unix seconds now, to the millisecond. */
    public static double now() {
        return System.currentTimeMillis() / 1000.0;
    }
}
