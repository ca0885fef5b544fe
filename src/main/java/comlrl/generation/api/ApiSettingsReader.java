package comlrl.generation.api;

import static comlrl.generation.api.ApiComparatorSettings.EXTRA_BODY;
import static comlrl.generation.api.ApiComparatorSettings.HEADERS;
import static comlrl.generation.api.ApiComparatorSettings.HIDDEN;
import static comlrl.generation.api.ApiComparatorSettings.KEYS;
import static comlrl.generation.api.ApiComparatorSettings.OWNER;
import static comlrl.generation.api.ApiComparatorSettings.URL;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.model.io.HubCache;
import comlrl.utils.ConfigMaps;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpRequest;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Reads {@link ApiComparatorSettings} from the {@code comparator_api_*} keys of a config (see
 * {@link ApiComparatorSettings#fromMap}), with the readers and checks of the values that are more
 * than a number or a string: the URL, the headers, the key and the extra body.
 */
final class ApiSettingsReader {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ApiSettingsReader() {
    }

    /**
     * {@code b} with every key of {@code config} that it holds read by its field (a null-like value
     * meaning the default; no prefix for {@code comparator_api_key_prefix}). See
     * {@link ApiComparatorSettings#fromMap}.
     */
    static ApiComparatorSettings read(Map<String, ?> config, ApiComparatorSettings.Builder b) {
        Objects.requireNonNull(config, "config");
        for (String key : config.keySet()) {
            if (key.startsWith("comparator_api_") && !KEYS.contains(key)) {
                throw new IllegalArgumentException("Unknown " + OWNER + " key '" + key + "'; did you mean '"
                        + ConfigMaps.closest(key, KEYS) + "'? Valid keys: " + String.join(", ", KEYS));
            }
        }
        for (String key : KEYS) {
            if (config.containsKey(key)) {
                b.set(key, config.get(key));
            }
        }
        return b.build();
    }

    /** {@code comparator_api_headers}: a mapping of header names to strings (numbers and booleans as text). */
    static Map<String, String> headers(String owner, String key, Object raw) {
        Map<String, String> headers = new LinkedHashMap<>();
        mapping(owner, raw, key, "{X-Org: my-org}").forEach((name, value) -> {
            if (!(value instanceof String || value instanceof Number || value instanceof Boolean)) {
                throw new IllegalArgumentException(owner + " key '" + key + "' must map header names to "
                        + "strings; header '" + name + "' has a " + typeName(value));
            }
            headers.put(name, String.valueOf(value));
        });
        return Collections.unmodifiableMap(headers);
    }

    /** {@code comparator_api_key}: a string; what else was given is named by its type only (it may be a mistyped key). */
    static String key(String owner, String key, Object raw) {
        if (!(raw instanceof String text)) {
            throw new IllegalArgumentException(owner + " key '" + key + "' must be a string (got a "
                    + typeName(raw) + "; quote it in YAML)");
        }
        return text;
    }

    /** {@code comparator_api_extra_body}: a mapping of JSON values, deep-copied (see {@link #jsonCopy}). */
    static Map<String, Object> extraBody(String owner, String key, Object raw) {
        return jsonCopy(mapping(owner, raw, key, "{reasoning_effort: low}"));
    }

    private static Map<String, Object> mapping(String owner, Object value, String key, String example) {
        if (!(value instanceof Map<?, ?> map)) {
            throw new IllegalArgumentException(owner + " key '" + key + "' must be a mapping such as " + example
                    + ", got a " + typeName(value));
        }
        return ConfigMaps.stringKeys(owner + " key '" + key + "'", map);
    }

    private static String typeName(Object value) {
        return value == null ? "null" : value.getClass().getSimpleName();
    }

    /** {@code headers} with every value {@code "***"}, as {@link ApiComparatorSettings#toMap()} writes them. */
    static Map<String, String> hidden(Map<String, String> headers) {
        Map<String, String> hidden = new LinkedHashMap<>();
        headers.keySet().forEach(name -> hidden.put(name, HIDDEN));
        return hidden;
    }

    // ------------------------------------------------------------------ checks

    static URI checkUrl(String url, Map<String, String> environment) {
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

    /** The first of {@code headers} the HTTP client refuses (see {@link #headerProblem}), or null. */
    static String headersProblem(Map<String, String> headers) {
        return headers.entrySet().stream().map(h -> headerProblem(HEADERS, h.getKey(), h.getValue()))
                .filter(Objects::nonNull).findFirst().orElse(null);
    }

    /** Null for a header the HTTP client accepts, else why not (a restricted one such as Host or Content-Length). */
    static String headerProblem(String key, String name, String value) {
        try {
            HttpRequest.newBuilder().header(name, value);
            return null;
        } catch (IllegalArgumentException | NullPointerException e) {
            return key + ": header '" + name + "' cannot be sent (a restricted or malformed header name, or a value "
                    + "with line breaks); remove or rename it";
        }
    }

    /** A deep copy of {@code comparator_api_extra_body} through JSON, unmodifiable at the top level. */
    static Map<String, Object> jsonCopy(Map<String, Object> value) {
        try {
            @SuppressWarnings("unchecked")
            Map<String, Object> copy = JSON.convertValue(JSON.valueToTree(value), LinkedHashMap.class);
            return Collections.unmodifiableMap(copy);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(EXTRA_BODY + " must hold JSON values (strings, numbers, booleans, "
                    + "null, lists and maps): " + e.getMessage(), e);
        }
    }
}
