package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What Python's {@code datasets.load_from_disk} reads, as {@code src/test/python/disk_dataset_values.py}
 * writes it (recorded in {@code disk-datasets/expected.json} by {@code scripts/record-disk-datasets.py}),
 * and the check that a {@link Dataset} holds exactly those values.
 */
final class DiskValues {
    private DiskValues() {}

    /** {@code src/test/resources/disk-datasets/<name>} (as copied to the test class path). */
    static Path fixture(String name) {
        try {
            return Path.of(DiskValues.class.getResource("/disk-datasets").toURI()).resolve(name);
        } catch (URISyntaxException | NullPointerException e) {
            throw new IllegalStateException("disk-datasets fixtures are missing; re-record them with "
                    + "/tmp/dsvenv/bin/python scripts/record-disk-datasets.py", e);
        }
    }

    /** The recorded {@code {"features", "columns", "rows"}} of fixture {@code name} (and {@code split}). */
    static JsonNode expected(String name, String split) {
        try {
            JsonNode entry = JsonValues.MAPPER.readTree(fixture("expected.json").toFile()).get("expected").get(name);
            return split == null ? entry.get("dataset") : entry.get("splits").get(split);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Asserts that {@code dataset} has the columns and rows of {@code python} (one split's
     * {@code {"features", "columns", "rows"}}): every value equal, float32 values compared as
     * float32, binary by content.
     */
    static void assertSameValues(Dataset dataset, JsonNode python) {
        List<String> columns = new ArrayList<>();
        python.get("columns").forEach(c -> columns.add(c.textValue()));
        assertThat(dataset.columnNames()).isEqualTo(columns);
        JsonNode rows = python.get("rows");
        assertThat(dataset.size()).as("rows").isEqualTo(rows.size());
        JsonNode features = python.get("features");
        for (int row = 0; row < rows.size(); row++) {
            for (String column : columns) {
                assertValue(features.get(column), rows.get(row).get(column), dataset.get(row).get(column),
                        column + " row " + row);
            }
        }
    }

    /** Compares one value, walking its {@code datasets} feature alongside. */
    private static void assertValue(JsonNode feature, JsonNode expected, Object actual, String path) {
        if (expected.isNull()) {
            assertThat(actual).as(path).isNull();
            return;
        }
        assertThat(actual).as(path).isNotNull();
        JsonNode element = elementFeature(feature);
        if (element != null) {
            assertThat(actual).as(path).isInstanceOf(List.class);
            List<?> list = (List<?>) actual;
            assertThat(list).as(path).hasSize(expected.size());
            for (int i = 0; i < list.size(); i++) {
                assertValue(element, expected.get(i), list.get(i), path + "[" + i + "]");
            }
        } else if (feature.isObject() && !feature.has("_type")) {
            assertThat(actual).as(path).isInstanceOf(Map.class);
            Map<?, ?> map = (Map<?, ?>) actual;
            List<String> names = new ArrayList<>();
            feature.fieldNames().forEachRemaining(names::add);
            assertThat(new ArrayList<>(map.keySet())).as(path + " fields").isEqualTo(names);
            for (String name : names) {
                assertValue(feature.get(name), expected.get(name), map.get(name), path + "." + name);
            }
        } else if ("float32".equals(feature.path("dtype").asText())) {
            assertThat(actual).as(path).isInstanceOf(Double.class);
            assertThat(Float.compare((float) (double) (Double) actual, (float) expected.doubleValue()))
                    .as(path + ": " + actual + " vs " + expected + " as float32").isZero();
        } else if (actual instanceof byte[] bytes) {
            assertThat(bytes).as(path).isEqualTo(toJava(expected));
        } else {
            assertThat(actual).as(path).isEqualTo(toJava(expected));
        }
    }

    /** The element feature of a list feature (List, LargeList, Sequence, or a one-element JSON list); else null. */
    private static JsonNode elementFeature(JsonNode feature) {
        if (feature.isArray()) {
            return feature.get(0);
        }
        String type = feature.path("_type").asText();
        return type.equals("List") || type.equals("LargeList") || type.equals("Sequence") ? feature.get("feature") : null;
    }

    /** The Java value a recorded scalar stands for ({@code $decimal}, {@code $bytes}, or plain JSON). */
    static Object toJava(JsonNode node) {
        if (node.isObject() && node.has("$decimal")) {
            return new BigDecimal(node.get("$decimal").textValue());
        }
        if (node.isObject() && node.has("$bytes")) {
            return Base64.getDecoder().decode(node.get("$bytes").textValue());
        }
        if (node.isArray()) {
            List<Object> list = new ArrayList<>();
            node.forEach(e -> list.add(toJava(e)));
            return list;
        }
        if (node.isObject()) {
            Map<String, Object> map = new LinkedHashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                map.put(e.getKey(), toJava(e.getValue()));
            }
            return map;
        }
        return JsonValues.toJava(node);
    }
}
