package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.generation.Completion;
import comlrl.generation.FinishReason;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CodecsTest {
    private record Pair(int count, String name) {
    }

    private record Triple(int agent, long step, String text) {
    }

    private static <T> T roundTrip(T value, Codec<T> codec) {
        return Codecs.decode(Codecs.encode(value, codec), "the test's bytes", codec);
    }

    /**
     * Three fields in declaration order, big-endian, by hand: int 1 (00 00 00 01), long 2 (seven
     * zeros, 02), the string "é" as its UTF-8 byte count 2 and C3 A9.
     */
    @Test
    void threeFieldsAreSentInOrderAndBuiltBack() {
        Codec<Triple> codec = Codecs.fields(Codecs.INT, Triple::agent, Codecs.LONG, Triple::step, Codecs.STRING,
                Triple::text, Triple::new);
        byte[] bytes = Codecs.encode(new Triple(1, 2, "é"), codec);
        assertThat(bytes).containsExactly(0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0xC3 - 256, 0xA9 - 256);
        assertThat(roundTrip(new Triple(-7, 1L << 40, "row"), codec)).isEqualTo(new Triple(-7, 1L << 40, "row"));
    }

    /** Two fields: int 7 (00 00 00 07), then "x" (00 00 00 01 78). */
    @Test
    void twoFieldsAreSentInOrderAndBuiltBack() {
        Codec<Pair> codec = Codecs.fields(Codecs.INT, Pair::count, Codecs.STRING, Pair::name, Pair::new);
        assertThat(Codecs.encode(new Pair(7, "x"), codec)).containsExactly(0, 0, 0, 7, 0, 0, 0, 1, 0x78);
        assertThat(roundTrip(new Pair(3, "three"), codec)).isEqualTo(new Pair(3, "three"));
    }

    /** A map keeps the sender's order (3 before 1 here), its count first: 00 00 00 02, then key, value pairs. */
    @Test
    void mapsKeepTheSendersOrder() {
        Map<Integer, String> sent = new LinkedHashMap<>();
        sent.put(3, "c");
        sent.put(1, "a");
        Codec<Map<Integer, String>> codec = Codecs.mapOf(Codecs.INT, Codecs.STRING);
        assertThat(Codecs.encode(sent, codec))
                .containsExactly(0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 'c', 0, 0, 0, 1, 0, 0, 0, 1, 'a');
        assertThat(roundTrip(sent, codec)).containsExactly(Map.entry(3, "c"), Map.entry(1, "a"));
        assertThat(roundTrip(Map.<Integer, String>of(), codec)).isEmpty();
    }

    @Test
    void valuesSentAsAnotherKindComeBackAsThemselves() {
        Codec<Pair> codec = Codecs.STRINGS.as(l -> new Pair(Integer.parseInt(l.get(0)), l.get(1)),
                p -> List.of(Integer.toString(p.count()), p.name()));
        assertThat(roundTrip(new Pair(12, "twelve"), codec)).isEqualTo(new Pair(12, "twelve"));
    }

    @Test
    void listsOfNullablesMatricesJsonAndCompletionsRoundTrip() {
        List<long[]> withNulls = Arrays.asList(new long[] {1, 2}, null, new long[0]);
        assertThat(roundTrip(withNulls, Codecs.listOf(Codecs.nullable(Codecs.LONGS))))
                .containsExactly(new long[] {1, 2}, null, new long[0]);
        double[][] matrix = {{1.5, -2}, {}, {Double.MAX_VALUE}};
        assertThat(roundTrip(matrix, Codecs.DOUBLE_MATRIX)).isDeepEqualTo(matrix);
        Object json = Map.of("a", List.of(1, "b", true), "c", 2.5);
        assertThat(roundTrip(json, Codecs.JSON)).isEqualTo(json);
        Completion c = new Completion(new long[] {5, 6}, new long[] {7}, "seven", new double[] {-0.25}, FinishReason.LENGTH);
        Completion back = roundTrip(c, Codecs.COMPLETION);
        assertThat(back.promptIds()).containsExactly(5, 6);
        assertThat(back.tokenIds()).containsExactly(7);
        assertThat(back.text()).isEqualTo("seven");
        assertThat(back.logprobs()).containsExactly(-0.25);
        assertThat(back.finishReason()).isEqualTo(FinishReason.LENGTH);
        assertThat(roundTrip(List.of("a", ""), Codecs.STRINGS)).containsExactly("a", "");
    }

    /**
     * Bytes another rank did not write as this one reads them (the ranks exchanging different things)
     * fail naming the source, instead of allocating an array of whatever length the first four bytes
     * make (2^31 - 1 longs here: an OutOfMemoryError) or reading past the end.
     */
    @Test
    void bytesThatDoNotReadAsExpectedFailNamingTheirSourceInsteadOfAllocating() {
        byte[] huge = {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2};
        assertThatThrownBy(() -> Codecs.decode(huge, "the value rank 1 sent", Codecs.LONGS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("could not read the value rank 1 sent (6 bytes): IOException: a length of 2147483647 where 2 "
                        + "bytes remain; the ranks exchanged different values at this point: do all processes run the "
                        + "same code and config?");
        byte[] list = Codecs.encode(List.of("a", "bc"), Codecs.STRINGS);
        byte[] cut = Arrays.copyOf(list, list.length - 1); // 4 (count) + 4 + 1 ("a") + 4 + 1 (half of "bc") bytes
        assertThatThrownBy(() -> Codecs.decode(cut, "the value rank 0 sent", Codecs.STRINGS))
                .hasMessageStartingWith("could not read the value rank 0 sent (14 bytes): IOException: a length of 2 "
                        + "where 1 bytes remain;");
        assertThatThrownBy(() -> Codecs.decode(new byte[] {1}, "rank 0's result", Codecs.COMPLETION))
                .hasMessageStartingWith("could not read rank 0's result (1 bytes): java.io.EOFException (no message, thrown at ");
        assertThatThrownBy(() -> Codecs.decode(new byte[] {0, 0, 0, 9}, "a map", Codecs.mapOf(Codecs.INT, Codecs.INT)))
                .hasMessageContaining("IOException: a length of 9 where 0 bytes remain");
    }
}
