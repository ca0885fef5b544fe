package comlrl.generation.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import comlrl.generation.api.ApiComparator.Sampling;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The comparator's HTTP client against a local server on 127.0.0.1 that records every request and
 * answers as each test says.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ApiComparatorTest {
    private static final String KEY = "sk-secret-123";
    private static final String PROMPT = "Write a haiku about rain.";
    private static final Sampling SAMPLING = new Sampling(64, 0.7, 0.9, 20);
    private static final Map<String, Object> ITEM = Map.of("id", 7, "question", "q?");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One request as the server saw it; header names case-insensitive. */
    private record Recorded(String method, String path, Map<String, List<String>> headers, String body) {
        String header(String name) {
            List<String> values = headers.get(name);
            return values == null ? null : String.join(",", values);
        }

        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** What the server answers, after {@code delayMillis}. */
    private record Reply(int status, String body, long delayMillis, Map<String, String> headers) {
        static Reply of(int status, String body) {
            return new Reply(status, body, 0, Map.of());
        }

        static Reply ok(String body) {
            return of(200, body);
        }
    }

    private HttpServer server;
    private ExecutorService serverThreads;
    private final List<Recorded> requests = new CopyOnWriteArrayList<>();
    private volatile Function<Recorded, Reply> replies = r -> Reply.ok("{}");

    @BeforeEach
    void startServer() throws IOException {
        serverThreads = Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "test-comparator-server");
            thread.setDaemon(true);
            return thread;
        });
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(serverThreads);
        server.createContext("/", this::serve);
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
        serverThreads.shutdownNow();
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            headers.putAll(exchange.getRequestHeaders());
            Recorded request = new Recorded(exchange.getRequestMethod(), exchange.getRequestURI().getPath(), headers,
                    new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            requests.add(request);
            Reply reply = replies.apply(request);
            if (reply.delayMillis() > 0) {
                try {
                    Thread.sleep(reply.delayMillis());
                } catch (InterruptedException e) {
                    return;
                }
            }
            byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
            reply.headers().forEach(exchange.getResponseHeaders()::add);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(reply.status(), body.length == 0 ? -1 : body.length);
            if (body.length > 0) {
                exchange.getResponseBody().write(body);
            }
        }
    }

    /** Answers the given replies in turn, the last one again for every further request. */
    private static Function<Recorded, Reply> inTurn(Reply... sequence) {
        AtomicInteger next = new AtomicInteger();
        return r -> sequence[Math.min(next.getAndIncrement(), sequence.length - 1)];
    }

    private ApiComparatorSettings.Builder settings(String path) {
        return ApiComparatorSettings.builder("http://127.0.0.1:" + server.getAddress().getPort() + path)
                .backoffSeconds(0.01).timeoutSeconds(10);
    }

    private static List<String> generate(ApiComparatorSettings settings, int numCandidates) {
        try (ApiComparator comparator = new ApiComparator(settings)) {
            return comparator.generate(PROMPT, 1, numCandidates, ITEM, SAMPLING);
        }
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every message and toString of {@code thrown}, its causes and suppressed exceptions. */
    private static String everyMessage(Throwable thrown) {
        StringBuilder all = new StringBuilder();
        List<Throwable> pending = new ArrayList<>(List.of(thrown));
        while (!pending.isEmpty()) {
            Throwable t = pending.remove(0);
            all.append(t).append('\n').append(t.getMessage()).append('\n');
            if (t.getCause() != null) {
                pending.add(t.getCause());
            }
            pending.addAll(List.of(t.getSuppressed()));
        }
        return all.toString();
    }

    // ------------------------------------------------------------------ one round trip per format

    @Test
    void genericSendsPromptSamplingAndBatchItemAndReadsCompletions() {
        replies = r -> Reply.ok("{\"completions\": [\"a\", \"b\", \"c\"]}");
        ApiComparatorSettings settings = settings("/generate").model("m1").apiKey(KEY)
                .headers(Map.of("X-Trace", "t1")).build();

        assertThat(generate(settings, 3)).containsExactly("a", "b", "c");

        assertThat(requests).hasSize(1);
        Recorded request = requests.get(0);
        assertThat(request.method()).isEqualTo("POST");
        assertThat(request.path()).isEqualTo("/generate");
        assertThat(request.header("Content-Type")).isEqualTo("application/json");
        assertThat(request.header("Authorization")).isEqualTo("Bearer " + KEY);
        assertThat(request.header("X-Trace")).isEqualTo("t1");
        JsonNode body = request.json();
        assertThat(body.get("prompt").asText()).isEqualTo(PROMPT);
        assertThat(body.get("agent_idx").asInt()).isEqualTo(1);
        assertThat(body.get("num_return_sequences").asInt()).isEqualTo(3);
        assertThat(body.get("max_new_tokens").asInt()).isEqualTo(64);
        assertThat(body.get("temperature").asDouble()).isEqualTo(0.7);
        assertThat(body.get("top_p").asDouble()).isEqualTo(0.9);
        assertThat(body.get("top_k").asInt()).isEqualTo(20);
        assertThat(body.get("batch_item")).isEqualTo(JSON.valueToTree(ITEM));
        assertThat(body.get("model").asText()).isEqualTo("m1");
    }

    @Test
    void genericWithoutModelOrKeySendsNeither() {
        replies = r -> Reply.ok("{\"completions\": [\"a\"]}");
        assertThat(generate(settings("/g").build(), 1)).containsExactly("a");
        assertThat(requests.get(0).json().has("model")).isFalse();
        assertThat(requests.get(0).header("Authorization")).isNull();
    }

    @Test
    void openAiChatCapsNPerRequestAndCollectsEveryCandidate() {
        AtomicInteger label = new AtomicInteger();
        replies = r -> {
            ObjectNode response = JSON.createObjectNode();
            ArrayNode choices = response.putArray("choices");
            for (int i = 0; i < r.json().get("n").asInt(); i++) {
                choices.addObject().put("index", i).putObject("message").put("role", "assistant")
                        .put("content", "c" + label.getAndIncrement());
            }
            return Reply.ok(response.toString());
        };
        ApiComparatorSettings settings = settings("/v1/chat/completions").format(ApiFormat.OPENAI_CHAT)
                .model("gpt-test").maxNPerRequest(2).apiKey(KEY).build();

        assertThat(generate(settings, 5)).containsExactly("c0", "c1", "c2", "c3", "c4");

        assertThat(requests).extracting(r -> r.json().get("n").asInt()).containsExactly(2, 2, 1);
        Recorded request = requests.get(0);
        assertThat(request.header("Authorization")).isEqualTo("Bearer " + KEY);
        assertThat(request.header("x-api-key")).isNull();
        JsonNode body = request.json();
        assertThat(body.get("model").asText()).isEqualTo("gpt-test");
        assertThat(body.get("messages")).isEqualTo(JSON.valueToTree(List.of(Map.of("role", "user", "content", PROMPT))));
        assertThat(body.get("max_tokens").asInt()).isEqualTo(64);
        assertThat(body.get("temperature").asDouble()).isEqualTo(0.7);
        assertThat(body.get("top_p").asDouble()).isEqualTo(0.9);
        assertThat(body.has("prompt") || body.has("top_k") || body.has("batch_item")).isFalse();
    }

    @Test
    void openAiChatWithoutCapAsksForAllAtOnceExceptOnDeepSeek() {
        replies = r -> Reply.ok(json(Map.of("choices", List.of(Map.of("message", Map.of("content", "x")),
                Map.of("message", Map.of("content", "y")), Map.of("message", Map.of("content", "z"))))));
        ApiComparatorSettings settings = settings("/v1/chat").format(ApiFormat.OPENAI_CHAT).model("m").build();
        assertThat(generate(settings, 3)).containsExactly("x", "y", "z");
        assertThat(requests).extracting(r -> r.json().get("n").asInt()).containsExactly(3);

        ApiComparatorSettings deepseek = ApiComparatorSettings.builder("https://api.deepseek.com/chat/completions")
                .format(ApiFormat.OPENAI_CHAT).model("deepseek-chat").build();
        try (ApiComparator comparator = new ApiComparator(deepseek)) {
            assertThat(comparator.maxPerRequest()).isEqualTo(1);
        }
        try (ApiComparator comparator = new ApiComparator(ApiComparatorSettings.builder("https://api.deepseek.com/x")
                .format(ApiFormat.OPENAI_CHAT).model("deepseek-chat").maxNPerRequest(4).build())) {
            assertThat(comparator.maxPerRequest()).isEqualTo(4);
        }
    }

    @Test
    void anthropicSendsOneRequestPerCandidateWithItsHeadersAndJoinsTextBlocks() {
        replies = r -> Reply.ok(json(Map.of("content", List.of(Map.of("type", "text", "text", "Hel"),
                Map.of("type", "tool_use", "id", "t1"), Map.of("type", "other", "text", "NOT TEXT"),
                Map.of("type", "text", "text", "lo")))));
        ApiComparatorSettings settings = settings("/v1/messages").format(ApiFormat.ANTHROPIC).model("claude-test")
                .apiKey(KEY).build();

        assertThat(generate(settings, 2)).containsExactly("Hello", "Hello");

        assertThat(requests).hasSize(2);
        for (Recorded request : requests) {
            assertThat(request.header("x-api-key")).isEqualTo(KEY);
            assertThat(request.header("anthropic-version")).isEqualTo("2023-06-01");
            assertThat(request.header("Authorization")).isNull();
            JsonNode body = request.json();
            assertThat(body.get("model").asText()).isEqualTo("claude-test");
            assertThat(body.get("max_tokens").asInt()).isEqualTo(64);
            assertThat(body.get("messages"))
                    .isEqualTo(JSON.valueToTree(List.of(Map.of("role", "user", "content", PROMPT))));
            assertThat(body.get("temperature").asDouble()).isEqualTo(0.7);
            assertThat(body.get("top_p").asDouble()).isEqualTo(0.9);
            assertThat(body.has("n")).isFalse();
        }
    }

    @Test
    void openAiResponsesReadsOutputTextElseJoinsOutputContent() {
        replies = inTurn(Reply.ok("{\"output_text\": \"first\"}"),
                Reply.ok(json(Map.of("output", List.of(Map.of("type", "reasoning", "summary", List.of()),
                        Map.of("type", "message", "content", List.of(Map.of("type", "output_text", "text", "sec"),
                                Map.of("type", "output_text", "text", "ond"))))))));
        ApiComparatorSettings settings = settings("/v1/responses").format(ApiFormat.OPENAI_RESPONSES).model("codex-t")
                .apiKey(KEY).apiKeyHeader("X-Api-Key").apiKeyPrefix("").build();

        assertThat(generate(settings, 2)).containsExactly("first", "second");

        assertThat(requests).hasSize(2);
        Recorded request = requests.get(1);
        assertThat(request.header("X-Api-Key")).isEqualTo(KEY); // empty prefix: the bare key, no space
        assertThat(request.header("Authorization")).isNull();
        JsonNode body = request.json();
        assertThat(body.get("model").asText()).isEqualTo("codex-t");
        assertThat(body.get("input").asText()).isEqualTo(PROMPT);
        assertThat(body.get("max_output_tokens").asInt()).isEqualTo(64);
        assertThat(body.get("temperature").asDouble()).isEqualTo(0.7);
        assertThat(body.get("top_p").asDouble()).isEqualTo(0.9);
    }

    @Test
    void extraBodyIsAddedLastReplacesOurFieldsAndNullRemovesOne() {
        replies = r -> Reply.ok("{\"completions\": [\"a\"]}");
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("seed", 3);
        extra.put("temperature", 0.1);
        extra.put("top_k", null);
        extra.put("stop", List.of("\n\n"));
        generate(settings("/g").extraBody(extra).build(), 1);

        JsonNode body = requests.get(0).json();
        assertThat(body.get("seed").asInt()).isEqualTo(3);
        assertThat(body.get("temperature").asDouble()).isEqualTo(0.1);
        assertThat(body.has("top_k")).isFalse();
        assertThat(body.get("stop").get(0).asText()).isEqualTo("\n\n");
        assertThat(body.get("top_p").asDouble()).isEqualTo(0.9);
    }

    // ------------------------------------------------------------------ stop strings

    private static final Sampling STOPPING = new Sampling(64, 0.7, 0.9, 20, List.of("\n\n", "</answer>"));

    /** One request of {@code format} with {@link #STOPPING}, answered by {@code reply}; its body. */
    private JsonNode stopBody(ApiFormat format, String reply) {
        replies = r -> Reply.ok(reply);
        try (ApiComparator comparator = new ApiComparator(settings("/x").format(format).model("m").build())) {
            comparator.generate(PROMPT, 0, 1, ITEM, STOPPING);
        }
        return requests.get(requests.size() - 1).json();
    }

    @Test
    void stopStringsGoAsEachFormatsOwnFieldAndOnlyWhenSet() {
        JsonNode expected = JSON.valueToTree(List.of("\n\n", "</answer>"));
        assertThat(stopBody(ApiFormat.GENERIC, "{\"completions\": [\"a\"]}").get("stop_strings")).isEqualTo(expected);
        assertThat(stopBody(ApiFormat.OPENAI_CHAT, json(Map.of("choices", List.of(Map.of("message", Map.of("content", "a"))))))
                .get("stop")).isEqualTo(expected);
        assertThat(stopBody(ApiFormat.ANTHROPIC, json(Map.of("content", List.of(Map.of("type", "text", "text", "a")))))
                .get("stop_sequences")).isEqualTo(expected);
        JsonNode responses = stopBody(ApiFormat.OPENAI_RESPONSES, "{\"output_text\": \"a\"}");
        assertThat(responses.has("stop") || responses.has("stop_sequences") || responses.has("stop_strings")).isFalse();
        // without stop strings no format sends the field (bodies as they were)
        replies = r -> Reply.ok("{\"completions\": [\"a\"]}");
        generate(settings("/g").build(), 1);
        assertThat(requests.get(requests.size() - 1).json().has("stop_strings")).isFalse();
    }

    @Test
    void openAiChatRefusesMoreThanFourStopStringsNamingTheFieldUnlessTheExtraBodySetsStop() {
        Sampling five = new Sampling(64, 0.7, 0.9, null, List.of("a", "b", "c", "d", "e"));
        replies = r -> Reply.ok(json(Map.of("choices", List.of(Map.of("message", Map.of("content", "x"))))));
        try (ApiComparator comparator = new ApiComparator(settings("/v1/chat").format(ApiFormat.OPENAI_CHAT).model("m").build())) {
            assertThatThrownBy(() -> comparator.check(five)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("stop_strings holds 5 strings [a, b, c, d, e]")
                    .hasMessageContaining("\"stop\" takes at most 4").hasMessageContaining("comparator_api_extra_body");
            assertThatThrownBy(() -> comparator.generate(PROMPT, 0, 1, ITEM, five))
                    .hasMessageContaining("stop_strings holds 5 strings");
            comparator.check(new Sampling(64, 0.7, 0.9, null, List.of("a", "b", "c", "d"))); // four are taken
        }
        assertThat(requests).isEmpty();
        try (ApiComparator comparator = new ApiComparator(settings("/v1/chat").format(ApiFormat.OPENAI_CHAT).model("m")
                .extraBody(Map.of("stop", List.of("a", "b", "c", "d", "e", "f"))).build())) {
            assertThat(comparator.generate(PROMPT, 0, 1, ITEM, five)).containsExactly("x");
        }
        assertThat(requests.get(0).json().get("stop")).hasSize(6);
    }

    @Test
    void openAiResponsesCutsEachCompletionBeforeTheFirstStopString() {
        // first: "</answer>" at 3 comes before "\n\n" at 13, so cut at 3, the string left out as the chat API
        // does; third: "\n\n" at 1 before "</answer>" at 4
        replies = inTurn(Reply.ok("{\"output_text\": \"abc</answer>d\\n\\ne\"}"), Reply.ok("{\"output_text\": \"no stop\"}"),
                Reply.ok("{\"output_text\": \"x\\n\\ny</answer>\"}"));
        try (ApiComparator comparator = new ApiComparator(settings("/r").format(ApiFormat.OPENAI_RESPONSES).model("m").build())) {
            assertThat(comparator.generate(PROMPT, 0, 3, ITEM, STOPPING)).containsExactly("abc", "no stop", "x");
            assertThat(comparator.generate(PROMPT, 0, 1, ITEM, SAMPLING)).containsExactly("x\n\ny</answer>");
        }
        // the other formats leave the cutting to the API: a generic server's text is taken as it comes
        replies = r -> Reply.ok("{\"completions\": [\"abc</answer>d\"]}");
        try (ApiComparator comparator = new ApiComparator(settings("/g").build())) {
            assertThat(comparator.generate(PROMPT, 0, 1, ITEM, STOPPING)).containsExactly("abc</answer>d");
        }
    }

    // ------------------------------------------------------------------ reading the generic response

    @Test
    void genericWalksADottedResponseFieldAndReadsEveryElementShape() {
        replies = r -> Reply.ok(json(Map.of("data", Map.of("outputs", List.of("s", Map.of("text", "t"),
                Map.of("content", "c"), Map.of("completion", "p"), Map.of("output", "o"),
                Map.of("message", Map.of("content", "m")))))));
        assertThat(generate(settings("/g").responseField("data.outputs").build(), 6))
                .containsExactly("s", "t", "c", "p", "o", "m");
    }

    @Test
    void genericResponseFieldMayIndexAList() {
        replies = r -> Reply.ok("{\"results\": [{\"texts\": [\"a\", \"b\"]}]}");
        assertThat(generate(settings("/g").responseField("results.0.texts").build(), 2)).containsExactly("a", "b");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"responses\": [\"r\"]}                  | r",
            "{\"outputs\": [{\"text\": \"o\"}]}        | o",
            "{\"choices\": [{\"message\": {\"content\": \"c\"}}]} | c",
            "{\"completions\": \"only\"}               | only",
            "{\"data\": null, \"completions\": [\"f\"]} | f"})
    void genericFallsBackToTheUsualTopLevelFields(String response, String expected) {
        replies = r -> Reply.ok(response);
        assertThat(generate(settings("/g").responseField("data.outputs").build(), 1)).containsExactly(expected);
    }

    @Test
    void missingCompletionsNameTheResponseField() {
        replies = r -> Reply.ok("{\"result\": {\"items\": [\"a\"]}}");
        assertThatThrownBy(() -> generate(settings("/g").responseField("data.outputs").build(), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"data.outputs\" (comparator_api_response_field)")
                .hasMessageContaining("completions, responses, outputs, choices")
                .hasMessageContaining("{\"result\":{\"items\":[\"a\"]}}");

        replies = r -> Reply.ok("{\"completions\": [\"a\", {\"score\": 1}]}");
        assertThatThrownBy(() -> generate(settings("/g").build(), 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("completions[1] without text");

        replies = r -> Reply.ok("{\"choices\": [{\"message\": {\"content\": null}}]}");
        assertThatThrownBy(() -> generate(settings("/c").format(ApiFormat.OPENAI_CHAT).model("m").build(), 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("choices[0] without text")
                .hasMessageContaining("choices[i].message.content");
    }

    @Test
    void moreCompletionsThanAskedAreCutAndFewerAreAnError() {
        replies = r -> Reply.ok("{\"completions\": [\"a\", \"b\", \"c\", \"d\"]}");
        assertThat(generate(settings("/g").build(), 2)).containsExactly("a", "b");

        replies = r -> Reply.ok("{\"completions\": [\"a\"]}");
        assertThatThrownBy(() -> generate(settings("/g").build(), 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("returned 1 completion(s) for a request of 3")
                .hasMessageContaining("comparator_api_max_n_per_request");
    }

    @Test
    void malformedBodiesAreArgumentErrorsWithAnExcerpt() {
        for (String body : List.of("<html>busy</html>", "{\"completions\": [\"a\"]} trailing", "")) {
            replies = r -> Reply.ok(body);
            Throwable thrown = catchThrowable(() -> generate(settings("/g").build(), 1));
            assertThat(thrown).as(body).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("comparator_api_response_field");
            assertThat(thrown.getMessage()).as(body).contains(body.isEmpty() ? "(empty body)" : body.substring(0, 6));
        }
        assertThat(requests).hasSize(3); // never retried
    }

    // ------------------------------------------------------------------ errors and retries

    @Test
    void paymentRequiredIsAStateErrorAndNotRetried() {
        replies = r -> Reply.of(402, "{\"error\": \"Insufficient Balance\"}");
        assertThatThrownBy(() -> generate(settings("/g").retries(3).build(), 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("payment required (402)")
                .hasMessageContaining("check the account's credit")
                .hasMessageContaining("Insufficient Balance");
        assertThat(requests).hasSize(1);
    }

    @Test
    void serverErrorIsRetriedThenSucceeds() {
        replies = inTurn(Reply.of(500, "oops"), Reply.ok("{\"completions\": [\"a\"]}"));
        assertThat(generate(settings("/g").build(), 1)).containsExactly("a");
        assertThat(requests).hasSize(2);
    }

    @ParameterizedTest
    @CsvSource({"503, 2", "429, 0"})
    void retryableStatusesGiveUpAfterTheRetries(int status, int retries) {
        replies = r -> Reply.of(status, "slow down");
        assertThatThrownBy(() -> generate(settings("/g").retries(retries).build(), 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("HTTP " + status + ": slow down")
                .hasMessageContaining("gave up after " + (retries + 1) + " attempt(s) (comparator_api_retries=" + retries);
        assertThat(requests).hasSize(retries + 1);
    }

    @Test
    void otherClientErrorsAreArgumentErrorsWithTheBodysStartAndNotRetried() {
        String body = "x".repeat(499) + "<END" + "y".repeat(200);
        replies = r -> Reply.of(400, body);
        Throwable thrown = catchThrowable(() -> generate(settings("/g").build(), 1));
        assertThat(thrown).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("HTTP 400")
                .hasMessageContaining(body.substring(0, 500));
        assertThat(thrown.getMessage()).doesNotContain(body.substring(0, 501));
        assertThat(requests).hasSize(1);
    }

    @Test
    void redirectsAreNotFollowed() {
        replies = r -> new Reply(307, "", 0, Map.of("Location", "https://elsewhere.example/v1"));
        assertThatThrownBy(() -> generate(settings("/g").apiKey(KEY).build(), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("HTTP 307").hasMessageContaining("https://elsewhere.example/v1")
                .hasMessageContaining("comparator_api_url");
        assertThat(requests).hasSize(1);
    }

    @Test
    void aSlowReplyTimesOutIsRetriedThenFails() {
        replies = r -> new Reply(200, "{\"completions\": [\"late\"]}", 5_000, Map.of());
        long start = System.nanoTime();
        assertThatThrownBy(() -> generate(settings("/g").timeoutSeconds(0.3).retries(1).build(), 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("timed out after 0.3 s (comparator_api_timeout)")
                .hasMessageContaining("gave up after 2 attempt(s)");
        assertThat((System.nanoTime() - start) / 1e9).isLessThan(4.0);
        assertThat(requests).hasSize(2);
    }

    // ------------------------------------------------------------------ bounded responses

    /** Serves {@code handler} at {@code path}, outside the recorded replies; its thread is interrupted at the end. */
    private String serveRaw(String path, com.sun.net.httpserver.HttpHandler handler) {
        server.createContext(path, handler);
        return path;
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static double secondsSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /**
     * One ordinary round trip first, so that the JDK's HTTP classes are loaded before a test whose
     * short timeout must be spent on the body alone, even on a loaded machine.
     */
    private void warmUp() {
        replies = r -> Reply.ok("{\"completions\": [\"warm\"]}");
        assertThat(generate(settings("/warm").build(), 1)).containsExactly("warm");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void headersThenSilenceTimesOutWithinTheTimeoutNamingTheEndpoint() {
        String path = serveRaw("/silent", exchange -> {
            exchange.sendResponseHeaders(200, 100);
            exchange.getResponseBody().write("{\"complete".getBytes(StandardCharsets.UTF_8)); // 10 of the 100 bytes
            exchange.getResponseBody().flush();
            sleepQuietly(60_000);
            exchange.close();
        });
        warmUp();
        long start = System.nanoTime();
        Throwable thrown = catchThrowable(() -> generate(settings(path).apiKey(KEY).timeoutSeconds(2).retries(0).build(), 1));
        assertThat(secondsSince(start)).isLessThan(2 + 5.0); // the timeout, and slack for a slow machine
        assertThat(thrown).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("POST http://127.0.0.1:" + server.getAddress().getPort() + "/silent")
                .hasMessageContaining("timed out after 2 s (comparator_api_timeout, which bounds the whole response")
                .hasMessageContaining("10 byte(s)");
        assertThat(everyMessage(thrown)).doesNotContain(KEY);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aChunkedBodyDrippedFasterThanTheTimeoutStillEndsAtTheDeadline() {
        // a byte every 0.2 s: no single wait reaches the 2 s timeout, only the whole response does
        String path = serveRaw("/drip", exchange -> {
            exchange.sendResponseHeaders(200, 0);
            try (exchange) {
                while (!Thread.currentThread().isInterrupted()) {
                    exchange.getResponseBody().write(' ');
                    exchange.getResponseBody().flush();
                    sleepQuietly(200);
                }
            } catch (IOException e) {
                // the client hung up
            }
        });
        warmUp();
        long start = System.nanoTime();
        Throwable thrown = catchThrowable(() -> generate(settings(path).timeoutSeconds(2).retries(0).build(), 1));
        assertThat(secondsSince(start)).isLessThan(2 + 5.0);
        assertThat(thrown).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("/drip")
                .hasMessageContaining("timed out after 2 s")
                .hasMessageContaining("not complete by the response's deadline");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void anEndlessBodyFailsAtTheCapWithoutRetryOrBufferingIt() throws InterruptedException {
        java.util.concurrent.atomic.AtomicLong written = new java.util.concurrent.atomic.AtomicLong();
        AtomicInteger calls = new AtomicInteger();
        java.util.concurrent.CountDownLatch hungUp = new java.util.concurrent.CountDownLatch(1);
        String path = serveRaw("/endless", exchange -> {
            calls.incrementAndGet();
            byte[] chunk = "{\"completions\": [\"".concat("a".repeat(65_000)).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, 0);
            try (exchange) {
                while (true) {
                    exchange.getResponseBody().write(chunk);
                    written.addAndGet(chunk.length);
                }
            } catch (IOException e) {
                hungUp.countDown(); // the client closed the connection
            }
        });
        Throwable thrown = catchThrowable(() -> generate(settings(path).maxResponseBytes(1 << 20).retries(3)
                .timeoutSeconds(20).build(), 1));
        assertThat(thrown).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("/endless")
                .hasMessageContaining("more than 1048576 bytes (comparator_api_max_response_bytes=1048576")
                .hasMessageNotContaining("timed out");
        assertThat(calls).hasValue(1);
        // the client stopped reading at the cap: the server's writes fail once the socket buffers are full
        assertThat(hungUp.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(written.get()).isLessThan(64L << 20);

        // a Content-Length over the cap fails before any of the body is read
        replies = r -> Reply.ok("{\"completions\": [\"" + "b".repeat(2000) + "\"]}");
        assertThatThrownBy(() -> generate(settings("/g").maxResponseBytes(1000).build(), 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("more than 1000 bytes")
                .hasMessageContaining("Content-Length");
        assertThat(requests).hasSize(1);
    }

    /** Runs one generate call against {@code settings}, recording the waits instead of sleeping. */
    private static List<java.time.Duration> waitsOf(ApiComparatorSettings settings, java.time.Clock clock) {
        List<java.time.Duration> waits = new CopyOnWriteArrayList<>();
        try (ApiComparator comparator = new ApiComparator(settings, clock, waits::add)) {
            comparator.generate(PROMPT, 0, 1, ITEM, SAMPLING);
        }
        return waits;
    }

    @Test
    void retryAfterIsHonouredInSecondsOrAsADateAndCapped() {
        java.time.Clock clock = java.time.Clock.fixed(java.time.Instant.parse("2025-01-01T00:00:00Z"),
                java.time.ZoneOffset.UTC);
        Reply ok = Reply.ok("{\"completions\": [\"a\"]}");
        Function<String, Reply> busy = after -> new Reply(429, "slow down", 0, Map.of("Retry-After", after));

        replies = inTurn(busy.apply("7"), ok);
        assertThat(waitsOf(settings("/g").timeoutSeconds(100).build(), clock)).containsExactly(java.time.Duration.ofSeconds(7));
        replies = inTurn(new Reply(503, "maintenance", 0, Map.of("Retry-After", "Wed, 01 Jan 2025 00:00:05 GMT")), ok);
        assertThat(waitsOf(settings("/g").timeoutSeconds(100).build(), clock)).containsExactly(java.time.Duration.ofSeconds(5));
        // capped at MAX_RETRY_AFTER, and never beyond the timeout
        replies = inTurn(busy.apply("3600"), ok);
        assertThat(waitsOf(settings("/g").timeoutSeconds(100).build(), clock)).containsExactly(ApiComparator.MAX_RETRY_AFTER);
        replies = inTurn(busy.apply("3600"), ok);
        assertThat(waitsOf(settings("/g").timeoutSeconds(10).build(), clock)).containsExactly(java.time.Duration.ofSeconds(10));
        // no usable header: the backoff, doubled each retry
        replies = inTurn(busy.apply("soon"), Reply.of(500, "oops"), ok);
        assertThat(waitsOf(settings("/g").backoffSeconds(0.25).build(), clock))
                .containsExactly(java.time.Duration.ofMillis(250), java.time.Duration.ofMillis(500));
    }

    @Test
    void aClosedComparatorRefusesToGenerate() {
        ApiComparator comparator = new ApiComparator(settings("/g").build());
        comparator.close();
        assertThatThrownBy(() -> comparator.generate(PROMPT, 0, 1, ITEM, SAMPLING))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(requests).isEmpty();
    }

    // ------------------------------------------------------------------ the key

    @Test
    void theKeyNeverAppearsInTheSettingsOrInAnyErrorEvenWhenEchoed() {
        ApiComparatorSettings settings = settings("/g").apiKey(KEY).headers(Map.of("X-Org-Token", "org-secret-9"))
                .retries(1).build();
        assertThat(settings.toString()).doesNotContain(KEY).doesNotContain("org-secret-9").contains("***");
        assertThat(settings.toMap().toString()).doesNotContain(KEY).doesNotContain("org-secret-9");
        assertThat(settings.toMap().get(ApiComparatorSettings.KEY)).isEqualTo("***");

        List<Function<Recorded, Reply>> echoes = List.of(
                r -> Reply.of(401, "invalid key: " + r.header("Authorization")),
                r -> Reply.of(402, "no credit left for " + r.header("Authorization")),
                r -> Reply.of(500, "crashed on " + r.header("Authorization")),
                r -> Reply.ok("not json: " + r.header("Authorization")),
                r -> Reply.ok("{\"echo\": \"" + r.header("Authorization") + "\"}"),
                r -> Reply.ok("{\"completions\": [{\"k\": \"" + r.header("Authorization") + "\"}]}"),
                r -> new Reply(302, "", 0, Map.of("Location", "https://x.example/?key=" + KEY)));
        for (Function<Recorded, Reply> echo : echoes) {
            replies = echo;
            Throwable thrown = catchThrowable(() -> generate(settings, 1));
            assertThat(thrown).isInstanceOf(RuntimeException.class);
            assertThat(everyMessage(thrown)).doesNotContain(KEY).contains("***");
        }
    }

    @Test
    void aKeyEchoedIntoTheCompletionsNeverLeavesTheComparator() {
        replies = r -> Reply.ok(json(Map.of("completions", List.of("you sent " + r.header("Authorization"), "plain"))));
        assertThat(generate(settings("/g").apiKey(KEY).build(), 2)).containsExactly("you sent Bearer ***", "plain");
        replies = r -> Reply.ok(json(Map.of("content", List.of(Map.of("type", "text", "text", "key " + r.header("x-api-key"))))));
        assertThat(generate(settings("/m").format(ApiFormat.ANTHROPIC).model("claude").apiKey(KEY).build(), 1))
                .containsExactly("key ***");
        // and it is registered, so the run's writers scrub it too
        assertThat(comlrl.net.Secrets.scrub("{\"k\": \"" + KEY + "\"}")).isEqualTo("{\"k\": \"***\"}");
    }

    @Test
    void theKeyComesFromTheNamedEnvironmentVariableWhenNotGiven() {
        replies = r -> Reply.ok("{\"completions\": [\"a\"]}");
        ApiComparatorSettings fromEnv = settings("/g").apiKeyEnv("COMPARATOR_TEST_KEY")
                .environment(Map.of("COMPARATOR_TEST_KEY", "sk-env-456")).build();
        generate(fromEnv, 1);
        assertThat(requests.get(0).header("Authorization")).isEqualTo("Bearer sk-env-456");
        assertThat(fromEnv.toString()).doesNotContain("sk-env-456").contains("COMPARATOR_TEST_KEY");

        ApiComparatorSettings both = settings("/g").apiKey(KEY).apiKeyEnv("COMPARATOR_TEST_KEY")
                .environment(Map.of("COMPARATOR_TEST_KEY", "sk-env-456")).build();
        assertThat(both.resolveApiKey()).isEqualTo(KEY);
        assertThat(settings("/g").build().resolveApiKey()).isNull();
    }

    @Test
    void theKeyVariableIsReadFromTheProcessEnvironmentByDefault() {
        Map.Entry<String, String> variable = System.getenv().entrySet().stream()
                .filter(e -> !e.getValue().isBlank()).findFirst().orElseThrow();
        ApiComparatorSettings settings = settings("/g").apiKeyEnv(variable.getKey()).build();
        assertThat(settings.resolveApiKey()).isEqualTo(variable.getValue().strip());
    }

    @Test
    void aMissingKeyVariableFailsNamingIt() {
        ApiComparatorSettings settings = settings("/g").apiKeyEnv("COMPARATOR_TEST_UNSET_KEY")
                .environment(Map.of()).build();
        assertThatThrownBy(() -> new ApiComparator(settings))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("comparator_api_key_env")
                .hasMessageContaining("COMPARATOR_TEST_UNSET_KEY, which is not set")
                .hasMessageContaining("export COMPARATOR_TEST_UNSET_KEY=");
    }

    // ------------------------------------------------------------------ settings

    @Test
    void fromMapReadsEveryKeyAndDefaultsTheRest() {
        ApiComparatorSettings defaults = ApiComparatorSettings.fromMap(Map.of("comparator_api_url", "https://a.example/g"));
        assertThat(defaults.url()).isEqualTo("https://a.example/g");
        assertThat(defaults.format()).isEqualTo(ApiFormat.GENERIC);
        assertThat(defaults.model()).isNull();
        assertThat(defaults.maxNPerRequest()).isNull();
        assertThat(defaults.timeoutSeconds()).isEqualTo(120.0);
        assertThat(defaults.headers()).isEmpty();
        assertThat(defaults.hasApiKey()).isFalse();
        assertThat(defaults.apiKeyEnv()).isNull();
        assertThat(defaults.apiKeyHeader()).isEqualTo("Authorization");
        assertThat(defaults.apiKeyPrefix()).isEqualTo("Bearer");
        assertThat(defaults.responseField()).isEqualTo("completions");
        assertThat(defaults.extraBody()).isEmpty();
        assertThat(defaults.retries()).isEqualTo(3);
        assertThat(defaults.backoffSeconds()).isEqualTo(1.0);
        assertThat(defaults.maxResponseBytes()).isEqualTo(8L << 20);

        Map<String, Object> config = new HashMap<>();
        config.put("comparator_api_url", "https://api.example/v1/chat");
        config.put("comparator_api_format", " Chat ");
        config.put("comparator_api_model", "m");
        config.put("comparator_api_max_n_per_request", 2);
        config.put("comparator_api_timeout", "30");
        config.put("comparator_api_headers", Map.of("X-Org", "o", "X-Num", 5));
        config.put("comparator_api_key", KEY);
        config.put("comparator_api_key_env", "SOME_VAR");
        config.put("comparator_api_key_header", "api-key");
        config.put("comparator_api_key_prefix", null);
        config.put("comparator_api_response_field", "data.outputs");
        config.put("comparator_api_extra_body", Map.of("seed", 1));
        config.put("comparator_api_retries", 0);
        config.put("comparator_api_backoff", 0.5);
        config.put("comparator_api_max_response_bytes", 4096);
        config.put("comparator_policy", "api"); // not ours: ignored
        ApiComparatorSettings s = ApiComparatorSettings.fromMap(config);
        assertThat(s.format()).isEqualTo(ApiFormat.OPENAI_CHAT);
        assertThat(s.model()).isEqualTo("m");
        assertThat(s.maxNPerRequest()).isEqualTo(2);
        assertThat(s.timeoutSeconds()).isEqualTo(30.0);
        assertThat(s.headers()).containsEntry("X-Org", "o").containsEntry("X-Num", "5");
        assertThat(s.hasApiKey()).isTrue();
        assertThat(s.apiKeyEnv()).isEqualTo("SOME_VAR");
        assertThat(s.apiKeyHeader()).isEqualTo("api-key");
        assertThat(s.apiKeyPrefix()).isEmpty();
        assertThat(s.responseField()).isEqualTo("data.outputs");
        assertThat(s.extraBody()).containsEntry("seed", 1);
        assertThat(s.retries()).isZero();
        assertThat(s.backoffSeconds()).isEqualTo(0.5);
        assertThat(s.maxResponseBytes()).isEqualTo(4096);
        assertThat(s.toMap().keySet()).containsExactlyElementsOf(ApiComparatorSettings.KEYS);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "comparator_api_url         |                    | comparator_api_url is required",
            "comparator_api_url         | ftp://a.example/x  | must be an http:// or https:// URL",
            "comparator_api_url         | http://10.1.2.3/g  | COMLRL_ALLOW_HTTP_ENDPOINT=1",
            "comparator_api_format      | openai             | comparator_api_model is required with comparator_api_format \"openai\"",
            "comparator_api_format      | grpc               | comparator_api_format must be one of",
            "comparator_api_max_n_per_request | 0            | comparator_api_max_n_per_request must be >= 1",
            "comparator_api_timeout     | 0                  | comparator_api_timeout must be a number of seconds > 0",
            "comparator_api_timeout     | soon               | 'comparator_api_timeout' must be a number",
            "comparator_api_headers     | X-Org: o           | 'comparator_api_headers' must be a mapping",
            "comparator_api_key_header  | ' '                | comparator_api_key_header must be a header name",
            "comparator_api_response_field | data..outputs   | comparator_api_response_field must be a field name or a dotted path",
            "comparator_api_retries     | -1                 | comparator_api_retries must be >= 0",
            "comparator_api_backoff     | -1                 | comparator_api_backoff must be a number of seconds >= 0",
            "comparator_api_max_response_bytes | 0           | comparator_api_max_response_bytes must be a number of bytes >= 1",
            "comparator_api_max_response_bytes | 1.5         | 'comparator_api_max_response_bytes' must be an integer",
            "comparator_api_modle       | m                  | did you mean 'comparator_api_model'?"})
    void fromMapNamesTheKeyOfAnInvalidValue(String key, String value, String message) {
        Map<String, Object> config = new HashMap<>();
        config.put("comparator_api_url", "https://api.example/g");
        config.put(key, value);
        assertThatThrownBy(() -> ApiComparatorSettings.fromMap(config))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void restrictedHeadersAndNonStringKeysAreRefusedWithoutShowingTheKey() {
        assertThatThrownBy(() -> settings("/g").headers(Map.of("Host", "x")).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("comparator_api_headers: header 'Host' cannot be sent");
        assertThatThrownBy(() -> ApiComparatorSettings.fromMap(Map.of("comparator_api_url", "https://a.example",
                "comparator_api_key", 123456789)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'comparator_api_key' must be a string")
                .message().doesNotContain("123456789");
    }

    @Test
    void plainHttpGoesToLoopbackAlwaysAndElsewhereOnlyWhenAllowed() {
        for (String url : List.of("http://127.0.0.1:9/g", "http://localhost/g", "http://[::1]:8/g", "https://a.example/g")) {
            assertThat(ApiComparatorSettings.builder(url).environment(Map.of()).build().url()).isEqualTo(url);
        }
        assertThatThrownBy(() -> ApiComparatorSettings.builder("http://comparator.lan:8000/g").environment(Map.of())
                .build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("comparator_api_url is plain http to comparator.lan")
                .hasMessageContaining("COMLRL_ALLOW_HTTP_ENDPOINT=1");
        assertThat(ApiComparatorSettings.builder("http://comparator.lan:8000/g")
                .environment(Map.of("COMLRL_ALLOW_HTTP_ENDPOINT", "1")).build().url())
                .isEqualTo("http://comparator.lan:8000/g");
    }

    @Test
    void formatsParseTheirNamesAndAliases() {
        assertThat(ApiFormat.parse(null)).isEqualTo(ApiFormat.GENERIC);
        assertThat(ApiFormat.parse(" GENERIC ")).isEqualTo(ApiFormat.GENERIC);
        for (String name : List.of("openai", "openai_chat", "Chat")) {
            assertThat(ApiFormat.parse(name)).isEqualTo(ApiFormat.OPENAI_CHAT);
        }
        for (String name : List.of("anthropic", "anthropic_messages", "messages")) {
            assertThat(ApiFormat.parse(name)).isEqualTo(ApiFormat.ANTHROPIC);
        }
        for (String name : List.of("openai_responses", "responses", "codex")) {
            assertThat(ApiFormat.parse(name)).isEqualTo(ApiFormat.OPENAI_RESPONSES);
        }
        assertThatThrownBy(() -> ApiFormat.parse("grpc")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("comparator_api_format must be one of: generic, openai (or openai_chat, chat), anthropic "
                        + "(or anthropic_messages, messages), openai_responses (or responses, codex) (got \"grpc\")");
    }
}
