package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * {@link Dataset#shuffle} and {@link Dataset#trainTestSplit} select exactly the rows, in exactly
 * the order, that Python's {@code datasets} selects for the same seed and test size (recorded by
 * {@code scripts/record-datasets-splits.py} on {@code Dataset.from_dict({"i": range(n)})}).
 */
class DatasetSplitGoldenTest {
    private static Dataset ids(int n) {
        List<Integer> ids = IntStream.range(0, n).boxed().collect(Collectors.toList());
        return Dataset.fromColumns(Map.of("i", ids));
    }

    private static int[] column(Dataset d) {
        return d.column("i").stream().mapToInt(v -> ((Number) v).intValue()).toArray();
    }

    @Test
    void shuffleMatchesDatasets() {
        List<JsonNode> records = Goldens.records("shuffle.json");
        SoftAssertions soft = new SoftAssertions();
        for (JsonNode record : records) {
            int n = record.get("n").intValue();
            long seed = Goldens.seed(record);
            soft.assertThat(column(ids(n).shuffle(seed)))
                    .as("from_dict({'i': range(%s)}).shuffle(seed=%s)", n, seed)
                    .containsExactly(Goldens.ints(record.get("order")));
        }
        soft.assertAll();
        assertThat(records).hasSize(60);
    }

    @Test
    void trainTestSplitMatchesDatasets() {
        List<JsonNode> records = Goldens.records("split.json");
        SoftAssertions soft = new SoftAssertions();
        int splits = 0;
        int refusals = 0;
        for (JsonNode record : records) {
            int n = record.get("n").intValue();
            long seed = Goldens.seed(record);
            boolean isInt = record.get("test_size_is_int").booleanValue();
            JsonNode size = record.get("test_size");
            String what = "from_dict({'i': range(" + n + ")}).train_test_split(test_size=" + size + ", seed=" + seed + ")";
            Dataset rows = ids(n);
            if (record.has("error")) {
                soft.assertThatThrownBy(() -> split(rows, size, isInt, seed))
                        .as(what + " is refused by datasets: " + record.get("error").textValue())
                        .isInstanceOf(DatasetException.class)
                        .hasMessageContaining("test_size=");
                refusals++;
                continue;
            }
            Dataset.Split split;
            try {
                split = split(rows, size, isInt, seed);
            } catch (DatasetException e) {
                soft.fail(what + " is accepted by datasets but refused here: " + e.getMessage());
                continue;
            }
            soft.assertThat(column(split.test())).as(what + " test").containsExactly(Goldens.ints(record.get("test")));
            soft.assertThat(column(split.train())).as(what + " train").containsExactly(Goldens.ints(record.get("train")));
            splits++;
        }
        soft.assertAll();
        assertThat(splits).isEqualTo(324);
        assertThat(refusals).isEqualTo(96);
    }

    private static Dataset.Split split(Dataset rows, JsonNode size, boolean isInt, long seed) {
        return isInt ? rows.trainTestSplit(size.intValue(), seed) : rows.trainTestSplit(size.doubleValue(), seed);
    }
}
