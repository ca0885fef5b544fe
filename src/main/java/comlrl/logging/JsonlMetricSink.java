package comlrl.logging;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/**
 * Appends one JSON object per event to {@code metrics.jsonl}: {@code {"env_step": n, key: value, ...}}.
 * Each line is flushed, so a crash loses at most the event being written.
 */
public final class JsonlMetricSink implements MetricSink {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final BufferedWriter out;

    public JsonlMetricSink(Path file) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot open " + file + " for metrics: " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void log(long envStep, Map<String, Double> metrics) {
        ObjectNode o = JSON.createObjectNode();
        o.put("env_step", envStep);
        metrics.forEach((k, v) -> {
            if (v == null || v.isNaN() || v.isInfinite()) {
                o.putNull(k);
            } else {
                o.put(k, v);
            }
        });
        try {
            out.write(JSON.writeValueAsString(o));
            out.newLine();
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write metrics: " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
