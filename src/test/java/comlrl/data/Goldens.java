package comlrl.data;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The values recorded from Python's {@code datasets} and NumPy by
 * {@code scripts/record-datasets-splits.py}, under {@code src/test/resources/datasets-splits/}.
 */
final class Goldens {
    private Goldens() {}

    /** The {@code records} array of {@code datasets-splits/<name>}. */
    static List<JsonNode> records(String name) {
        String resource = "/datasets-splits/" + name;
        try (InputStream in = Goldens.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing; re-record it with "
                        + "/tmp/pyref/bin/python scripts/record-datasets-splits.py");
            }
            List<JsonNode> out = new ArrayList<>();
            new ObjectMapper().readTree(in).get("records").forEach(out::add);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(resource, e);
        }
    }

    /** A JSON array of integers as an {@code int[]}. */
    static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).intValue();
        }
        return out;
    }

    /** A JSON array of unsigned 32- or 64-bit integers, each as the {@code long} with its bits. */
    static long[] bits(JsonNode array) {
        long[] out = new long[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).bigIntegerValue().longValue();
        }
        return out;
    }

    /** The seed of a record (every recorded seed fits a {@code long}). */
    static long seed(JsonNode record) {
        return record.get("seed").longValue();
    }
}
