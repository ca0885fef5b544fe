package comlrl.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Chat templates rendered byte for byte as transformers renders them, recorded by
 * {@code src/test/python/record_chat_template_expectations.py} into {@code chat/expectations.json}:
 *
 * <ul>
 *   <li>conversations with string content, list content ({@code [{"type": "text", "text": ...}]},
 *       with and without an image part) and None content, through the real templates: the Qwen3,
 *       Llama 3 and Llama 3.1 fixtures (as {@link Tokenizer#applyChatTemplate} applies them), the
 *       Qwen2.5 and Llama 3.1 templates of the other tests, Qwen2-VL's template (which iterates over
 *       content parts) and {@code chat/content-parts-chat-template.jinja}. Where Jinja2 raises (Qwen's
 *       {@code '\n' + message.content} on a list: "TypeError: can only concatenate str (not "list")
 *       to str"), the render must fail with that error too, not print a Java list;</li>
 *   <li>small expressions: None, {@code join} and {@code str.join}, {@code +} and {@code ~},
 *       integer arithmetic beyond a long, {@code //} and {@code %} of negative numbers, truthiness.</li>
 * </ul>
 */
class ChatTemplateParityTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<List<Map<String, Object>>> MESSAGES = new TypeReference<>() {};
    private static final Map<String, Tokenizer> FIXTURES = new HashMap<>();
    private static JsonNode recorded;

    @BeforeAll
    static void load() throws IOException {
        recorded = JSON.readTree(Fixtures.resource("chat/expectations.json"));
        FIXTURES.put("qwen3", Tokenizer.load(Fixtures.qwen3()));
        FIXTURES.put("llama3", Tokenizer.load(Fixtures.llama3()));
        FIXTURES.put("llama3_1", Tokenizer.load(Fixtures.llama3Instruct()));
    }

    @AfterAll
    static void close() {
        FIXTURES.values().forEach(Tokenizer::close);
    }

    @Test
    void realTemplatesRenderStringListAndNoneContentAsTransformers() {
        List<String> mismatches = new ArrayList<>();
        for (JsonNode c : recorded.get("conversations")) {
            List<Map<String, Object>> messages = JSON.convertValue(c.get("messages"), MESSAGES);
            boolean generationPrompt = c.get("add_generation_prompt").asBoolean();
            Map<String, Object> variables = JSON.convertValue(c.get("variables"), new TypeReference<>() {});
            String[] template = c.get("template").asText().split(":", 2);
            Supplier<String> render = template[0].equals("fixture")
                    ? () -> FIXTURES.get(template[1]).applyChatTemplate(messages, generationPrompt, variables)
                    : () -> ChatTemplate.compile(Fixtures.resource(template[1])).render(messages, generationPrompt,
                            variables);
            mismatches.add(mismatch(c, c.get("template").asText() + ", " + c.get("conversation").asText()
                    + ", generation prompt " + generationPrompt, render));
        }
        assertThat(mismatches).hasSize(70);
        assertThat(String.join("\n", mismatches.stream().filter(m -> m != null).toList())).isEmpty();
    }

    @Test
    void expressionsEvaluateAsJinja2() {
        List<Map<String, Object>> messages = JSON.convertValue(recorded.get("expression_messages"), MESSAGES);
        List<String> mismatches = new ArrayList<>();
        for (JsonNode c : recorded.get("expressions")) {
            String template = c.get("template").asText();
            mismatches.add(mismatch(c, template, () -> ChatTemplate.compile(template).render(messages, false)));
        }
        assertThat(mismatches).hasSizeGreaterThan(90);
        assertThat(String.join("\n", mismatches.stream().filter(m -> m != null).toList())).isEmpty();
    }

    @Test
    void listContentIsNeverPrintedTheJavaWay() {
        // Jinjava printed '<|im_start|>user\n[{type=text, text=Hi}]' for Qwen's "'\n' + message.content"
        List<Map<String, Object>> messages = List.of(Map.of("role", "user", "content",
                List.of(Map.of("type", "text", "text", "Hi"))));
        assertThatThrownBy(() -> FIXTURES.get("qwen3").applyChatTemplate(messages, true))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("TypeError: can only concatenate str (not \"list\") to str");
    }

    /**
     * Whether the render gives the recorded text, or fails as Jinja2 did (with Python's message for
     * Python errors); a description of the difference if not, else null.
     */
    private static String mismatch(JsonNode c, String what, Supplier<String> render) {
        String actual;
        try {
            actual = render.get();
        } catch (ChatTemplateException e) {
            if (c.has("text")) {
                return what + ": Jinja2 renders " + c.get("text") + " but this failed: " + e.getMessage();
            }
            String error = c.get("error").asText();
            String expected = error + ": " + c.get("message").asText();
            // Jinjava has no undefined objects to raise UndefinedError from: any failure will do
            return error.equals("UndefinedError") || e.getMessage().contains(expected) ? null
                    : what + ": Jinja2 raises " + expected + " but this failed with " + e.getMessage();
        }
        if (!c.has("text")) {
            return what + ": Jinja2 raises " + c.get("error").asText() + ": " + c.get("message").asText()
                    + " but this rendered " + JSON.valueToTree(actual);
        }
        return actual.equals(c.get("text").asText()) ? null
                : what + ": Jinja2 renders " + c.get("text") + " but this rendered " + JSON.valueToTree(actual);
    }
}
