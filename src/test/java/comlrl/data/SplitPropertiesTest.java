package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;

class SplitPropertiesTest {
    @Property(tries = 200)
    void permutationHoldsEveryIndexOnce(@ForAll @IntRange(min = 0, max = 300) int n, @ForAll long seed) {
        int[] order = SeededPermutation.of(n, seed);
        int[] sorted = order.clone();
        Arrays.sort(sorted);
        assertThat(sorted).isEqualTo(IntStream.range(0, n).toArray());
        assertThat(SeededPermutation.of(n, seed)).isEqualTo(order);
    }

    @Property(tries = 200)
    void splitPartitionsTheRowsWithHuggingFaceSizes(
            @ForAll @IntRange(min = 2, max = 200) int n,
            @ForAll @DoubleRange(min = 0.0, minIncluded = false, max = 1.0, maxIncluded = false) double testSize,
            @ForAll long seed) {
        int expectedTest = (int) Math.ceil(testSize * n);
        if (expectedTest >= n) {
            return; // an empty train set is rejected; covered in DatasetTest
        }
        List<Integer> ids = IntStream.range(0, n).boxed().collect(Collectors.toList());
        Dataset rows = Dataset.fromColumns(Map.of("id", ids));
        Dataset.Split split = rows.trainTestSplit(testSize, seed);
        assertThat(split.test().size()).isEqualTo(expectedTest);
        assertThat(split.train().size()).isEqualTo(n - expectedTest);
        Set<Object> seen = new HashSet<>(split.train().column("id"));
        for (Object id : split.test().column("id")) {
            assertThat(seen.add(id)).as("id %s in both parts", id).isTrue();
        }
        assertThat(seen).hasSize(n);
    }
}
