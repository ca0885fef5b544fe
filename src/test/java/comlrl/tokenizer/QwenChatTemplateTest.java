package comlrl.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real chat templates of Qwen3 (from the fixture's tokenizer_config.json) and Qwen2.5 (test
 * resource, as published with Qwen2.5-Instruct). Each expected string is written by hand from the
 * template's logic, as transformers' {@code apply_chat_template(messages, tokenize=False,
 * add_generation_prompt=...)} renders it (Jinja2 with trim_blocks and lstrip_blocks; the {@code -}
 * marks remove the template's own indentation and newlines). They were also checked against Jinja2.
 */
class QwenChatTemplateTest {
    private static Tokenizer qwen3;
    private static final ChatTemplate QWEN2_5 = ChatTemplate.compile(Fixtures.resource("qwen2_5-chat-template.jinja"));
    private static final Map<String, Object> QWEN2_5_TOKENS = Map.of("eos_token", "<|im_end|>", "pad_token", "<|endoftext|>");

    private static final List<Map<String, Object>> SYSTEM_AND_USER = List.of(
            message("system", "You are a helpful assistant."),
            message("user", "What is 2+2?"));
    private static final List<Map<String, Object>> USER_ONLY = List.of(message("user", "Write a haiku about the sea."));
    private static final List<Map<String, Object>> MULTI_TURN = List.of(
            message("system", "Be brief."),
            message("user", "Hi"),
            message("assistant", "Hello! How can I help?"),
            message("user", "Tell me a joke."));

    @BeforeAll
    static void load() {
        qwen3 = Tokenizer.load(Fixtures.qwen3());
    }

    @AfterAll
    static void close() {
        if (qwen3 != null) {
            qwen3.close();
        }
    }

    static Map<String, Object> message(String role, String content) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("role", role);
        m.put("content", content);
        return m;
    }

    @Test
    void qwen3SystemAndUserWithGenerationPrompt() {
        // system block (no tools), then each user turn, then the assistant header
        assertThat(qwen3.applyChatTemplate(SYSTEM_AND_USER, true)).isEqualTo(
                "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                        + "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                        + "<|im_start|>assistant\n");
        // without the generation prompt the text just ends after the last turn
        assertThat(qwen3.applyChatTemplate(SYSTEM_AND_USER, false)).isEqualTo(
                "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                        + "<|im_start|>user\nWhat is 2+2?<|im_end|>\n");
    }

    @Test
    void qwen3UserOnlyHasNoDefaultSystemMessage() {
        assertThat(qwen3.applyChatTemplate(USER_ONLY, true)).isEqualTo(
                "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n");
    }

    @Test
    void qwen3MultiTurnWithAnEarlierAssistantMessage() {
        // the assistant message comes before the last user query: rendered as is, no <think> block
        assertThat(qwen3.applyChatTemplate(MULTI_TURN, true)).isEqualTo(
                "<|im_start|>system\nBe brief.<|im_end|>\n"
                        + "<|im_start|>user\nHi<|im_end|>\n"
                        + "<|im_start|>assistant\nHello! How can I help?<|im_end|>\n"
                        + "<|im_start|>user\nTell me a joke.<|im_end|>\n"
                        + "<|im_start|>assistant\n");
    }

    @Test
    void qwen3ReasoningOfTheFinalAnswerIsKeptAndOfEarlierAnswersDropped() {
        // messages[::-1] finds the last user query; an assistant turn after it (and last) gets
        // <think>\n{reasoning}\n</think>\n\n; earlier ones keep only the text after </think>
        List<Map<String, Object>> finalAnswer = List.of(message("user", "2+2?"),
                message("assistant", "<think>\nadd them\n</think>\n\n4"));
        assertThat(qwen3.applyChatTemplate(finalAnswer, false)).isEqualTo(
                "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nadd them\n</think>\n\n4<|im_end|>\n");

        List<Map<String, Object>> earlier = List.of(message("user", "2+2?"),
                message("assistant", "<think>\nadd them\n</think>\n\n4"), message("user", "3+3?"));
        assertThat(qwen3.applyChatTemplate(earlier, true)).isEqualTo(
                "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n"
                        + "<|im_start|>user\n3+3?<|im_end|>\n<|im_start|>assistant\n");

        // a final answer without reasoning still gets an empty think block
        assertThat(qwen3.applyChatTemplate(List.of(message("user", "Q"), message("assistant", "A")), false))
                .isEqualTo("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nA<|im_end|>\n");
    }

    @Test
    void qwen3ToolResponsesAreNotTheLastQuery() {
        // a user message wrapped in <tool_response> is skipped when looking for the last query, so the
        // assistant turn comes after it; not being last and without reasoning, it has no think block
        List<Map<String, Object>> messages = List.of(message("user", "Q"), message("assistant", "A"),
                message("user", "<tool_response>42</tool_response>"));
        assertThat(qwen3.applyChatTemplate(messages, false)).isEqualTo(
                "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n"
                        + "<|im_start|>user\n<tool_response>42</tool_response><|im_end|>\n");
        // with reasoning it keeps it, since it answers the last real query
        List<Map<String, Object>> reasoned = List.of(message("user", "Q"),
                message("assistant", "<think>\nlook up\n</think>\n\nA"),
                message("user", "<tool_response>42</tool_response>"));
        assertThat(qwen3.applyChatTemplate(reasoned, false)).isEqualTo(
                "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nlook up\n</think>\n\nA<|im_end|>\n"
                        + "<|im_start|>user\n<tool_response>42</tool_response><|im_end|>\n");
    }

    @Test
    void qwen3EnableThinkingFalseAddsAnEmptyThinkBlock() {
        assertThat(qwen3.applyChatTemplate(USER_ONLY, true, Map.of("enable_thinking", false))).isEqualTo(
                "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n"
                        + "<|im_start|>assistant\n<think>\n\n</think>\n\n");
    }

    @Test
    void qwen3ToolsGoIntoTheSystemMessageAsJson() {
        Map<String, Object> function = new LinkedHashMap<>();
        function.put("name", "get_time");
        function.put("parameters", Map.of());
        Map<String, Object> tool = new LinkedHashMap<>();
        tool.put("type", "function");
        tool.put("function", function);
        // tool | tojson is Python's json.dumps: ", " and ": " separators
        assertThat(qwen3.applyChatTemplate(List.of(message("user", "What time is it?")), true,
                Map.of("tools", List.of(tool)))).isEqualTo(
                "<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                        + "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
                        + "{\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"parameters\": {}}}\n</tools>\n\n"
                        + "For each function call, return a json object with function name and arguments within "
                        + "<tool_call></tool_call> XML tags:\n<tool_call>\n"
                        + "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"
                        + "<|im_start|>user\nWhat time is it?<|im_end|>\n<|im_start|>assistant\n");
    }

    @Test
    void qwen3RenderedPromptTokenizesWithSpecialTokens() {
        String prompt = qwen3.applyChatTemplate(USER_ONLY, true);
        long[] ids = qwen3.encode(prompt, true);
        assertThat(ids[0]).isEqualTo(151644); // <|im_start|>
        assertThat(ids).contains(151645);      // <|im_end|>
        assertThat(qwen3.decode(ids, false)).isEqualTo(prompt);
    }

    @Test
    void qwen2_5SystemAndUser() {
        assertThat(QWEN2_5.render(SYSTEM_AND_USER, true, QWEN2_5_TOKENS)).isEqualTo(
                "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                        + "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                        + "<|im_start|>assistant\n");
    }

    @Test
    void qwen2_5UserOnlyGetsTheDefaultSystemMessage() {
        assertThat(QWEN2_5.render(USER_ONLY, true, QWEN2_5_TOKENS)).isEqualTo(
                "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
                        + "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n"
                        + "<|im_start|>assistant\n");
    }

    @Test
    void qwen2_5MultiTurn() {
        assertThat(QWEN2_5.render(MULTI_TURN, false, QWEN2_5_TOKENS)).isEqualTo(
                "<|im_start|>system\nBe brief.<|im_end|>\n"
                        + "<|im_start|>user\nHi<|im_end|>\n"
                        + "<|im_start|>assistant\nHello! How can I help?<|im_end|>\n"
                        + "<|im_start|>user\nTell me a joke.<|im_end|>\n");
    }

    @Test
    void qwen2_5ToolCallsAndToolResponses() {
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("city", "Paris");
        arguments.put("days", 3);
        Map<String, Object> call = new LinkedHashMap<>();
        call.put("name", "get_weather");
        call.put("arguments", arguments);
        Map<String, Object> assistant = message("assistant", "");
        assistant.put("tool_calls", List.of(Map.of("type", "function", "function", call)));
        List<Map<String, Object>> messages = List.of(message("user", "Weather?"), assistant,
                message("tool", "{\"temp\": 21}"), message("tool", "sunny"));
        // consecutive tool messages share one user turn; arguments | tojson as json.dumps
        assertThat(QWEN2_5.render(messages, true, QWEN2_5_TOKENS)).isEqualTo(
                "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
                        + "<|im_start|>user\nWeather?<|im_end|>\n"
                        + "<|im_start|>assistant\n<tool_call>\n"
                        + "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call><|im_end|>\n"
                        + "<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response>\n<tool_response>\nsunny\n"
                        + "</tool_response><|im_end|>\n"
                        + "<|im_start|>assistant\n");
    }
}
