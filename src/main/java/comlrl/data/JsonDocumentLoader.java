package comlrl.data;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@link Dataset#fromJson}: the three accepted document shapes. */
final class JsonDocumentLoader {
    private JsonDocumentLoader() {}

    static Dataset load(Path file) {
        Dataset.requireReadableFile(file);
        JsonNode root;
        try (InputStream in = Files.newInputStream(file)) {
            root = JsonValues.MAPPER.readTree(in);
        } catch (JsonProcessingException e) {
            JsonLocation where = e.getLocation();
            String hint = e.getOriginalMessage() != null && e.getOriginalMessage().contains("Trailing token")
                    ? "; the file holds more than one JSON value — if it is JSON Lines (one object per line), "
                            + "name it .jsonl or use Dataset.fromJsonl"
                    : "; fix the JSON syntax";
            String prefix = where == null ? file.toString() : file + " line " + where.getLineNr();
            throw new DatasetException(prefix + ": invalid JSON (" + e.getOriginalMessage() + ")" + hint, e);
        } catch (IOException e) {
            throw DatasetException.inFile(file, "read failed: " + e, e);
        }
        if (root == null || root.isMissingNode()) {
            throw DatasetException.inFile(file, "empty file; expected a JSON array of row objects, "
                    + "{\"data\": [...]}, or an object of columns");
        }
        if (root.isArray()) {
            return rows(file, root, "element");
        }
        if (!root.isObject()) {
            throw DatasetException.inFile(file, "top-level value is " + JsonValues.kind(root)
                    + "; expected a JSON array of row objects, {\"data\": [...]}, or an object of columns");
        }
        JsonNode data = root.get("data");
        if (data != null && data.isArray() && allObjects(data)) {
            return rows(file, data, "\"data\" element");
        }
        Map<String, List<?>> columns = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            if (!field.getValue().isArray()) {
                throw DatasetException.inFile(file, "field \"" + field.getKey() + "\" is "
                        + JsonValues.kind(field.getValue()) + ", but an object of columns needs an array per "
                        + "column; expected a JSON array of row objects, {\"data\": [...]}, or "
                        + "{\"column\": [values...], ...}");
            }
            List<Object> values = new ArrayList<>(field.getValue().size());
            for (JsonNode v : field.getValue()) {
                values.add(JsonValues.toJava(v));
            }
            columns.put(field.getKey(), values);
        }
        try {
            return Dataset.fromColumns(columns);
        } catch (DatasetException e) {
            throw DatasetException.inFile(file, e.getMessage(), e);
        }
    }

    private static boolean allObjects(JsonNode array) {
        for (JsonNode element : array) {
            if (!element.isObject()) {
                return false;
            }
        }
        return true;
    }

    private static Dataset rows(Path file, JsonNode array, String what) {
        List<Map<String, ?>> maps = new ArrayList<>(array.size());
        int index = 0;
        for (JsonNode element : array) {
            if (!element.isObject()) {
                throw DatasetException.inFile(file, what + " " + index + " (0-based) is "
                        + JsonValues.kind(element) + "; every row must be a JSON object of fields, such as "
                        + "{\"prompt\": \"...\"}");
            }
            maps.add(JsonValues.fields(element));
            index++;
        }
        return Dataset.fromRows(maps);
    }
}
