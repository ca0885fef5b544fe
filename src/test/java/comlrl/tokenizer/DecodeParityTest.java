package comlrl.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Decoding as transformers 5.18 decodes, recorded by {@code src/test/python/record_decode_expectations.py}
 * into {@code decode/expectations.json}: for the real Qwen3, Llama 3 and Llama 3.1 tokenizers, variants
 * of their tokenizer_config.json (clean-up asked for, clean-up forced for BPE) and a tiny WordPiece
 * tokenizer (clean-up asked for, not asked for, key absent), the ids of some texts and
 * {@code decode(ids)} with and without special tokens.
 * The clean-up of spaces before punctuation is where these differ: transformers skips it for BPE models.
 */
class DecodeParityTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void decodeMatchesTransformersForEverySetup(@TempDir Path tmp) throws IOException {
        JsonNode recorded = JSON.readTree(Fixtures.resource("decode/expectations.json"));
        int setups = 0;
        for (JsonNode setup : recorded.get("setups")) {
            Path dir = Files.createDirectories(tmp.resolve("setup" + setups++));
            writeSetup(setup, dir);
            String name = setup.get("name").asText();
            try (Tokenizer tokenizer = Tokenizer.load(dir)) {
                for (JsonNode c : setup.get("cases")) {
                    long[] ids = JSON.convertValue(c.get("ids"), long[].class);
                    String text = c.get("text").asText();
                    assertThat(tokenizer.encode(text, true)).as("%s: ids of %s", name, text).containsExactly(ids);
                    assertThat(tokenizer.decode(ids, false)).as("%s: decode of %s", name, text)
                            .isEqualTo(c.get("decode").asText());
                    assertThat(tokenizer.decode(ids, true)).as("%s: decode of %s skipping special tokens", name, text)
                            .isEqualTo(c.get("decode_skip_special").asText());
                }
            }
        }
        assertThat(setups).isEqualTo(8);
    }

    @Test
    void llama3KeepsTheSpaceBeforePunctuation() {
        // tokenizer_config.json says clean_up_tokenization_spaces: true, but transformers 5 ignores it for BPE
        try (Tokenizer llama = Tokenizer.load(Fixtures.llama3())) {
            assertThat(llama.decode(llama.encode("if x != 0:", false), true)).isEqualTo("if x != 0:");
            assertThat(llama.decode(llama.encode("Hello , world !", false), true)).isEqualTo("Hello , world !");
        }
    }

    @Test
    void theClassDecidesTheModelWhereTransformersRebuildsTheBackend() {
        // BertTokenizer(Fast) always builds WordPiece, Qwen2Tokenizer BPE; PreTrainedTokenizerFast keeps tokenizer.json's
        assertThat(SpaceCleanup.applies(config("BertTokenizerFast", false), "BPE")).isTrue();
        assertThat(SpaceCleanup.applies(config("Qwen2TokenizerFast", false), "WordPiece")).isFalse();
        assertThat(SpaceCleanup.applies(config("Qwen2Tokenizer", true), "WordPiece")).isTrue();
        assertThat(SpaceCleanup.applies(config("PreTrainedTokenizerFast", false), "Unigram")).isTrue();
        assertThat(SpaceCleanup.applies(config("NoSuchTokenizer", false), "BPE")).isFalse();
        assertThat(SpaceCleanup.cleanUp("a , b . c ' d do n't I 'm it 's we 've they 're ?!"))
                .isEqualTo("a, b. c'd don't I'm it's we've they're?!");
    }

    private static SpecialTokensConfig config(String tokenizerClass, boolean forceForBpe) {
        String json = "{\"tokenizer_class\": \"" + tokenizerClass + "\", \"clean_up_tokenization_spaces\": true, "
                + "\"clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output\": " + forceForBpe + "}";
        return SpecialTokensConfig.read(json.getBytes(StandardCharsets.UTF_8), Path.of("tokenizer_config.json"),
                null, null, null);
    }

    @Test
    void classModelTableIsTransformers() throws IOException {
        JsonNode recorded = JSON.readTree(Fixtures.resource("decode/class-models.json")).get("models");
        Map<String, String> expected = new TreeMap<>();
        recorded.fields().forEachRemaining(e -> expected.put(e.getKey(), e.getValue().asText()));
        assertThat(new TreeMap<>(SpaceCleanup.CLASS_MODELS)).isEqualTo(expected);
    }

    /**
     * tokenizer.json of the setup's source, and its tokenizer_config.json (the fixture's, or the
     * recorded base) with the recorded edits.
     */
    private static void writeSetup(JsonNode setup, Path dir) throws IOException {
        String[] source = setup.get("tokenizer_json").asText().split(":", 2);
        ObjectNode config;
        if (source[0].equals("fixture")) {
            Path fixture = switch (source[1]) {
                case "qwen3" -> Fixtures.qwen3();
                case "llama3" -> Fixtures.llama3();
                case "llama3_1" -> Fixtures.llama3Instruct();
                default -> throw new IllegalArgumentException("unknown fixture " + source[1]);
            };
            Files.copy(fixture.resolve("tokenizer.json"), dir.resolve("tokenizer.json"));
            config = (ObjectNode) JSON.readTree(fixture.resolve("tokenizer_config.json").toFile());
        } else {
            Files.writeString(dir.resolve("tokenizer.json"), Fixtures.resource("decode/" + source[1]),
                    StandardCharsets.UTF_8);
            config = setup.get("config_base").deepCopy();
        }
        config.setAll((ObjectNode) setup.get("config_edits"));
        for (JsonNode key : setup.get("config_removed")) {
            config.remove(key.asText());
        }
        JSON.writeValue(dir.resolve("tokenizer_config.json").toFile(), config);
    }
}
