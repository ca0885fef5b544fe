package comlrl.tokenizer;

import static comlrl.tokenizer.QwenChatTemplateTest.message;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tiny models' tokenizer: layout, determinism, special tokens, compression, chat template. */
class TinyTokenizerFactoryTest {

    @Test
    void writesADeterministicTokenizerAndReturnsItsVocabularySize(@TempDir Path tmp) throws Exception {
        int size = TinyTokenizerFactory.write(tmp.resolve("a"));
        TinyTokenizerFactory.write(tmp.resolve("b"));
        // 256 bytes + 256 merged tokens + 3 special tokens
        assertThat(size).isEqualTo(515).isEqualTo(TinyTokenizerFactory.vocabSize());
        for (String file : List.of("tokenizer.json", "tokenizer_config.json")) {
            assertThat(Files.readAllBytes(tmp.resolve("a").resolve(file)))
                    .isEqualTo(Files.readAllBytes(tmp.resolve("b").resolve(file)));
        }
        try (Tokenizer t = Tokenizer.load(tmp.resolve("a"))) {
            assertThat(t.vocabSize()).isEqualTo(size);
        }
    }

    @Test
    void byteTokensFollowGpt2BytesToUnicode() {
        String[] tokens = TinyTokenizerFactory.byteTokens();
        assertThat(tokens[' ']).isEqualTo("Ġ");   // byte 32 is the 33rd non-printable: U+0100 + 32
        assertThat(tokens['\n']).isEqualTo("Ċ");  // byte 10: U+0100 + 10
        assertThat(tokens['A']).isEqualTo("A");
        assertThat(tokens[0xAD]).isEqualTo("Ń");  // soft hyphen is not printable: the 68th, U+0143
        assertThat(new HashSet<>(List.of(tokens))).hasSize(256);
    }

    @Test
    void specialTokensComeRightAfterTheBytesAndMerges(@TempDir Path dir) {
        TinyTokenizerFactory.write(dir, 256);
        try (Tokenizer t = Tokenizer.load(dir)) {
            assertThat(t.tokenToId("<|endoftext|>")).hasValue(512);
            assertThat(t.tokenToId("<|im_start|>")).hasValue(513);
            assertThat(t.tokenToId("<|im_end|>")).hasValue(514);
            assertThat(t.eosTokenId()).isEqualTo(512);
            assertThat(t.padTokenId()).isEqualTo(512);
            assertThat(t.bosTokenId()).isEmpty();
            assertThat(t.specialTokenIds()).containsExactly(512, 513, 514);
            assertThat(t.modelMaxLength()).hasValue(256);
            assertThat(t.idToToken(65)).contains("A");
            // no BOS/EOS added: the post-processor is ByteLevel only
            assertThat(t.encode("hi", true)).isEqualTo(t.encode("hi", false));
        }
    }

    @Test
    void mergesMakeCommonEnglishShorterThanBytes(@TempDir Path dir) {
        TinyTokenizerFactory.write(dir);
        try (Tokenizer t = Tokenizer.load(dir)) {
            String text = "The agents work together to solve the task and learn to cooperate.";
            assertThat(t.encode(text, false).length).isLessThan(text.length() / 2);
            assertThat(t.encode(" the", false)).hasSize(1);
            Set<Long> ids = new HashSet<>();
            for (long id : t.encode(text, false)) {
                ids.add(id);
            }
            assertThat(ids).anyMatch(id -> id >= 256 && id < 512);
        }
    }

    @Test
    void chatMlTemplateAndItsTokens(@TempDir Path dir) {
        TinyTokenizerFactory.write(dir);
        try (Tokenizer t = Tokenizer.load(dir)) {
            String prompt = t.applyChatTemplate(List.of(message("system", "Be brief."), message("user", "Hi")), true);
            assertThat(prompt).isEqualTo("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                    + "<|im_start|>assistant\n");
            long[] ids = t.encode(prompt, true);
            assertThat(ids[0]).isEqualTo(TinyTokenizerFactory.IM_START_ID);
            assertThat(t.decode(ids, false)).isEqualTo(prompt);
            assertThat(t.decode(ids, true)).isEqualTo("system\nBe brief.\nuser\nHi\nassistant\n");
        }
    }
}
