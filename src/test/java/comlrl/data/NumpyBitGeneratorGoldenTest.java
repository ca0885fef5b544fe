package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link SeedSequence} and {@link Pcg64} on their own against {@code np.random.SeedSequence(seed)}
 * and {@code np.random.PCG64(seed)}, recorded by {@code scripts/record-datasets-splits.py}.
 */
class NumpyBitGeneratorGoldenTest {
    private static final List<JsonNode> RECORDS = Goldens.records("bitgen.json");

    private static BigInteger u128(long high, long low) {
        return new BigInteger(Long.toUnsignedString(high)).shiftLeft(64).or(new BigInteger(Long.toUnsignedString(low)));
    }

    @Test
    void seedSequencePoolAndStateMatchNumpy() {
        for (JsonNode record : RECORDS) {
            SeedSequence sequence = new SeedSequence(Goldens.seed(record));
            long[] pool = Goldens.bits(record.get("pool"));
            int[] expectedPool = new int[pool.length];
            for (int i = 0; i < pool.length; i++) {
                expectedPool[i] = (int) pool[i];
            }
            assertThat(sequence.pool()).as("SeedSequence(%s).pool", record.get("seed")).containsExactly(expectedPool);
            assertThat(sequence.generateState64(4))
                    .as("SeedSequence(%s).generate_state(4, uint64)", record.get("seed"))
                    .containsExactly(Goldens.bits(record.get("generate_state_u64")));
        }
        assertThat(RECORDS).hasSize(6);
    }

    @Test
    void pcg64SeedingMatchesNumpy() {
        for (JsonNode record : RECORDS) {
            Pcg64 bits = new Pcg64(Goldens.seed(record));
            assertThat(u128(bits.stateHigh(), bits.stateLow())).as("PCG64(%s) state", record.get("seed"))
                    .isEqualTo(record.get("pcg_state").bigIntegerValue());
            assertThat(u128(bits.incHigh(), bits.incLow())).as("PCG64(%s) inc", record.get("seed"))
                    .isEqualTo(record.get("pcg_inc").bigIntegerValue());
        }
    }

    @Test
    void pcg64OutputsMatchNumpy() {
        for (JsonNode record : RECORDS) {
            long seed = Goldens.seed(record);
            Pcg64 raw = new Pcg64(seed);
            long[] expectedRaw = Goldens.bits(record.get("random_raw"));
            long[] actualRaw = new long[expectedRaw.length];
            for (int i = 0; i < actualRaw.length; i++) {
                actualRaw[i] = raw.nextUint64();
            }
            assertThat(actualRaw).as("PCG64(%s).random_raw(8)", seed).containsExactly(expectedRaw);

            Pcg64 halves = new Pcg64(seed);
            long[] expected32 = Goldens.bits(record.get("next_uint32"));
            long[] actual32 = new long[expected32.length];
            for (int i = 0; i < actual32.length; i++) {
                actual32[i] = Integer.toUnsignedLong(halves.nextUint32());
            }
            assertThat(actual32).as("PCG64(%s) next_uint32 x8", seed).containsExactly(expected32);
        }
    }

    @Test
    void negativeSeedsAreRejectedAsNumpyDoes() {
        assertThatThrownBy(() -> new SeedSequence(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("seed=-1")
                .hasMessageContaining(">= 0");
        assertThatThrownBy(() -> NumpyPermutation.of(3, Long.MIN_VALUE)).hasMessageContaining("negative");
    }
}
