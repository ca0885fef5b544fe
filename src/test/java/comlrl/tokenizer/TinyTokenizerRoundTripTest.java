package comlrl.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** decode(encode(text)) == text for any text, with the tiny byte-level tokenizer. */
class TinyTokenizerRoundTripTest {
    private static Path dir;
    private static Tokenizer tiny;

    @BeforeContainer
    static void write() throws IOException {
        dir = Files.createTempDirectory("tiny-tokenizer");
        TinyTokenizerFactory.write(dir);
        tiny = Tokenizer.load(dir);
    }

    @AfterContainer
    static void close() throws IOException {
        tiny.close();
        for (String file : List.of(Tokenizer.TOKENIZER_FILE, Tokenizer.CONFIG_FILE)) {
            Files.deleteIfExists(dir.resolve(file));
        }
        Files.deleteIfExists(dir);
    }

    @Property(tries = 300)
    void anyUnicodeTextRoundTrips(@ForAll("unicodeText") String text) {
        long[] ids = tiny.encode(text, true);
        assertThat(Arrays.stream(ids).allMatch(id -> id >= 0 && id < TinyTokenizerFactory.VOCAB_SIZE)).isTrue();
        assertThat(tiny.decode(ids, false)).isEqualTo(text);
    }

    @Property(tries = 200)
    void englishLikeTextWithSpecialTokensRoundTrips(@ForAll("chatText") String text) {
        assertThat(tiny.decode(tiny.encode(text, true), false)).isEqualTo(text);
    }

    /** Strings of any code points (no lone surrogates, which are not text), up to 60 of them. */
    @Provide
    Arbitrary<String> unicodeText() {
        Arbitrary<Integer> codePoints = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(0, 0x7F)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0x80, 0xFFFF)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0x10000, 0x10FFFF)))
                .filter(cp -> cp < 0xD800 || cp > 0xDFFF);
        return codePoints.list().ofMaxSize(60).map(TinyTokenizerRoundTripTest::fromCodePoints);
    }

    @Provide
    Arbitrary<String> chatText() {
        Arbitrary<String> pieces = Arbitraries.oneOf(
                Arbitraries.of("the", " the", " agents", "work", " ", "  ", "\n", "\t", ".", ",", "'s", "123",
                        TinyTokenizerFactory.END_OF_TEXT, TinyTokenizerFactory.IM_START, TinyTokenizerFactory.IM_END),
                Arbitraries.strings().alpha().ofMaxLength(8));
        return pieces.list().ofMaxSize(30).map(list -> String.join("", list));
    }

    private static String fromCodePoints(List<Integer> codePoints) {
        StringBuilder out = new StringBuilder();
        codePoints.forEach(out::appendCodePoint);
        return out.toString();
    }
}
