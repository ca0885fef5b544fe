package comlrl.generation.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.net.BodyTimeoutException;
import comlrl.net.BodyTooLargeException;
import comlrl.net.ResponseBodies;
import comlrl.net.RetryAfter;
import comlrl.net.Secrets;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The "api" comparator policy's client: asks an external model over HTTP for candidate completions
 * of one agent's prompt. Every request is a JSON {@code POST} to {@code comparator_api_url}.
 *
 * <p><b>Payloads</b> ({@code n} = completions asked for by that request; {@code ...extra_body} =
 * {@code comparator_api_extra_body} added last, replacing a field of the same name, a null value
 * removing it):
 * <pre>
 * generic           {prompt, agent_idx, num_return_sequences: n, max_new_tokens, temperature, top_p,
 *                    top_k, batch_item, model (only when set), stop_strings (only when set), ...extra_body}
 *                   completions: the dotted comparator_api_response_field (e.g. data.outputs),
 *                    else the first of completions, responses, outputs, choices at the top;
 *                    a string is one completion; a list holds strings or objects whose text is
 *                    text, content, completion, output or message.content
 * openai            {model, messages: [{role: user, content: prompt}], n, max_tokens, temperature,
 *                    top_p, stop (only when set), ...extra_body}
 *                                                     completions: choices[i].message.content
 * anthropic         {model, max_tokens, messages: [{role: user, content: prompt}], temperature,
 *                    top_p, stop_sequences (only when set), ...extra_body}, n = 1
 *                                                     completion: content[*].text of type "text", joined
 * openai_responses  {model, input: prompt, max_output_tokens, temperature, top_p, ...extra_body}, n = 1
 *                                                     completion: output_text, else output[*].content[*].text joined
 * </pre>
 * generic and openai ask for all remaining candidates at once, or at most
 * {@code comparator_api_max_n_per_request} (openai on a host named *deepseek*: 1, as DeepSeek
 * rejects n &gt; 1), repeating requests until {@code numCandidates} are collected; anthropic and
 * openai_responses send one request per candidate. A request answered with fewer completions than
 * it asked for is an error; extra ones are dropped.
 *
 * <p><b>Stop strings</b> (the agent's {@code stop_strings}, {@link Sampling#stop()}) go as
 * {@code stop_strings} (generic), {@code stop} (openai; the chat completions API takes at most 4,
 * so more are refused, naming the field, unless {@code comparator_api_extra_body} sets {@code stop}
 * itself, e.g. for a server that takes more) and {@code stop_sequences} (anthropic). The Responses API has no such parameter: with openai_responses
 * each completion is cut here before the first occurrence of any of the strings, as the chat API
 * would end it. OpenAI's and Anthropic's APIs leave the stop string out of the text, where a local
 * generation keeps the token that completes it; a generic server does as it does.
 *
 * <p><b>Headers</b>: {@code Content-Type: application/json}; the key (see
 * {@link ApiComparatorSettings}) as {@code <comparator_api_key_header>: <prefix> <key>} (no space
 * when the prefix is empty), except for anthropic: {@code x-api-key: <key>} and
 * {@code anthropic-version: 2023-06-01}; then {@code comparator_api_headers}, replacing ours of the
 * same name. Redirects are not followed, so the key reaches no other address.
 *
 * <p><b>Limits</b>: each request must be answered whole, body included, within
 * {@code comparator_api_timeout} of being sent: a server that sends its headers and then stalls,
 * or drips its body, times out then like one that never answers. A body larger than
 * {@code comparator_api_max_response_bytes} (by its Content-Length, or once that many bytes have
 * come) is an {@link IllegalArgumentException} at once, not retried, and is never held whole; the
 * body of an error status is read only up to its first {@value #ERROR_BODY_BYTES} bytes.
 *
 * <p><b>Errors and retries</b>: a request that times out, cannot connect, breaks off, or is answered
 * 429 or 5xx is sent again up to {@code comparator_api_retries} times; then an
 * {@link IllegalStateException}. The wait before retry {@code a = 0, 1, ...} is the answer's
 * {@code Retry-After} (seconds or an HTTP date) when it has one, capped at
 * {@link #MAX_RETRY_AFTER} and at {@code comparator_api_timeout}, else {@code backoff * 2^a}
 * seconds. HTTP 402 is an {@link IllegalStateException} at once (payment required: the account's
 * credit). Any other non-2xx status is an {@link IllegalArgumentException} with the status and the
 * first 500 characters of the body; so is a body that is not JSON or lacks the completions (with a
 * short excerpt). Every message names the endpoint.
 *
 * <p><b>The key</b> is registered with {@link Secrets} when the comparator is built, so no file or
 * console line the run writes contains it, and is replaced by {@code ***} in every message and in
 * the completions themselves (a server that echoes request headers into its answer cannot carry
 * it into the rollouts, the replay shards or the checkpoints).
 *
 * <p>Thread-safe: agents may call {@link #generate} concurrently. {@link #close()} stops the
 * client's threads.
 */
public final class ApiComparator implements AutoCloseable {
    /** The Messages API version sent to anthropic endpoints. */
    public static final String ANTHROPIC_VERSION = "2023-06-01";

    private static final int STATUS_EXCERPT = 500;
    /** How much of an error status's body is read, for its excerpt. */
    static final int ERROR_BODY_BYTES = 64 << 10;
    /** The longest wait a {@code Retry-After} header gets (and never longer than comparator_api_timeout). */
    public static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(60);

    /**
     * The sampling settings sent with each request.
     *
     * @param maxNewTokens completion length limit (max_new_tokens / max_tokens / max_output_tokens); >= 1
     * @param temperature  >= 0
     * @param topP         nucleus mass, in (0, 1]
     * @param topK         top-k, sent by the generic format only; null = none; >= 0
     * @param stop         stop strings (see the class docs); null or empty = none; each non-empty
     */
    public record Sampling(int maxNewTokens, double temperature, double topP, Integer topK, List<String> stop) {
        public Sampling {
            check(maxNewTokens >= 1, "max_new_tokens must be >= 1 (got " + maxNewTokens + ")");
            check(Double.isFinite(temperature) && temperature >= 0, "temperature must be >= 0 (got " + temperature + ")");
            check(topP > 0 && topP <= 1, "top_p must be in (0, 1] (got " + topP + ")");
            check(topK == null || topK >= 0, "top_k must be >= 0 or null (got " + topK + ")");
            stop = stop == null ? List.of() : List.copyOf(stop);
            check(stop.stream().noneMatch(String::isEmpty), "stop_strings must hold non-empty strings (got " + stop + ")");
        }

        /** Without stop strings. */
        public Sampling(int maxNewTokens, double temperature, double topP, Integer topK) {
            this(maxNewTokens, temperature, topP, topK, null);
        }
    }

    private final ApiComparatorSettings settings;
    private final String apiKey;
    private final ApiCodec codec;
    private final int perRequest;
    private final ExecutorService executor;
    private final HttpClient client;
    private final Clock clock;
    private final Sleeper sleeper;
    private volatile boolean closed;

    /** Waits between attempts; tests record the waits instead. */
    @FunctionalInterface
    interface Sleeper {
        void sleep(Duration duration) throws InterruptedException;
    }

    /**
     * A client for {@code settings}; reads the API key now.
     *
     * @throws IllegalArgumentException when {@code comparator_api_key_env} names an unset variable,
     *                                  or the key cannot be sent in a header
     */
    public ApiComparator(ApiComparatorSettings settings) {
        this(settings, Clock.systemUTC(), duration -> Thread.sleep(duration.toMillis(), duration.toNanosPart() % 1_000_000));
    }

    /** As {@link #ApiComparator(ApiComparatorSettings)}, reading HTTP dates against {@code clock} and waiting with {@code sleeper}. */
    ApiComparator(ApiComparatorSettings settings, Clock clock, Sleeper sleeper) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        this.apiKey = settings.resolveApiKey();
        if (apiKey != null && !apiKey.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
            throw new IllegalArgumentException("the comparator API key (" + ApiComparatorSettings.KEY + " or "
                    + ApiComparatorSettings.KEY_ENV + ") holds characters a header cannot carry (a line break, "
                    + "a control or non-ASCII character); check it was copied whole and alone");
        }
        Secrets.register(apiKey);
        this.codec = new ApiCodec(settings, this::scrub);
        Integer cap = settings.maxNPerRequest();
        boolean deepseek = settings.uri().getHost().toLowerCase(Locale.ROOT).contains("deepseek");
        this.perRequest = switch (settings.format()) {
            case GENERIC -> cap != null ? cap : Integer.MAX_VALUE;
            case OPENAI_CHAT -> cap != null ? cap : deepseek ? 1 : Integer.MAX_VALUE;
            case ANTHROPIC, OPENAI_RESPONSES -> 1;
        };
        Duration timeout = timeout();
        this.executor = Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "comparator-api");
            thread.setDaemon(true);
            return thread;
        });
        // plain http: HTTP/1.1 without the h2c upgrade request, which some local servers mishandle
        HttpClient.Version version = settings.uri().getScheme().equalsIgnoreCase("http")
                ? HttpClient.Version.HTTP_1_1 : HttpClient.Version.HTTP_2;
        this.client = HttpClient.newBuilder().executor(executor).followRedirects(HttpClient.Redirect.NEVER)
                .version(version).connectTimeout(timeout).build();
    }

    public ApiComparatorSettings settings() {
        return settings;
    }

    /**
     * Refuses sampling settings this comparator's API cannot take (more stop strings than the chat
     * completions API's {@code stop} holds), so a run can check them before any model loads.
     *
     * @throws IllegalArgumentException naming the field and the fix
     */
    public void check(Sampling sampling) {
        codec.checkStop(sampling.stop());
    }

    /** The most completions one request asks for (see the class docs). */
    int maxPerRequest() {
        return perRequest;
    }

    /**
     * Exactly {@code numCandidates} completions of {@code prompt}, in the order the API gave them.
     *
     * @param agentIndex the agent whose prompt this is (sent by the generic format as agent_idx)
     * @param batchItem  the dataset item (sent by the generic format as batch_item); may be null
     * @throws IllegalArgumentException for a rejected request or an unreadable response (see the class docs)
     * @throws IllegalStateException    for 402, or when the retries are spent
     */
    public List<String> generate(String prompt, int agentIndex, int numCandidates, Map<String, Object> batchItem,
                                 Sampling sampling) {
        Objects.requireNonNull(prompt, "prompt");
        Objects.requireNonNull(sampling, "sampling");
        check(agentIndex >= 0, "agentIndex must be >= 0 (got " + agentIndex + ")");
        check(numCandidates >= 0, "numCandidates must be >= 0 (got " + numCandidates + ")");
        if (closed) {
            throw new IllegalStateException("this ApiComparator is closed");
        }
        List<String> completions = new ArrayList<>(numCandidates);
        while (completions.size() < numCandidates) {
            int n = Math.min(numCandidates - completions.size(), perRequest);
            List<String> received = codec.completions(post(codec.payload(prompt, agentIndex, n, batchItem, sampling)));
            if (received.size() < n) {
                throw new IllegalArgumentException(codec.where() + " returned " + received.size() + " completion(s) "
                        + "for a request of " + n + " (" + completions.size() + " of " + numCandidates + " collected "
                        + "before it); if the server caps n, set " + ApiComparatorSettings.MAX_N_PER_REQUEST);
            }
            // a server that echoes the request's headers must not carry the key into the rollouts
            received.subList(0, n).forEach(text -> completions.add(scrub(codec.cutAtStop(text, sampling.stop()))));
        }
        return List.copyOf(completions);
    }

    /** Stops the client's threads; later calls to {@link #generate} fail. */
    @Override
    public void close() {
        closed = true;
        executor.shutdownNow();
    }

    private HttpRequest request(ObjectNode body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(settings.uri()).timeout(timeout())
                .header("Content-Type", "application/json")
                .header("Accept", "application/json");
        if (settings.format() == ApiFormat.ANTHROPIC) {
            request.header("anthropic-version", ANTHROPIC_VERSION);
            if (apiKey != null) {
                request.header("x-api-key", apiKey);
            }
        } else if (apiKey != null) {
            String prefix = settings.apiKeyPrefix();
            request.header(settings.apiKeyHeader(), prefix.isEmpty() ? apiKey : prefix + " " + apiKey);
        }
        settings.headers().forEach(request::setHeader);
        try {
            return request.POST(HttpRequest.BodyPublishers.ofString(ApiCodec.JSON.writeValueAsString(body),
                    StandardCharsets.UTF_8)).build();
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("the comparator API request cannot be written as JSON: "
                    + e.getOriginalMessage(), e);
        }
    }

    /** Sends {@code body}, retrying as the class docs say, and returns the parsed 2xx response. */
    private JsonNode post(ObjectNode body) {
        HttpRequest request = request(body);
        for (int attempt = 0; ; attempt++) {
            Retryable failure;
            try {
                return send(request);
            } catch (Retryable e) {
                failure = e;
            }
            if (attempt >= settings.retries()) {
                throw new IllegalStateException(codec.where() + " " + failure.getMessage() + "; gave up after "
                        + (attempt + 1) + " attempt(s) (" + ApiComparatorSettings.RETRIES + "=" + settings.retries()
                        + ")");
            }
            sleep(retryWait(attempt, failure.serverWait));
        }
    }

    /** A failed attempt that may be sent again: why, and the wait its answer asked for (null: none). */
    private static final class Retryable extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient Duration serverWait;

        Retryable(String reason, Duration serverWait) {
            super(reason, null, false, false);
            this.serverWait = serverWait;
        }
    }

    /**
     * One attempt: the parsed 2xx answer, read whole within comparator_api_timeout of sending.
     *
     * @throws Retryable for a timeout, a broken connection, 429 or 5xx
     */
    private JsonNode send(HttpRequest request) throws Retryable {
        long deadline = System.nanoTime() + timeout().toNanos();
        HttpResponse<InputStream> response;
        try {
            response = client.send(request, ResponseBodies.withDeadline(timeout(), deadline));
        } catch (HttpTimeoutException e) {
            throw new Retryable("timed out after " + seconds(settings.timeoutSeconds()) + " s ("
                    + ApiComparatorSettings.TIMEOUT + ")", null);
        } catch (IOException e) {
            throw new Retryable("could not be reached (" + scrub(e.toString()) + ")", null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(codec.where() + ": interrupted while waiting for the response");
        }
        int status = response.statusCode();
        try {
            if (status >= 200 && status < 300) {
                byte[] bytes = ResponseBodies.readAtMost(response, settings.maxResponseBytes());
                return codec.parse(new String(bytes, StandardCharsets.UTF_8));
            }
            String text = errorBody(response);
            if (status != 429 && status < 500) {
                throw statusError(status, response, text);
            }
            Duration serverWait = RetryAfter.parse(response.headers().firstValue("Retry-After").orElse(null),
                    clock.instant()).orElse(null);
            throw new Retryable("answered HTTP " + status + ": " + codec.excerpt(text, STATUS_EXCERPT), serverWait);
        } catch (BodyTooLargeException e) {
            throw new IllegalArgumentException(codec.where() + " answered with more than " + e.limit() + " bytes ("
                    + ApiComparatorSettings.MAX_RESPONSE_BYTES + "=" + settings.maxResponseBytes() + "; "
                    + scrub(e.getMessage()) + "); check the endpoint, or raise "
                    + ApiComparatorSettings.MAX_RESPONSE_BYTES + " if its answers really are that large");
        } catch (BodyTimeoutException e) {
            throw new Retryable("timed out after " + seconds(settings.timeoutSeconds()) + " s ("
                    + ApiComparatorSettings.TIMEOUT + ", which bounds the whole response, body included): "
                    + e.getMessage(), null);
        } catch (InterruptedIOException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(codec.where() + ": interrupted while reading the response");
        } catch (IOException e) {
            throw new Retryable("broke off while sending its answer (" + scrub(e.toString()) + ")", null);
        }
    }

    /** The start of an error status's body, for messages; what cannot be read is left out. */
    private static String errorBody(HttpResponse<InputStream> response) throws InterruptedIOException {
        try (InputStream in = response.body()) {
            return new String(in.readNBytes(ERROR_BODY_BYTES), StandardCharsets.UTF_8);
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * The wait before retry {@code attempt}: the server's {@code Retry-After}, at most
     * {@link #MAX_RETRY_AFTER} and comparator_api_timeout; else {@code backoff * 2^attempt} seconds.
     */
    Duration retryWait(int attempt, Duration serverWait) {
        if (serverWait != null) {
            Duration cap = MAX_RETRY_AFTER.compareTo(timeout()) < 0 ? MAX_RETRY_AFTER : timeout();
            return serverWait.compareTo(cap) < 0 ? serverWait : cap;
        }
        return Duration.ofNanos((long) (settings.backoffSeconds() * Math.pow(2, attempt) * 1e9));
    }

    private RuntimeException statusError(int status, HttpResponse<?> response, String text) {
        String body = codec.excerpt(text, STATUS_EXCERPT);
        if (status == 402) {
            return new IllegalStateException(codec.where() + " answered payment required (402): check the "
                    + "account's credit for this API key (server said: " + body + ")");
        }
        String hint = switch (status) {
            case 301, 302, 303, 307, 308 -> "a redirect to " + scrub(response.headers().firstValue("Location")
                    .orElse("?")) + ", not followed so the key goes nowhere else: set " + ApiComparatorSettings.URL
                    + " to the final address";
            case 401, 403 -> "check the key: " + ApiComparatorSettings.KEY + " or " + ApiComparatorSettings.KEY_ENV
                    + ", and " + ApiComparatorSettings.KEY_HEADER + "/" + ApiComparatorSettings.KEY_PREFIX;
            case 404, 405 -> "check " + ApiComparatorSettings.URL + " and " + ApiComparatorSettings.FORMAT;
            default -> "the server rejected the request; check " + ApiComparatorSettings.MODEL + " and "
                    + ApiComparatorSettings.EXTRA_BODY;
        };
        return new IllegalArgumentException(codec.where() + " answered HTTP " + status + " (" + hint + "): " + body);
    }

    // ------------------------------------------------------------------ helpers


    /** {@code text} with the key (however short) and every other registered secret replaced by {@code ***}. */
    private String scrub(String text) {
        String clean = Secrets.scrub(text);
        return apiKey == null || clean == null ? clean : clean.replace(apiKey, ApiComparatorSettings.HIDDEN);
    }

    private Duration timeout() {
        return Duration.ofNanos(Math.max(1L, (long) (settings.timeoutSeconds() * 1e9)));
    }

    private static String seconds(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    private void sleep(Duration wait) {
        try {
            sleeper.sleep(wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(codec.where() + ": interrupted while waiting to retry");
        }
    }

    /** @throws IllegalArgumentException with {@code message} unless {@code ok} */
    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
