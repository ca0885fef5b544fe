package comlrl.trainers.preference.comparator;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.model.io.HubCache;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpRequest;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The settings of an {@link ApiComparator}: the {@code comparator_api_*} keys of an iterative
 * config, immutable, checked when built ({@link #builder(String)} or {@link #fromMap(Map)}), each
 * problem reported with the key to fix.
 *
 * <p><b>The API key is never shown</b>: {@link #toString()} and {@link #toMap()} write
 * {@code "***"} for it (and for every value of {@link #headers()}, which often carry credentials
 * too). It is read when an {@link ApiComparator} is built: {@code comparator_api_key} if set, else
 * the environment variable named by {@code comparator_api_key_env} (an error when that variable is
 * unset or blank), else no key is sent.
 *
 * <p><b>Plain http</b> is accepted only to a loopback host (127.x.x.x, ::1, localhost), whose
 * traffic stays on the machine; any other {@code http://} URL needs
 * {@code COMLRL_ALLOW_HTTP_ENDPOINT=1} (or the system property {@code comlrl.allowHttpEndpoint=true}),
 * the switch that also allows a plain-http hub mirror. The prompts, completions and the key then
 * cross the network unencrypted.
 */
public final class ApiComparatorSettings {
    public static final String URL = "comparator_api_url";
    public static final String FORMAT = "comparator_api_format";
    public static final String MODEL = "comparator_api_model";
    public static final String MAX_N_PER_REQUEST = "comparator_api_max_n_per_request";
    public static final String TIMEOUT = "comparator_api_timeout";
    public static final String HEADERS = "comparator_api_headers";
    public static final String KEY = "comparator_api_key";
    public static final String KEY_ENV = "comparator_api_key_env";
    public static final String KEY_HEADER = "comparator_api_key_header";
    public static final String KEY_PREFIX = "comparator_api_key_prefix";
    public static final String RESPONSE_FIELD = "comparator_api_response_field";
    public static final String EXTRA_BODY = "comparator_api_extra_body";
    public static final String RETRIES = "comparator_api_retries";
    public static final String BACKOFF = "comparator_api_backoff";
    public static final String MAX_RESPONSE_BYTES = "comparator_api_max_response_bytes";

    /** The default of {@code comparator_api_max_response_bytes}: 8 MiB, far above any batch of completions. */
    public static final long DEFAULT_MAX_RESPONSE_BYTES = 8L << 20;

    /** Every key {@link #fromMap(Map)} reads: the reference's, in its order, then ours. */
    public static final List<String> KEYS = List.of(URL, FORMAT, MODEL, MAX_N_PER_REQUEST, TIMEOUT, HEADERS, KEY,
            KEY_ENV, KEY_HEADER, KEY_PREFIX, RESPONSE_FIELD, EXTRA_BODY, RETRIES, BACKOFF, MAX_RESPONSE_BYTES);

    static final String HIDDEN = comlrl.net.Secrets.HIDDEN;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String url;
    private final URI uri;
    private final ApiFormat format;
    private final String model;
    private final Integer maxNPerRequest;
    private final double timeoutSeconds;
    private final Map<String, String> headers;
    private final String apiKey;
    private final String apiKeyEnv;
    private final String apiKeyHeader;
    private final String apiKeyPrefix;
    private final String responseField;
    private final Map<String, Object> extraBody;
    private final int retries;
    private final double backoffSeconds;
    private final long maxResponseBytes;
    private final Map<String, String> environment;

    private ApiComparatorSettings(Builder b) {
        environment = b.environment != null ? b.environment : System.getenv();
        url = b.url == null ? null : b.url.trim();
        uri = checkUrl(url, environment);
        format = Objects.requireNonNull(b.format, FORMAT);
        model = b.model == null || b.model.isBlank() ? null : b.model.trim();
        if (format.requiresModel() && model == null) {
            throw new IllegalArgumentException(MODEL + " is required with " + FORMAT + " \"" + format.configName()
                    + "\": set it to a model the API serves (e.g. gpt-4o-mini, claude-sonnet-4-5)");
        }
        maxNPerRequest = b.maxNPerRequest;
        check(maxNPerRequest == null || maxNPerRequest >= 1,
                MAX_N_PER_REQUEST + " must be >= 1 or null (got " + maxNPerRequest + ")");
        timeoutSeconds = b.timeoutSeconds;
        check(Double.isFinite(timeoutSeconds) && timeoutSeconds > 0,
                TIMEOUT + " must be a number of seconds > 0 (got " + timeoutSeconds + ")");
        headers = b.headers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
        headers.forEach((name, value) -> checkHeader(HEADERS, name, value));
        apiKey = b.apiKey == null || b.apiKey.isBlank() ? null : b.apiKey.strip();
        apiKeyEnv = b.apiKeyEnv == null || b.apiKeyEnv.isBlank() ? null : b.apiKeyEnv.trim();
        apiKeyHeader = b.apiKeyHeader == null ? "" : b.apiKeyHeader.trim();
        check(!apiKeyHeader.isEmpty(), KEY_HEADER + " must be a header name, e.g. Authorization or X-Api-Key");
        checkHeader(KEY_HEADER, apiKeyHeader, "value");
        apiKeyPrefix = b.apiKeyPrefix == null ? "" : b.apiKeyPrefix.strip();
        responseField = b.responseField == null ? "" : b.responseField.trim();
        check(!responseField.isEmpty() && !List.of(responseField.split("\\.", -1)).contains(""),
                RESPONSE_FIELD + " must be a field name or a dotted path such as data.outputs (got \""
                        + responseField + "\")");
        extraBody = b.extraBody == null ? Map.of() : jsonCopy(b.extraBody);
        retries = b.retries;
        check(retries >= 0, RETRIES + " must be >= 0 (got " + retries + ")");
        backoffSeconds = b.backoffSeconds;
        check(Double.isFinite(backoffSeconds) && backoffSeconds >= 0,
                BACKOFF + " must be a number of seconds >= 0 (got " + backoffSeconds + ")");
        maxResponseBytes = b.maxResponseBytes;
        check(maxResponseBytes >= 1, MAX_RESPONSE_BYTES + " must be a number of bytes >= 1 (got " + maxResponseBytes
                + "); the default is " + DEFAULT_MAX_RESPONSE_BYTES);
    }

    /** A builder with the defaults below and the endpoint {@code url}. */
    public static Builder builder(String url) {
        return new Builder(url);
    }

    /**
     * Settings from the {@code comparator_api_*} keys of {@code config} (other keys are ignored; an
     * unknown {@code comparator_api_*} key is an error suggesting the closest one). A null value, or
     * "null"/"none"/"~", means the default; for {@code comparator_api_key_prefix} it means no
     * prefix.
     *
     * @throws IllegalArgumentException naming the key whose value is missing or invalid
     */
    public static ApiComparatorSettings fromMap(Map<String, ?> config) {
        return ApiSettingsReader.read(config);
    }

    /** {@code comparator_api_url}: the endpoint every request is POSTed to. Required. */
    public String url() {
        return url;
    }

    URI uri() {
        return uri;
    }

    /** {@code comparator_api_format}: the wire format. Default {@link ApiFormat#GENERIC}. */
    public ApiFormat format() {
        return format;
    }

    /**
     * {@code comparator_api_model}: the model name sent as {@code model}; null when unset (then the
     * generic format sends none). Required by every format but generic.
     */
    public String model() {
        return model;
    }

    /**
     * {@code comparator_api_max_n_per_request}: at most this many completions asked for in one
     * request (generic and openai formats; further requests collect the rest); null = all at once
     * (except for an openai endpoint on a deepseek host, which gets 1). Default null; >= 1.
     */
    public Integer maxNPerRequest() {
        return maxNPerRequest;
    }

    /**
     * {@code comparator_api_timeout}: seconds each request may take, from sending it to the last
     * byte of the answer (connection, headers and body: a server that stalls or drips its body fails
     * then too). Default 120; > 0.
     */
    public double timeoutSeconds() {
        return timeoutSeconds;
    }

    /** {@code comparator_api_headers}: extra request headers, replacing ours of the same name. Default none. */
    public Map<String, String> headers() {
        return headers;
    }

    /** Whether {@code comparator_api_key} is set (the key itself stays inside the package). */
    public boolean hasApiKey() {
        return apiKey != null;
    }

    String apiKey() {
        return apiKey;
    }

    /** {@code comparator_api_key_env}: the environment variable holding the key; null when unset. */
    public String apiKeyEnv() {
        return apiKeyEnv;
    }

    /**
     * {@code comparator_api_key_header}: the header carrying the key (not for anthropic, which
     * always sends {@code x-api-key}). Default "Authorization".
     */
    public String apiKeyHeader() {
        return apiKeyHeader;
    }

    /**
     * {@code comparator_api_key_prefix}: written before the key, with one space, in
     * {@link #apiKeyHeader()}; empty = the bare key. Default "Bearer".
     */
    public String apiKeyPrefix() {
        return apiKeyPrefix;
    }

    /**
     * {@code comparator_api_response_field}: where the generic format's completions are, a dotted
     * path from the top of the response ({@code data.outputs}; a number indexes a list). Default
     * "completions".
     */
    public String responseField() {
        return responseField;
    }

    /**
     * {@code comparator_api_extra_body}: fields added to every request's JSON last, replacing ours of
     * the same name; a null value removes that field (e.g. {@code top_p} for a model that refuses
     * it). Default none. A deep copy, unmodifiable at the top level.
     */
    public Map<String, Object> extraBody() {
        return extraBody;
    }

    /**
     * {@code comparator_api_retries} (ours): how many times a request that timed out, could not
     * connect, broke off, or got HTTP 429 or 5xx is sent again. Default 3; >= 0.
     */
    public int retries() {
        return retries;
    }

    /**
     * {@code comparator_api_backoff} (ours): the wait before retry {@code a} (0-based) is
     * {@code backoff * 2^a} seconds, unless the answer carried {@code Retry-After} (see
     * {@link ApiComparator}). Default 1.0; >= 0.
     */
    public double backoffSeconds() {
        return backoffSeconds;
    }

    /**
     * {@code comparator_api_max_response_bytes} (ours): the largest answer read, in bytes; a larger
     * one (by its Content-Length, or once that many bytes have arrived) is an error at once, not
     * retried, and is never held in memory whole. Default {@value #DEFAULT_MAX_RESPONSE_BYTES}
     * (8 MiB); >= 1.
     */
    public long maxResponseBytes() {
        return maxResponseBytes;
    }

    /**
     * The key to send: {@code comparator_api_key}, else the value of the variable
     * {@code comparator_api_key_env}, else null (no key).
     *
     * @throws IllegalArgumentException when {@code comparator_api_key_env} names an unset or blank variable
     */
    String resolveApiKey() {
        if (apiKey != null) {
            return apiKey;
        }
        if (apiKeyEnv == null) {
            return null;
        }
        String value = environment.get(apiKeyEnv);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(KEY_ENV + " names the environment variable " + apiKeyEnv
                    + ", which is not set (or is blank): export " + apiKeyEnv + "=<your key>, or set " + KEY);
        }
        return value.strip();
    }

    /**
     * The settings under their config keys, as written to a run's resolved config: the key and the
     * header values as {@code "***"} when set.
     */
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put(URL, url);
        map.put(FORMAT, format.configName());
        map.put(MODEL, model);
        map.put(MAX_N_PER_REQUEST, maxNPerRequest);
        map.put(TIMEOUT, timeoutSeconds);
        Map<String, String> hiddenHeaders = new LinkedHashMap<>();
        headers.keySet().forEach(name -> hiddenHeaders.put(name, HIDDEN));
        map.put(HEADERS, hiddenHeaders.isEmpty() ? null : hiddenHeaders);
        map.put(KEY, apiKey == null ? null : HIDDEN);
        map.put(KEY_ENV, apiKeyEnv);
        map.put(KEY_HEADER, apiKeyHeader);
        map.put(KEY_PREFIX, apiKeyPrefix);
        map.put(RESPONSE_FIELD, responseField);
        map.put(EXTRA_BODY, extraBody.isEmpty() ? null : extraBody);
        map.put(RETRIES, retries);
        map.put(BACKOFF, backoffSeconds);
        map.put(MAX_RESPONSE_BYTES, maxResponseBytes);
        return Collections.unmodifiableMap(map);
    }

    /** {@link #toMap()} behind the class name: never the key. */
    @Override
    public String toString() {
        return "ApiComparatorSettings" + toMap();
    }

    // ------------------------------------------------------------------ checks

    private static URI checkUrl(String url, Map<String, String> environment) {
        if (url == null || url.isEmpty()) {
            throw new IllegalArgumentException(URL + " is required when comparator_policy is \"api\": set it to the "
                    + "endpoint, e.g. https://api.openai.com/v1/chat/completions");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(URL + " is not a valid URL (" + e.getReason() + "): " + url);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
            throw new IllegalArgumentException(URL + " must be an http:// or https:// URL with a host, e.g. "
                    + "https://api.openai.com/v1/chat/completions (got " + url + ")");
        }
        if (scheme.equals("http") && !HubCache.isLoopback(uri.getHost()) && !HubCache.allowsHttp(environment)) {
            throw new IllegalArgumentException(URL + " is plain http to " + uri.getHost() + ": prompts, completions "
                    + "and the API key would cross the network unencrypted. Use https://, or, for a server you trust, "
                    + "set " + HubCache.ALLOW_HTTP_VARIABLE + "=1");
        }
        return uri;
    }

    /** A header the HTTP client accepts (not a restricted one such as Host or Content-Length). */
    private static void checkHeader(String key, String name, String value) {
        try {
            HttpRequest.newBuilder().header(name, value);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException(key + ": header '" + name + "' cannot be sent (a restricted or "
                    + "malformed header name, or a value with line breaks); remove or rename it");
        }
    }

    private static Map<String, Object> jsonCopy(Map<String, Object> value) {
        try {
            @SuppressWarnings("unchecked")
            Map<String, Object> copy = JSON.convertValue(JSON.valueToTree(value), LinkedHashMap.class);
            return Collections.unmodifiableMap(copy);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(EXTRA_BODY + " must hold JSON values (strings, numbers, booleans, "
                    + "null, lists and maps): " + e.getMessage(), e);
        }
    }

    /** @throws IllegalArgumentException with {@code message} unless {@code ok} */
    static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Builds {@link ApiComparatorSettings}; every setter is optional but the URL. */
    public static final class Builder {
        private final String url;
        private ApiFormat format = ApiFormat.GENERIC;
        private String model;
        private Integer maxNPerRequest;
        private double timeoutSeconds = 120.0;
        private Map<String, String> headers;
        private String apiKey;
        private String apiKeyEnv;
        private String apiKeyHeader = "Authorization";
        private String apiKeyPrefix = "Bearer";
        private String responseField = "completions";
        private Map<String, Object> extraBody;
        private int retries = 3;
        private double backoffSeconds = 1.0;
        private long maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES;
        private Map<String, String> environment;

        private Builder(String url) {
            this.url = url;
        }

        public Builder format(ApiFormat format) {
            this.format = format;
            return this;
        }

        public Builder model(String model) {
            this.model = model;
            return this;
        }

        public Builder maxNPerRequest(Integer maxNPerRequest) {
            this.maxNPerRequest = maxNPerRequest;
            return this;
        }

        public Builder timeoutSeconds(double timeoutSeconds) {
            this.timeoutSeconds = timeoutSeconds;
            return this;
        }

        public Builder headers(Map<String, String> headers) {
            this.headers = headers;
            return this;
        }

        public Builder apiKey(String apiKey) {
            this.apiKey = apiKey;
            return this;
        }

        public Builder apiKeyEnv(String apiKeyEnv) {
            this.apiKeyEnv = apiKeyEnv;
            return this;
        }

        public Builder apiKeyHeader(String apiKeyHeader) {
            this.apiKeyHeader = apiKeyHeader;
            return this;
        }

        public Builder apiKeyPrefix(String apiKeyPrefix) {
            this.apiKeyPrefix = apiKeyPrefix;
            return this;
        }

        public Builder responseField(String responseField) {
            this.responseField = responseField;
            return this;
        }

        public Builder extraBody(Map<String, Object> extraBody) {
            this.extraBody = extraBody;
            return this;
        }

        public Builder retries(int retries) {
            this.retries = retries;
            return this;
        }

        public Builder backoffSeconds(double backoffSeconds) {
            this.backoffSeconds = backoffSeconds;
            return this;
        }

        public Builder maxResponseBytes(long maxResponseBytes) {
            this.maxResponseBytes = maxResponseBytes;
            return this;
        }

        /** The environment read for the key variable and the plain-http switch (tests); default {@link System#getenv()}. */
        Builder environment(Map<String, String> environment) {
            this.environment = environment;
            return this;
        }

        /** @throws IllegalArgumentException naming the key of the first invalid value */
        public ApiComparatorSettings build() {
            return new ApiComparatorSettings(this);
        }
    }
}
