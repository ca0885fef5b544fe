package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
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
import net.jqwik.api.constraints.LongRange;

class SplitPropertiesTest {
    @Property(tries = 200)
    void permutationHoldsEveryIndexOnce(@ForAll @IntRange(min = 0, max = 300) int n,
            @ForAll @LongRange(min = 0) long seed) {
        int[] order = NumpyPermutation.of(n, seed);
        int[] sorted = order.clone();
        Arrays.sort(sorted);
        assertThat(sorted).isEqualTo(IntStream.range(0, n).toArray());
        assertThat(NumpyPermutation.of(n, seed)).isEqualTo(order);
    }

    @Property(tries = 500)
    void randomIntervalStaysInItsClosedRange(@ForAll @IntRange(min = 0) int max, @ForAll @LongRange(min = 0) long seed) {
        Pcg64 bits = new Pcg64(seed);
        for (int draw = 0; draw < 8; draw++) {
            assertThat(NumpyPermutation.randomInterval(bits, max)).isBetween(0, max);
        }
    }

    @Property(tries = 1000)
    void unsignedMultiplyHighIsTheTop64BitsOfTheUnsignedProduct(@ForAll long a, @ForAll long b) {
        BigInteger product = unsigned(a).multiply(unsigned(b));
        assertThat(Pcg64.unsignedMultiplyHigh(a, b)).isEqualTo(product.shiftRight(64).longValue());
    }

    private static BigInteger unsigned(long x) {
        return new BigInteger(Long.toUnsignedString(x));
    }

    @Property(tries = 50)
    void negativeSeedsAreRejected(@ForAll @LongRange(min = Long.MIN_VALUE, max = -1) long seed) {
        Dataset rows = Dataset.fromColumns(Map.of("id", List.of(1, 2, 3)));
        assertThatThrownBy(() -> rows.shuffle(seed)).isInstanceOf(DatasetException.class).hasMessageContaining(">= 0");
        assertThatThrownBy(() -> rows.trainTestSplit(0.5, seed)).isInstanceOf(DatasetException.class);
        assertThatThrownBy(() -> rows.trainTestSplit(1, seed)).isInstanceOf(DatasetException.class);
    }

    @Property(tries = 200)
    void splitPartitionsTheRowsWithHuggingFaceSizes(
            @ForAll @IntRange(min = 2, max = 200) int n,
            @ForAll @DoubleRange(min = 0.0, minIncluded = false, max = 1.0, maxIncluded = false) double testSize,
            @ForAll @LongRange(min = 0) long seed) {
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
