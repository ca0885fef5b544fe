package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.List;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/** {@code np.random.default_rng(seed).permutation(n)}, recorded from NumPy, reproduced exactly. */
class NumpyPermutationGoldenTest {
    @Test
    void smallPermutationsMatchNumpy() {
        List<JsonNode> records = Goldens.records("permutation.json");
        SoftAssertions soft = new SoftAssertions();
        int checked = 0;
        for (JsonNode record : records) {
            if (!record.has("permutation")) {
                continue;
            }
            int n = record.get("n").intValue();
            long seed = Goldens.seed(record);
            soft.assertThat(NumpyPermutation.of(n, seed))
                    .as("default_rng(%s).permutation(%s)", seed, n)
                    .containsExactly(Goldens.ints(record.get("permutation")));
            checked++;
        }
        soft.assertAll();
        assertThat(checked).isEqualTo(60);
    }

    @Test
    void largePermutationsMatchNumpy() {
        int checked = 0;
        for (JsonNode record : Goldens.records("permutation.json")) {
            if (!record.has("weighted_sum")) {
                continue;
            }
            int n = record.get("n").intValue();
            long seed = Goldens.seed(record);
            int[] order = NumpyPermutation.of(n, seed);
            String what = "default_rng(" + seed + ").permutation(" + n + ")";
            assertThat(Arrays.copyOfRange(order, 0, 16)).as(what + " head").containsExactly(Goldens.ints(record.get("head")));
            assertThat(Arrays.copyOfRange(order, n - 16, n)).as(what + " tail").containsExactly(Goldens.ints(record.get("tail")));
            long weightedSum = 0;
            for (int i = 0; i < n; i++) {
                weightedSum += (long) i * order[i];
            }
            assertThat(weightedSum).as(what + " sum(i * perm[i])").isEqualTo(record.get("weighted_sum").longValue());
            checked++;
        }
        assertThat(checked).isEqualTo(3);
    }
}
