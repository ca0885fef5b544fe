package comlrl.tokenizer;

import static comlrl.tokenizer.QwenChatTemplateTest.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the tokenizer files are read, written back and reported when wrong; on copies of the tiny
 * tokenizer with edited configs (no fixtures needed).
 */
class TokenizerFilesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path tiny(Path dir) {
        TinyTokenizerFactory.write(dir);
        return dir;
    }

    private static Path tinyWithConfig(Path dir, Consumer<ObjectNode> edit) throws IOException {
        tiny(dir);
        Path file = dir.resolve("tokenizer_config.json");
        ObjectNode config = (ObjectNode) JSON.readTree(file.toFile());
        edit.accept(config);
        JSON.writeValue(file.toFile(), config);
        return dir;
    }

    @Test
    void missingDirectory(@TempDir Path tmp) {
        Path dir = tmp.resolve("nope");
        assertThatThrownBy(() -> Tokenizer.load(dir)).isInstanceOf(TokenizerException.class)
                .hasMessageContaining(dir.toString()).hasMessageContaining("does not exist");
    }

    @Test
    void missingTokenizerJsonSaysWhereAndWhatToDo(@TempDir Path dir) {
        assertThatThrownBy(() -> Tokenizer.load(dir)).isInstanceOf(TokenizerException.class)
                .hasMessageContaining("No tokenizer.json in " + dir)
                .hasMessageContaining(dir.resolve("tokenizer.json").toString())
                .hasMessageContaining("save_pretrained");
    }

    @Test
    void malformedTokenizerJsonNamesTheFileAndPosition(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("tokenizer.json"), "{\n  \"model\": {\"vocab\": {\"a\": 0,}}\n}");
        assertThatThrownBy(() -> Tokenizer.load(dir)).isInstanceOf(TokenizerException.class)
                .hasMessageStartingWith("Malformed JSON in " + dir.resolve("tokenizer.json"))
                .hasMessageContaining("line 2");
    }

    @Test
    void jsonThatIsNotATokenizer(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("tokenizer.json"), "{\"version\": \"1.0\"}");
        assertThatThrownBy(() -> Tokenizer.load(dir)).isInstanceOf(TokenizerException.class)
                .hasMessageContaining(dir.resolve("tokenizer.json").toString())
                .hasMessageContaining("no \"model\" section");
    }

    @Test
    void malformedConfigNamesTheFile(@TempDir Path dir) throws IOException {
        tiny(dir);
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"eos_token\": \"<|endoftext|>\"");
        assertThatThrownBy(() -> Tokenizer.load(dir)).isInstanceOf(TokenizerException.class)
                .hasMessageStartingWith("Malformed JSON in " + dir.resolve("tokenizer_config.json"));
        Files.writeString(dir.resolve("tokenizer_config.json"), "[1, 2]");
        assertThatThrownBy(() -> Tokenizer.load(dir)).isInstanceOf(TokenizerException.class)
                .hasMessageContaining(dir.resolve("tokenizer_config.json") + ": expected a JSON object, found array");
    }

    @Test
    void specialTokenOutsideTheVocabularyIsRefused(@TempDir Path tmp) throws IOException {
        Path dir = tinyWithConfig(tmp, c -> c.put("eos_token", "</s>"));
        assertThatThrownBy(() -> Tokenizer.load(dir)).isInstanceOf(TokenizerException.class)
                .hasMessageContaining("eos_token \"</s>\"").hasMessageContaining("tokenizer_config.json")
                .hasMessageContaining("is not a token of " + dir.resolve("tokenizer.json"));
    }

    @Test
    void badTokenValueIsRefused(@TempDir Path tmp) throws IOException {
        Path dir = tinyWithConfig(tmp, c -> c.put("pad_token", 5));
        assertThatThrownBy(() -> Tokenizer.load(dir)).isInstanceOf(TokenizerException.class)
                .hasMessageContaining("pad_token must be a string, an AddedToken object");
    }

    @Test
    void padFallsBackToEosAndFailsClearlyWithNeither(@TempDir Path tmp) throws IOException {
        Path eosOnly = tinyWithConfig(tmp.resolve("a"), c -> c.remove("pad_token"));
        try (Tokenizer t = Tokenizer.load(eosOnly)) {
            assertThat(t.hasOwnPadToken()).isFalse();
            assertThat(t.padTokenId()).isEqualTo(TinyTokenizerFactory.END_OF_TEXT_ID);
        }
        Path neither = tinyWithConfig(tmp.resolve("b"), c -> {
            c.remove("pad_token");
            c.putNull("eos_token");
        });
        try (Tokenizer t = Tokenizer.load(neither)) {
            assertThatThrownBy(t::padTokenId).isInstanceOf(TokenizerException.class)
                    .hasMessageContaining("neither a pad_token nor an eos_token")
                    .hasMessageContaining(neither.resolve("tokenizer_config.json").toString());
            assertThatThrownBy(t::eosTokenId).isInstanceOf(TokenizerException.class)
                    .hasMessageContaining("has no eos_token");
        }
    }

    @Test
    void specialTokensAsAddedTokenObjects(@TempDir Path tmp) throws IOException {
        Path dir = tinyWithConfig(tmp, c -> {
            ObjectNode eos = c.putObject("eos_token");
            eos.put("__type", "AddedToken");
            eos.put("content", "<|im_end|>");
            eos.put("special", true);
            c.putObject("bos_token").put("content", "<|im_start|>");
        });
        try (Tokenizer t = Tokenizer.load(dir)) {
            assertThat(t.eosTokenId()).isEqualTo(TinyTokenizerFactory.IM_END_ID);
            assertThat(t.bosTokenId()).hasValue(TinyTokenizerFactory.IM_START_ID);
            assertThat(t.specialTokensMap()).containsEntry("eos_token", "<|im_end|>");
        }
    }

    @Test
    void specialTokensMapOverridesTheConfigAndIsSavedToo(@TempDir Path tmp) throws IOException {
        Path dir = tiny(tmp.resolve("in"));
        Files.writeString(dir.resolve("special_tokens_map.json"), "{\"eos_token\": {\"content\": \"<|im_end|>\"}}");
        try (Tokenizer t = Tokenizer.load(dir)) {
            assertThat(t.eosToken()).isEqualTo("<|im_end|>");
            assertThat(t.padToken()).isEqualTo("<|endoftext|>");
            Path out = tmp.resolve("out");
            t.save(out);
            assertThat(Files.readString(out.resolve("special_tokens_map.json")))
                    .isEqualTo("{\"eos_token\": {\"content\": \"<|im_end|>\"}}");
            try (Tokenizer again = Tokenizer.load(out)) {
                assertThat(again.eosTokenId()).isEqualTo(TinyTokenizerFactory.IM_END_ID);
            }
        }
    }

    @Test
    void namedChatTemplates(@TempDir Path tmp) throws IOException {
        Path dir = tinyWithConfig(tmp, c -> {
            var list = c.putArray("chat_template");
            list.addObject().put("name", "default").put("template", "D{{ messages|length }}");
            list.addObject().put("name", "tool_use").put("template", "T{{ messages|length }}");
        });
        try (Tokenizer t = Tokenizer.load(dir)) {
            assertThat(t.chatTemplateNames()).containsExactly("default", "tool_use");
            assertThat(t.applyChatTemplate(List.of(message("user", "u")), false)).isEqualTo("D1");
            assertThat(t.chatTemplate("tool_use").render(List.of(), false)).isEqualTo("T0");
            assertThatThrownBy(() -> t.chatTemplate("rag")).isInstanceOf(TokenizerException.class)
                    .hasMessageContaining("no chat template named \"rag\"");
        }
    }

    @Test
    void chatTemplateFileOverridesTheConfigAndIsSaved(@TempDir Path tmp) throws IOException {
        Path dir = tiny(tmp.resolve("in"));
        Files.writeString(dir.resolve("chat_template.jinja"), "FILE {{ messages[0].content }}\n");
        try (Tokenizer t = Tokenizer.load(dir)) {
            assertThat(t.applyChatTemplate(List.of(message("user", "u")), true)).isEqualTo("FILE u");
            t.save(tmp.resolve("out"));
        }
        assertThat(Files.readString(tmp.resolve("out").resolve("chat_template.jinja"))).isEqualTo("FILE {{ messages[0].content }}\n");
    }

    @Test
    void missingOrBrokenChatTemplate(@TempDir Path tmp) throws IOException {
        Path none = tinyWithConfig(tmp.resolve("a"), c -> c.remove("chat_template"));
        try (Tokenizer t = Tokenizer.load(none)) {
            assertThat(t.hasChatTemplate()).isFalse();
            assertThatThrownBy(() -> t.applyChatTemplate(List.of(message("user", "u")), true))
                    .isInstanceOf(TokenizerException.class).hasMessageContaining("has no chat template");
        }
        Path broken = tinyWithConfig(tmp.resolve("b"), c -> c.put("chat_template", "{% for m in messages %}"));
        try (Tokenizer t = Tokenizer.load(broken)) { // loading does not compile the template
            assertThatThrownBy(() -> t.applyChatTemplate(List.of(message("user", "u")), true))
                    .isInstanceOf(ChatTemplateException.class).hasMessageStartingWith("Chat template does not parse");
        }
    }

    @Test
    void directoryWithoutConfigLoadsAndSavesAGenericOne(@TempDir Path tmp) throws IOException {
        Path dir = tiny(tmp.resolve("in"));
        Files.delete(dir.resolve("tokenizer_config.json"));
        try (Tokenizer t = Tokenizer.load(dir)) {
            assertThat(t.hasChatTemplate()).isFalse();
            assertThat(t.modelMaxLength()).isEmpty();
            assertThat(t.encode("hello", true)).isEqualTo(t.encode("hello", false));
            t.save(tmp.resolve("out"));
        }
        assertThat(Files.readString(tmp.resolve("out").resolve("tokenizer_config.json")))
                .contains("\"tokenizer_class\": \"PreTrainedTokenizerFast\"");
        assertThat(Files.readAllBytes(tmp.resolve("out").resolve("tokenizer.json")))
                .isEqualTo(Files.readAllBytes(dir.resolve("tokenizer.json")));
    }

    @Test
    void llamaClassesAddBosAndEosFromTheirFlags(@TempDir Path tmp) throws IOException {
        Path dir = tinyWithConfig(tmp.resolve("a"), c -> {
            c.put("tokenizer_class", "LlamaTokenizerFast");
            c.put("bos_token", "<|im_start|>");
            c.remove("add_bos_token"); // default true for Llama
            c.put("add_eos_token", true);
        });
        try (Tokenizer t = Tokenizer.load(dir)) {
            long[] plain = t.encode("hi there", false);
            long[] withSpecials = t.encode("hi there", true);
            assertThat(withSpecials).hasSize(plain.length + 2);
            assertThat(withSpecials[0]).isEqualTo(TinyTokenizerFactory.IM_START_ID);
            assertThat(withSpecials[withSpecials.length - 1]).isEqualTo(TinyTokenizerFactory.END_OF_TEXT_ID);
        }
        Path noBos = tinyWithConfig(tmp.resolve("b"), c -> {
            c.put("tokenizer_class", "LlamaTokenizer");
            c.put("bos_token", "<|im_start|>");
            c.put("add_bos_token", false);
        });
        try (Tokenizer t = Tokenizer.load(noBos)) {
            assertThat(t.encode("hi there", true)).isEqualTo(t.encode("hi there", false));
        }
    }

    @Test
    void cleanUpTokenizationSpacesAndModelMaxLength(@TempDir Path tmp) throws IOException {
        Path dir = tinyWithConfig(tmp, c -> {
            c.put("clean_up_tokenization_spaces", true);
            c.put("model_max_length", 2048);
        });
        try (Tokenizer t = Tokenizer.load(dir)) {
            // the tiny tokenizer is BPE: transformers 5 ignores the clean-up for it
            assertThat(t.decode(t.encode("Yes . I do n't know , ok ?", false), false)).isEqualTo("Yes . I do n't know , ok ?");
            assertThat(t.modelMaxLength()).hasValue(2048);
        }
        Path forced = tinyWithConfig(tmp.resolve("forced"), c -> {
            c.put("clean_up_tokenization_spaces", true);
            c.put("clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output", true);
        });
        try (Tokenizer t = Tokenizer.load(forced)) {
            assertThat(t.decode(t.encode("Yes . I do n't know , ok ?", false), false)).isEqualTo("Yes. I don't know, ok?");
        }
    }

    @Test
    void savingIntoTheSameDirectoryKeepsTheFiles(@TempDir Path tmp) throws IOException {
        Path dir = tiny(tmp);
        byte[] before = Files.readAllBytes(dir.resolve("tokenizer_config.json"));
        try (Tokenizer t = Tokenizer.load(dir)) {
            t.save(dir);
        }
        assertThat(Files.readAllBytes(dir.resolve("tokenizer_config.json"))).isEqualTo(before);
        assertThat(new String(before, StandardCharsets.UTF_8)).contains("\"eos_token\" : \"<|endoftext|>\"");
    }
}
