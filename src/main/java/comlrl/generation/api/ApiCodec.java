package comlrl.generation.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The wire formats of an {@link ApiComparator} (the payloads and where the completions are, in its
 * class docs): each request's JSON body, and the completions read out of a 2xx answer; an answer
 * without them is an {@link IllegalArgumentException} naming the endpoint, with a short excerpt of
 * the body (the key scrubbed).
 */
final class ApiCodec {
    static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final List<String> FALLBACK_FIELDS = List.of("completions", "responses", "outputs", "choices");
    private static final List<String> TEXT_FIELDS = List.of("text", "content", "completion", "output");
    private static final int RESPONSE_EXCERPT = 200;
    /** The most stop strings the OpenAI chat completions API's {@code stop} takes. */
    static final int OPENAI_MAX_STOP = 4;

    private final ApiComparatorSettings settings;
    private final ObjectNode extraBody;
    /** Replaces the key and every other registered secret in what a message quotes. */
    private final UnaryOperator<String> scrub;

    ApiCodec(ApiComparatorSettings settings, UnaryOperator<String> scrub) {
        this.settings = settings;
        this.extraBody = JSON.valueToTree(settings.extraBody());
        this.scrub = scrub;
    }

    /** The JSON body of one request for {@code n} completions (see the class docs). */
    ObjectNode payload(String prompt, int agentIndex, int n, Map<String, Object> batchItem, ApiComparator.Sampling s) {
        checkStop(s.stop());
        ObjectNode body = JSON.createObjectNode();
        switch (settings.format()) {
            case GENERIC -> {
                body.put("prompt", prompt);
                body.put("agent_idx", agentIndex);
                body.put("num_return_sequences", n);
                body.put("max_new_tokens", s.maxNewTokens());
                body.put("temperature", s.temperature());
                body.put("top_p", s.topP());
                body.put("top_k", s.topK());
                body.set("batch_item", batchItemJson(batchItem));
                if (settings.model() != null) {
                    body.put("model", settings.model());
                }
                putStop(body, "stop_strings", s.stop());
            }
            case OPENAI_CHAT -> {
                body.put("model", settings.model());
                body.set("messages", userMessage(prompt));
                body.put("n", n);
                body.put("max_tokens", s.maxNewTokens());
                body.put("temperature", s.temperature());
                body.put("top_p", s.topP());
                putStop(body, "stop", s.stop());
            }
            case ANTHROPIC -> {
                body.put("model", settings.model());
                body.put("max_tokens", s.maxNewTokens());
                body.set("messages", userMessage(prompt));
                body.put("temperature", s.temperature());
                body.put("top_p", s.topP());
                putStop(body, "stop_sequences", s.stop());
            }
            case OPENAI_RESPONSES -> {
                body.put("model", settings.model());
                body.put("input", prompt);
                body.put("max_output_tokens", s.maxNewTokens());
                body.put("temperature", s.temperature());
                body.put("top_p", s.topP());
            }
        }
        extraBody.fields().forEachRemaining(field -> {
            if (field.getValue().isNull()) {
                body.remove(field.getKey());
            } else {
                body.set(field.getKey(), field.getValue().deepCopy());
            }
        });
        return body;
    }

    /** {@code body[field] = stop} when there are stop strings. */
    private static void putStop(ObjectNode body, String field, List<String> stop) {
        if (!stop.isEmpty()) {
            stop.forEach(body.putArray(field)::add);
        }
    }

    /**
     * Refuses more stop strings than the openai chat completions API's {@code stop} takes
     * ({@value #OPENAI_MAX_STOP}), unless {@code comparator_api_extra_body} sets {@code stop} itself.
     */
    void checkStop(List<String> stop) {
        if (settings.format() == ApiFormat.OPENAI_CHAT && stop.size() > OPENAI_MAX_STOP && !extraBody.has("stop")) {
            throw new IllegalArgumentException(where() + ": stop_strings holds " + stop.size() + " strings " + stop
                    + ", but the chat completions API's \"stop\" takes at most " + OPENAI_MAX_STOP + "; keep at most "
                    + OPENAI_MAX_STOP + " for this agent, or, for a server that takes more, set \"stop\" in "
                    + ApiComparatorSettings.EXTRA_BODY + " (null sends none)");
        }
    }

    /**
     * {@code text} up to the first occurrence of any of {@code stop} (the string left out, as the chat
     * API ends a completion) for the openai_responses format, whose API takes no stop strings; else
     * {@code text} unchanged.
     */
    String cutAtStop(String text, List<String> stop) {
        if (settings.format() != ApiFormat.OPENAI_RESPONSES) {
            return text;
        }
        int end = text.length();
        for (String s : stop) {
            int at = text.indexOf(s);
            if (at >= 0) {
                end = Math.min(end, at);
            }
        }
        return text.substring(0, end);
    }

    private static ArrayNode userMessage(String prompt) {
        ArrayNode messages = JSON.createArrayNode();
        messages.addObject().put("role", "user").put("content", prompt);
        return messages;
    }

    private static JsonNode batchItemJson(Map<String, Object> batchItem) {
        try {
            return JSON.valueToTree(batchItem);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the batch item cannot be sent as JSON (batch_item of the generic "
                    + "comparator API): " + e.getMessage(), e);
        }
    }

