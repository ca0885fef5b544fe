package comlrl.logging;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/**
 * Appends one JSON object per event to {@code metrics.jsonl}: {@code {"env_step": n, key: value, ...}}.
 * Each line is flushed, so a crash loses at most the event being written. The sink counts the lines
 * of the file ({@link #lines()}) so that a resumed run can cut the log back to what its checkpoint
 * had seen ({@link #truncateTo(long)}).
 */
public final class JsonlMetricSink implements MetricSink {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Path file;
    private BufferedWriter out;
    private long lines;

    public JsonlMetricSink(Path file) {
        this.file = file;
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            this.lines = Files.isRegularFile(file) ? countLines(file, Long.MAX_VALUE)[0] : 0;
            this.out = open();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot open " + file + " for metrics: " + e.getMessage(), e);
        }
    }

    private BufferedWriter open() throws IOException {
        return Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /** {lines seen, byte offset just after the {@code limit}-th line} of {@code file}. */
    private static long[] countLines(Path file, long limit) throws IOException {
        long count = 0;
        long offset = 0;
        long position = 0;
        byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            int n;
            while ((n = in.read(buf)) > 0) {
                for (int i = 0; i < n; i++) {
                    if (buf[i] == '\n' && count < limit) {
                        count++;
                        offset = position + i + 1;
                    }
                }
                position += n;
            }
        }
        return new long[] {count, offset};
    }

    /** The file the events go to. */
    public Path file() {
        return file;
    }

    /** Lines (events) in the file so far. */
    public synchronized long lines() {
        return lines;
    }

    /**
     * Cuts the file back to its first {@code keep} lines: the events logged after a checkpoint by a
     * run that did not finish, so that a resumed run's steps follow on without repeats. Nothing
     * happens when the file has no more lines than that.
     */
    public synchronized void truncateTo(long keep) {
        try {
            out.flush();
            long[] at = countLines(file, keep);
            if (at[0] < keep || lines <= keep) {
                return;
            }
            out.close();
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(at[1]);
                ch.force(true);
            }
            lines = keep;
            out = open();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot cut " + file + " back to " + keep + " events: " + e.getMessage(), e);
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
            out.write(comlrl.net.Secrets.scrub(JSON.writeValueAsString(o)));
            out.newLine();
            out.flush();
            lines++;
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
