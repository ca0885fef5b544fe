package comlrl.tokenizer;

import static comlrl.tokenizer.QwenChatTemplateTest.message;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The real Llama 3 tokenizers (fixtures): the base model's, whose tokenizer.json post-processor adds
 * nothing, and the Instruct model's, whose post-processor adds BOS; plus the Llama 3 Instruct chat
 * template (fixture) and the Llama 3.1 one (test resource). Ids from tokenizer.json
 * ({@code model.vocab}: "Hello" 9906, "Ġworld" 1917, "Ġ." 662; {@code added_tokens}:
 * {@code <|begin_of_text|>} 128000, {@code <|end_of_text|>} 128001, {@code <|eot_id|>} 128009),
 * matching transformers.js.
 */
class LlamaTokenizerTest {
    private static final List<Map<String, Object>> SYSTEM_AND_USER = List.of(
            message("system", "You are a helpful assistant."), message("user", "What is 2+2?"));

    @Test
    void baseTokenizerFollowsItsPostProcessorAndAddsNoBos() {
        try (Tokenizer llama = Tokenizer.load(Fixtures.llama3())) {
            assertThat(llama.encode("Hello world", true)).containsExactly(9906, 1917);
            assertThat(llama.bosToken()).contains("<|begin_of_text|>");
            assertThat(llama.bosTokenId()).hasValue(128000);
            assertThat(llama.eosTokenId()).isEqualTo(128001);
        }
    }

    @Test
    void instructTokenizerAddsBosOnlyWithSpecialTokens() {
        try (Tokenizer llama = Tokenizer.load(Fixtures.llama3Instruct())) {
            assertThat(llama.encode("Hello world", true)).containsExactly(128000, 9906, 1917);
            assertThat(llama.encode("Hello world", false)).containsExactly(9906, 1917);
            assertThat(llama.decode(new long[] {128000, 9906, 1917}, false)).isEqualTo("<|begin_of_text|>Hello world");
            assertThat(llama.decode(new long[] {128000, 9906, 1917}, true)).isEqualTo("Hello world");
        }
    }

    @Test
    void padFallsBackToEosWhenTheModelHasNoPadToken() {
        try (Tokenizer llama = Tokenizer.load(Fixtures.llama3Instruct())) {
            // tokenizer_config.json: eos_token "<|eot_id|>", no pad_token
            assertThat(llama.hasOwnPadToken()).isFalse();
            assertThat(llama.eosToken()).isEqualTo("<|eot_id|>");
            assertThat(llama.eosTokenId()).isEqualTo(128009);
            assertThat(llama.padToken()).isEqualTo("<|eot_id|>");
            assertThat(llama.padTokenId()).isEqualTo(128009);
            // model_max_length 1e30 is transformers' "no limit"
            assertThat(llama.modelMaxLength()).isEmpty();
            assertThat(llama.vocabSize()).isEqualTo(128256);
        }
    }

    @Test
    void decodeKeepsSpacesBeforePunctuationAsTransformers5Does() {
        try (Tokenizer llama = Tokenizer.load(Fixtures.llama3())) {
            // clean_up_tokenization_spaces: true, but transformers 5 skips that clean-up for BPE models
            long[] ids = llama.encode("Hello .", false);
            assertThat(ids).containsExactly(9906, 662);
            assertThat(llama.decode(ids, false)).isEqualTo("Hello .");
        }
    }

    @Test
    void llama3InstructChatTemplate() {
        try (Tokenizer llama = Tokenizer.load(Fixtures.llama3Instruct())) {
            // bos_token before the first message, each message trimmed and closed by <|eot_id|>
            assertThat(llama.applyChatTemplate(SYSTEM_AND_USER, true)).isEqualTo(
                    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>"
                            + "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
                            + "<|start_header_id|>assistant<|end_header_id|>\n\n");
            assertThat(llama.applyChatTemplate(List.of(message("user", "  spaced out \n")), false)).isEqualTo(
                    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nspaced out<|eot_id|>");
            // the rendered prompt starts with BOS already: encode without special tokens to avoid a second one
            String prompt = llama.applyChatTemplate(SYSTEM_AND_USER, true);
            assertThat(llama.encode(prompt, false)[0]).isEqualTo(128000);
        }
    }

    @Test
    void llama3BaseTemplateAlwaysEndsWithTheAssistantHeader() {
        try (Tokenizer llama = Tokenizer.load(Fixtures.llama3())) {
            // this template has no add_generation_prompt test: the header is always there
            assertThat(llama.applyChatTemplate(List.of(message("user", "Hi")), false)).isEqualTo(
                    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                            + "<|start_header_id|>assistant<|end_header_id|>\n\n");
        }
    }

    @Test
    void llama3_1TemplateWithDateSystemBlockAndTools() {
        ChatTemplate template = ChatTemplate.compile(Fixtures.resource("llama3_1-chat-template.jinja"))
                .withClock(Clock.fixed(Instant.parse("2025-03-04T10:00:00Z"), ZoneOffset.UTC));
        Map<String, Object> tokens = Map.of("bos_token", "<|begin_of_text|>", "eos_token", "<|eot_id|>");
        // system message goes after the knowledge-cutoff block; date_string defaults to 26 Jul 2024
        assertThat(template.render(SYSTEM_AND_USER, true, tokens)).isEqualTo(
                "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                        + "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n"
                        + "You are a helpful assistant.<|eot_id|>"
                        + "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
                        + "<|start_header_id|>assistant<|end_header_id|>\n\n");

        // with tools: "Environment: ipython" and the tools as tojson(indent=4) in the first user message
        Map<String, Object> function = new LinkedHashMap<>();
        function.put("name", "now");
        function.put("parameters", Map.of());
        Map<String, Object> tool = new LinkedHashMap<>();
        tool.put("type", "function");
        tool.put("function", function);
        Map<String, Object> variables = new LinkedHashMap<>(tokens);
        variables.put("tools", List.of(tool));
        variables.put("date_string", "04 Mar 2025");
        assertThat(template.render(List.of(message("user", "Time?")), true, variables)).isEqualTo(
                "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                        + "Environment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 04 Mar 2025\n\n"
                        + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
                        + "Given the following functions, please respond with a JSON for a function call with its proper "
                        + "arguments that best answers the given prompt.\n\n"
                        + "Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and "
                        + "its value}.Do not use variables.\n\n"
                        + "{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\": \"now\",\n"
                        + "        \"parameters\": {}\n    }\n}\n\n"
                        + "Time?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
    }

    @Test
    void strftimeNowUsesTheTemplateClock() {
        ChatTemplate template = ChatTemplate.compile("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%-d %B %y, %H:%M') }}")
                .withClock(Clock.fixed(Instant.parse("2025-03-04T09:05:00Z"), ZoneOffset.UTC));
        assertThat(template.render(List.of(), false)).isEqualTo("04 Mar 2025|4 March 25, 09:05");
    }
}