    /** The JSON of a 2xx answer's body; an empty body or one that is not JSON is {@link #malformed}. */
    JsonNode parse(String body) {
        try {
            JsonNode root = JSON.readTree(body);
            if (root != null && !root.isMissingNode()) {
                return root;
            }
            throw malformed("an empty body", body);
        } catch (JsonProcessingException e) {
            // the parser's own message is scrubbed and its exception not chained: both may quote the body
            throw malformed("a body that is not JSON (" + scrub.apply(e.getOriginalMessage()) + ")", body);
        }
    }

    /** The completions of one parsed 2xx response (see the class docs). */
    List<String> completions(JsonNode root) {
        return switch (settings.format()) {
            case GENERIC -> genericCompletions(root);
            case OPENAI_CHAT -> {
                JsonNode choices = root.path("choices");
                if (!choices.isArray()) {
                    throw malformed("no \"choices\" list", root.toString());
                }
                yield texts(choices, "choices", root);
            }
            case ANTHROPIC -> {
                JsonNode content = root.path("content");
                if (!content.isArray()) {
                    throw malformed("no \"content\" list", root.toString());
                }
                StringBuilder text = new StringBuilder();
                content.forEach(block -> {
                    if ("text".equals(block.path("type").asText()) && block.path("text").isTextual()) {
                        text.append(block.path("text").asText());
                    }
                });
                yield List.of(text.toString());
            }
            case OPENAI_RESPONSES -> {
                if (root.path("output_text").isTextual()) {
                    yield List.of(root.path("output_text").asText());
                }
                JsonNode output = root.path("output");
                if (!output.isArray()) {
                    throw malformed("neither \"output_text\" nor an \"output\" list", root.toString());
                }
                StringBuilder text = new StringBuilder();
                output.forEach(item -> item.path("content").forEach(part -> {
                    if (part.path("text").isTextual()) {
                        text.append(part.path("text").asText());
                    }
                }));
                yield List.of(text.toString());
            }
        };
    }

    private List<String> genericCompletions(JsonNode root) {
        String field = settings.responseField();
        JsonNode value = root;
        for (String segment : field.split("\\.")) {
            value = value.isArray() && segment.matches("\\d+") ? value.path(Integer.parseInt(segment))
                    : value.path(segment);
        }
        for (int i = 0; i < FALLBACK_FIELDS.size() && (value.isMissingNode() || value.isNull()); i++) {
            field = FALLBACK_FIELDS.get(i);
            value = root.path(field);
        }
        if (value.isMissingNode() || value.isNull()) {
            throw malformed("no field \"" + settings.responseField() + "\" nor any of "
                    + String.join(", ", FALLBACK_FIELDS) + " at the top", root.toString());
        }
        if (value.isTextual()) {
            return List.of(value.asText());
        }
        if (!value.isArray()) {
            throw malformed("\"" + field + "\" holding " + value.getNodeType().name().toLowerCase(Locale.ROOT)
                    + ", not a list of completions or a string", root.toString());
        }
        return texts(value, field, root);
    }

    /** Each element's text: a string, or an object's text/content/completion/output/message.content. */
    private List<String> texts(JsonNode list, String field, JsonNode root) {
        List<String> texts = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            JsonNode element = list.get(i);
            String text = element.isTextual() ? element.asText() : null;
            for (int f = 0; f < TEXT_FIELDS.size() && text == null; f++) {
                JsonNode candidate = element.path(TEXT_FIELDS.get(f));
                text = candidate.isTextual() ? candidate.asText() : null;
            }
            if (text == null && element.path("message").path("content").isTextual()) {
                text = element.path("message").path("content").asText();
            }
            if (text == null) {
                throw malformed(field + "[" + i + "] without text (expected a string, or an object with "
                        + String.join(", ", TEXT_FIELDS) + " or message.content)", root.toString());
            }
            texts.add(text);
        }
        return texts;
    }

    /** Where the completions were expected, for messages. */
    private String expected() {
        return switch (settings.format()) {
            case GENERIC -> "\"" + settings.responseField() + "\" (" + ApiComparatorSettings.RESPONSE_FIELD + ")";
            case OPENAI_CHAT -> "choices[i].message.content";
            case ANTHROPIC -> "content[*].text";
            case OPENAI_RESPONSES -> "output_text or output[*].content[*].text";
        };
    }

    private IllegalArgumentException malformed(String what, String body) {
        return new IllegalArgumentException(where() + " answered with " + what + "; expected the completions in "
                + expected() + ". Response: " + excerpt(body, RESPONSE_EXCERPT));
    }

    /** The endpoint, for messages. */
    String where() {
        return "comparator API (" + settings.format().configName() + ", POST " + settings.url() + ")";
    }

    /** {@code text} with the key scrubbed, then cut to {@code max} characters. */
    String excerpt(String text, int max) {
        String clean = scrub.apply(text == null ? "" : text.strip());
        if (clean.isEmpty()) {
            return "(empty body)";
        }
        return clean.length() <= max ? clean : clean.substring(0, max) + "...";
    }
}
