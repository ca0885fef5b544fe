package comlrl.generation.api;

import static comlrl.generation.api.ApiSettingsReader.checkUrl;
import static comlrl.generation.api.ApiSettingsReader.headerProblem;
import static comlrl.utils.ConfigMaps.isNullLike;

import comlrl.utils.ConfigField;
import comlrl.utils.ConfigMaps;
import java.net.URI;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Stream;

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

    static final String HIDDEN = comlrl.net.Secrets.HIDDEN;
    /** Names the settings in the type errors of {@link #fromMap} and the builder. */
    static final String OWNER = "comparator";
    /** The rule of a key whose every (cleaned) value is valid. */
    private static final ConfigField.Rule<Object> ANY = v -> null;

    /**
     * Every key, declared once, in the reference's order, then ours: its default, how a config value
     * is read and cleaned (a null-like value means the default, but no prefix for
     * {@code comparator_api_key_prefix}; see {@link ApiSettingsReader}), the rule checked on the
     * cleaned value (the URL's and the model's, which need the environment or the format, are checked
     * by the constructor), how it is written out, and its type and allowed values for
     * {@code docs/CONFIG.md}. The iterative preference configs hold these very fields; each key's
     * meaning is on its getter.
     */
    public static final List<ConfigField<?>> FIELDS = List.of(
            field(URL, null, (o, k, raw) -> ConfigMaps.toStr(o, k, raw).trim(), ANY, v -> v, "string or null",
                    "an http(s) URL (plain http only to a loopback host); required with comparator_policy api")
                    .means("Endpoint of the API comparator (comparator_policy: api)."),
            field(FORMAT, ApiFormat.GENERIC, (o, k, raw) -> raw instanceof ApiFormat f ? f
                    : ApiFormat.parse(ConfigMaps.toStr(o, k, raw)), ANY, ApiFormat::configName, "string",
                    String.join(", ", Stream.of(ApiFormat.values()).map(f -> "\"" + f.configName() + "\"").toList()))
                    .means("The API's request and response format."),
            field(MODEL, null, (o, k, raw) -> blankToNull(ConfigMaps.toStr(o, k, raw)), ANY, v -> v, "string or null",
                    "a model the API serves; required by every format but generic")
                    .means("Model the API serves."),
            field(MAX_N_PER_REQUEST, null, ConfigMaps::toNullableInt,
                    v -> v == null || v >= 1 ? null : MAX_N_PER_REQUEST + " must be >= 1 or null (got " + v + ")",
                    v -> v, "int or null", ">= 1 (or null for no cap)")
                    .means("Most completions asked for in one request; null = no cap."),
            field(TIMEOUT, 120.0, ConfigMaps::toDouble, v -> Double.isFinite(v) && v > 0 ? null
                    : TIMEOUT + " must be a number of seconds > 0 (got " + v + ")", v -> v, "float",
                    "a number of seconds > 0")
                    .means("Seconds to wait for a response."),
            field(HEADERS, Map.<String, String>of(), ApiSettingsReader::headers, ApiSettingsReader::headersProblem,
                    ApiSettingsReader::hidden, "mapping", "a mapping of header names to values; written out as \"***\"")
                    .means("Further HTTP headers of each request."),
            field(KEY, null, (o, k, raw) -> blankToNull(ApiSettingsReader.key(o, k, raw)), ANY, v -> HIDDEN,
                    "string or null", "the API key; written out as \"***\"")
                    .means("The API key."),
            field(KEY_ENV, null, (o, k, raw) -> blankToNull(ConfigMaps.toStr(o, k, raw)), ANY, v -> v, "string or null",
                    "the environment variable holding the key")
                    .means("Environment variable holding the API key."),
            field(KEY_HEADER, "Authorization", (o, k, raw) -> ConfigMaps.toStr(o, k, raw).trim(), v -> v.isEmpty()
                    ? KEY_HEADER + " must be a header name, e.g. Authorization or X-Api-Key"
                    : headerProblem(KEY_HEADER, v, "value"), v -> v, "string", "a header name")
                    .means("Header carrying the API key."),
            new ConfigField<>(KEY_PREFIX, "Bearer", (o, k, raw) -> isNullLike(raw) ? ""
                    : ConfigMaps.toStr(o, k, raw).strip(), v -> null, v -> v, null)
                    .described("string", "any text; null = none")
                    .means("Text before the key in its header."),
            field(RESPONSE_FIELD, "completions", (o, k, raw) -> ConfigMaps.toStr(o, k, raw).trim(),
                    v -> !v.isEmpty() && !List.of(v.split("\\.", -1)).contains("") ? null : RESPONSE_FIELD
                            + " must be a field name or a dotted path such as data.outputs (got \"" + v + "\")",
                    v -> v, "string", "a field name or a dotted path such as data.outputs")
                    .means("Field (or dotted path) of the response holding the completions."),
            field(EXTRA_BODY, Map.<String, Object>of(), ApiSettingsReader::extraBody, ANY, v -> v, "mapping",
                    "a mapping of extra request fields (a null value removes one of ours)")
                    .means("Further fields of each request body."),
            field(RETRIES, 3, ConfigMaps::toInt, v -> v >= 0 ? null : RETRIES + " must be >= 0 (got " + v + ")",
                    v -> v, "int", ">= 0")
                    .means("Retries of a failed request."),
            field(BACKOFF, 1.0, ConfigMaps::toDouble, v -> Double.isFinite(v) && v >= 0 ? null
                    : BACKOFF + " must be a number of seconds >= 0 (got " + v + ")", v -> v, "float",
                    "a number of seconds >= 0 (the first retry's wait; doubled each time)")
                    .means("Seconds before the first retry, doubled for each further one."),
            field(MAX_RESPONSE_BYTES, DEFAULT_MAX_RESPONSE_BYTES, ConfigMaps::toLong, v -> v >= 1 ? null
                    : MAX_RESPONSE_BYTES + " must be a number of bytes >= 1 (got " + v + "); the default is "
                    + DEFAULT_MAX_RESPONSE_BYTES, v -> v, "int", "a number of bytes >= 1")
                    .means("Largest response read, in bytes."));

    /** Every key {@link #fromMap(Map)} reads: the reference's, in its order, then ours. */
    public static final List<String> KEYS = FIELDS.stream().map(f -> f.key).toList();

    /** The cleaned value of every key, in {@link #FIELDS} order. */
    private final Map<String, Object> values;
    private final URI uri;
    private final Map<String, String> environment;

    private ApiComparatorSettings(Builder b) {
        environment = b.environment != null ? b.environment : System.getenv();
        Map<String, Object> v = new LinkedHashMap<>(b.values);
        uri = checkUrl((String) v.get(URL), environment);
        ApiFormat format = Objects.requireNonNull((ApiFormat) v.get(FORMAT), FORMAT);
        if (format.requiresModel() && v.get(MODEL) == null) {
            throw new IllegalArgumentException(MODEL + " is required with " + FORMAT + " \"" + format.configName()
                    + "\": set it to a model the API serves (e.g. gpt-4o-mini, claude-sonnet-4-5)");
        }
        FIELDS.stream().map(field -> field.problem(v.get(field.key))).filter(Objects::nonNull).findFirst()
                .ifPresent(problem -> {
                    throw new IllegalArgumentException(problem);
                });
        values = Collections.unmodifiableMap(v);
    }

    /** A builder with the defaults of {@link #FIELDS} and the endpoint {@code url}. */
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
        return ApiSettingsReader.read(config, new Builder(null));
    }

    /** {@code comparator_api_url}: the endpoint every request is POSTed to. Required. */
    public String url() { return (String) values.get(URL); }

    URI uri() { return uri; }
    /** {@code comparator_api_format}: the wire format. Default {@link ApiFormat#GENERIC}. */
    public ApiFormat format() { return (ApiFormat) values.get(FORMAT); }

    /**
     * {@code comparator_api_model}: the model name sent as {@code model}; null when unset (then the
     * generic format sends none). Required by every format but generic.
     */
    public String model() { return (String) values.get(MODEL); }

    /**
     * {@code comparator_api_max_n_per_request}: at most this many completions asked for in one
     * request (generic and openai formats; further requests collect the rest); null = all at once
     * (except for an openai endpoint on a deepseek host, which gets 1). Default null; >= 1.
     */
    public Integer maxNPerRequest() { return (Integer) values.get(MAX_N_PER_REQUEST); }

    /**
     * {@code comparator_api_timeout}: seconds each request may take, from sending it to the last
     * byte of the answer (connection, headers and body: a server that stalls or drips its body fails
     * then too). Default 120; > 0.
     */
    public double timeoutSeconds() { return (Double) values.get(TIMEOUT); }

    /** {@code comparator_api_headers}: extra request headers, replacing ours of the same name. Default none. */
    public Map<String, String> headers() { return castMap(values.get(HEADERS)); }

    /** Whether {@code comparator_api_key} is set (the key itself stays inside the package). */
    public boolean hasApiKey() { return values.get(KEY) != null; }

    /** {@code comparator_api_key_env}: the environment variable holding the key; null when unset. */
    public String apiKeyEnv() { return (String) values.get(KEY_ENV); }

    /**
     * {@code comparator_api_key_header}: the header carrying the key (not for anthropic, which
     * always sends {@code x-api-key}). Default "Authorization".
     */
    public String apiKeyHeader() { return (String) values.get(KEY_HEADER); }

    /**
     * {@code comparator_api_key_prefix}: written before the key, with one space, in
     * {@link #apiKeyHeader()}; empty = the bare key. Default "Bearer".
     */
    public String apiKeyPrefix() { return (String) values.get(KEY_PREFIX); }

    /**
     * {@code comparator_api_response_field}: where the generic format's completions are, a dotted
     * path from the top of the response ({@code data.outputs}; a number indexes a list). Default
     * "completions".
     */
    public String responseField() { return (String) values.get(RESPONSE_FIELD); }

    /**
     * {@code comparator_api_extra_body}: fields added to every request's JSON last, replacing ours of
     * the same name; a null value removes that field (e.g. {@code top_p} for a model that refuses
     * it). Default none. A deep copy, unmodifiable at the top level.
     */
    public Map<String, Object> extraBody() { return castMap(values.get(EXTRA_BODY)); }

    /**
     * {@code comparator_api_retries} (ours): how many times a request that timed out, could not
     * connect, broke off, or got HTTP 429 or 5xx is sent again. Default 3; >= 0.
     */
    public int retries() { return (Integer) values.get(RETRIES); }

    /**
     * {@code comparator_api_backoff} (ours): the wait before retry {@code a} (0-based) is
     * {@code backoff * 2^a} seconds, unless the answer carried {@code Retry-After} (see
     * {@link ApiComparator}). Default 1.0; >= 0.
     */
    public double backoffSeconds() { return (Double) values.get(BACKOFF); }

    /**
     * {@code comparator_api_max_response_bytes} (ours): the largest answer read, in bytes; a larger
     * one (by its Content-Length, or once that many bytes have arrived) is an error at once, not
     * retried, and is never held in memory whole. Default {@value #DEFAULT_MAX_RESPONSE_BYTES}
     * (8 MiB); >= 1.
     */
    public long maxResponseBytes() { return (Long) values.get(MAX_RESPONSE_BYTES); }

    /**
     * The key to send: {@code comparator_api_key}, else the value of the variable
     * {@code comparator_api_key_env}, else null (no key).
     *
     * @throws IllegalArgumentException when {@code comparator_api_key_env} names an unset or blank variable
     */
    String resolveApiKey() {
        if (values.get(KEY) != null) {
            return (String) values.get(KEY);
        }
        String variable = apiKeyEnv();
        if (variable == null) {
            return null;
        }
        String value = environment.get(variable);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(KEY_ENV + " names the environment variable " + variable
                    + ", which is not set (or is blank): export " + variable + "=<your key>, or set " + KEY);
        }
        return value.strip();
    }

    /**
     * The settings under their config keys, as written to a run's resolved config: the key and the
     * header values as {@code "***"} when set.
     */
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        FIELDS.forEach(field -> map.put(field.key, field.write(values.get(field.key))));
        return Collections.unmodifiableMap(map);
    }

    /** {@link #toMap()} behind the class name: never the key. */
    @Override
    public String toString() { return "ApiComparatorSettings" + toMap(); }

    /** A key whose null-like value means {@code defaultValue}; other values are read (and cleaned) by {@code reader}. */
    private static <T> ConfigField<T> field(String key, T defaultValue, ConfigField.Reader<T> reader,
                                            ConfigField.Rule<? super T> rule, Function<T, Object> writer,
                                            String type, String allowed) {
        return new ConfigField<>(key, defaultValue, (o, k, raw) -> isNullLike(raw) ? defaultValue : reader.read(o, k, raw),
                rule::problem, writer, null).described(type, allowed);
    }

    private static String blankToNull(String text) {
        return text.isBlank() ? null : text.strip();
    }

    @SuppressWarnings("unchecked")
    static <V> Map<String, V> castMap(Object map) {
        return (Map<String, V>) map;
    }

    /** Builds {@link ApiComparatorSettings}; every setter is optional but the URL. */
    public static final class Builder {
        /** The value of every key by name, starting from its default. */
        final Map<String, Object> values = new LinkedHashMap<>();
        private Map<String, String> environment;

        private Builder(String url) {
            FIELDS.forEach(field -> values.put(field.key, field.defaultValue));
            set(URL, url);
        }

        /** Sets {@code key} to {@code value} read and cleaned by its field (null: the default). */
        Builder set(String key, Object value) {
            ConfigField<?> field = FIELDS.stream().filter(f -> f.key.equals(key)).findFirst().orElseThrow();
            values.put(key, field.read(OWNER, value));
            return this;
        }

        // each setter sets its key; the getter of the same name says what it means
        public Builder format(ApiFormat format) { return set(FORMAT, format); }
        public Builder model(String model) { return set(MODEL, model); }
        public Builder maxNPerRequest(Integer maxNPerRequest) { return set(MAX_N_PER_REQUEST, maxNPerRequest); }
        public Builder timeoutSeconds(double timeoutSeconds) { return set(TIMEOUT, timeoutSeconds); }
        public Builder headers(Map<String, String> headers) { return set(HEADERS, headers); }
        public Builder apiKey(String apiKey) { return set(KEY, apiKey); }
        public Builder apiKeyEnv(String apiKeyEnv) { return set(KEY_ENV, apiKeyEnv); }
        public Builder apiKeyHeader(String apiKeyHeader) { return set(KEY_HEADER, apiKeyHeader); }
        public Builder apiKeyPrefix(String apiKeyPrefix) { return set(KEY_PREFIX, apiKeyPrefix); }
        public Builder responseField(String responseField) { return set(RESPONSE_FIELD, responseField); }
        public Builder extraBody(Map<String, Object> extraBody) { return set(EXTRA_BODY, extraBody); }
        public Builder retries(int retries) { return set(RETRIES, retries); }
        public Builder backoffSeconds(double backoffSeconds) { return set(BACKOFF, backoffSeconds); }
        public Builder maxResponseBytes(long maxResponseBytes) { return set(MAX_RESPONSE_BYTES, maxResponseBytes); }

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
