package comlrl.data;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Reads a JSON Lines file one row at a time, counting physical lines for error messages. Blank
 * lines are skipped; a UTF-8 byte-order mark is ignored. Shared by {@link Dataset#fromJsonl} and
 * {@link JsonlStream}.
 */
final class JsonlReader implements RowSource {
    private final Path file;
    private final BufferedReader reader;
    private long lineNumber;

    private JsonlReader(Path file, BufferedReader reader) {
        this.file = file;
        this.reader = reader;
    }

    /** Opens {@code file}, failing with a clear message when it is missing. */
    static JsonlReader open(Path file) {
        Dataset.requireReadableFile(file);
        try {
            return new JsonlReader(file, Files.newBufferedReader(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw DatasetException.inFile(file, "cannot open: " + e, e);
        }
    }

    /** The physical line number of the row last returned (1-based), or 0 before the first. */
    long lineNumber() {
        return lineNumber;
    }

    @Override
    public String where() {
        return file + " line " + lineNumber;
    }

    /** The next row, or null at the end of the file. */
    @Override
    public Map<String, Object> next() {
        String line;
        while ((line = readLine()) != null) {
            if (lineNumber == 1 && !line.isEmpty() && line.charAt(0) == '\uFEFF') {
                line = line.substring(1);
            }
            if (!line.isBlank()) {
                return parse(line);
            }
        }
        return null;
    }

    /**
     * Skips the next {@code count} non-blank lines without parsing them.
     *
     * @return how many were skipped (fewer at the end of the file)
     */
    @Override
    public long skip(long count) {
        long skipped = 0;
        String line;
        while (skipped < count && (line = readLine()) != null) {
            if (!line.isBlank() && !(lineNumber == 1 && line.equals("\uFEFF"))) {
                skipped++;
            }
        }
        return skipped;
    }

    private String readLine() {
        try {
            String line = reader.readLine();
            if (line != null) {
                lineNumber++;
            }
            return line;
        } catch (IOException e) {
            throw DatasetException.atLine(file, lineNumber + 1, "read failed: " + e, e);
        }
    }

    private Map<String, Object> parse(String line) {
        JsonNode node;
        try {
            node = JsonValues.MAPPER.readTree(line);
        } catch (JsonProcessingException e) {
            throw DatasetException.atLine(file, lineNumber, "invalid JSON (" + e.getOriginalMessage()
                    + "); each line must hold exactly one JSON object, such as {\"prompt\": \"...\"}", e);
        }
        if (!node.isObject()) {
            throw DatasetException.atLine(file, lineNumber, "not a JSON object (found " + JsonValues.kind(node)
                    + "); each line must hold one JSON object of fields, such as {\"prompt\": \"...\"}");
        }
        return JsonValues.fields(node);
    }

    @Override
    public void close() {
        try {
            reader.close();
        } catch (IOException e) {
            // closing a reader we only read from: nothing to recover
        }
    }
}
