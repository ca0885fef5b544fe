package comlrl.trainers.preference.comparator;

import static comlrl.trainers.preference.comparator.ApiComparatorSettings.BACKOFF;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.EXTRA_BODY;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.FORMAT;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.HEADERS;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.KEY;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.KEYS;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.KEY_ENV;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.KEY_HEADER;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.KEY_PREFIX;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.MAX_N_PER_REQUEST;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.MAX_RESPONSE_BYTES;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.MODEL;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.RESPONSE_FIELD;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.RETRIES;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.TIMEOUT;
import static comlrl.trainers.preference.comparator.ApiComparatorSettings.URL;
import static comlrl.utils.ConfigMaps.isNullLike;

import comlrl.utils.ConfigMaps;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Reads {@link ApiComparatorSettings} from the {@code comparator_api_*} keys of a config (see
 * {@link ApiComparatorSettings#fromMap}).
 */
final class ApiSettingsReader {
    private static final String OWNER = "comparator";

    private ApiSettingsReader() {
    }

    /** See {@link ApiComparatorSettings#fromMap}. */
    static ApiComparatorSettings read(Map<String, ?> config) {
        Objects.requireNonNull(config, "config");
        for (String key : config.keySet()) {
            if (key.startsWith("comparator_api_") && !KEYS.contains(key)) {
                throw new IllegalArgumentException("Unknown " + OWNER + " key '" + key + "'; did you mean '"
                        + ConfigMaps.closest(key, KEYS) + "'? Valid keys: " + String.join(", ", KEYS));
            }
        }
        Object url = config.get(URL);
        ApiComparatorSettings.Builder b =
                ApiComparatorSettings.builder(isNullLike(url) ? null : ConfigMaps.toStr(OWNER, URL, url));
        if (set(config, FORMAT)) {
            b.format(ApiFormat.parse(ConfigMaps.toStr(OWNER, FORMAT, config.get(FORMAT))));
        }
        if (set(config, MODEL)) {
            b.model(ConfigMaps.toStr(OWNER, MODEL, config.get(MODEL)));
        }
        b.maxNPerRequest(ConfigMaps.toNullableInt(OWNER, MAX_N_PER_REQUEST, config.get(MAX_N_PER_REQUEST)));
        if (set(config, TIMEOUT)) {
            b.timeoutSeconds(ConfigMaps.toDouble(OWNER, TIMEOUT, config.get(TIMEOUT)));
        }
        if (set(config, HEADERS)) {
            Map<String, String> headers = new LinkedHashMap<>();
            mapping(config.get(HEADERS), HEADERS, "{X-Org: my-org}").forEach((name, value) -> {
                if (!(value instanceof String || value instanceof Number || value instanceof Boolean)) {
                    throw new IllegalArgumentException(OWNER + " key '" + HEADERS + "' must map header names to "
                            + "strings; header '" + name + "' has a " + typeName(value));
                }
                headers.put(name, String.valueOf(value));
            });
            b.headers(headers);
        }
        if (set(config, KEY)) {
            if (!(config.get(KEY) instanceof String key)) {
                // the value is not shown: it may be a mistyped key
                throw new IllegalArgumentException(OWNER + " key '" + KEY + "' must be a string (got a "
                        + typeName(config.get(KEY)) + "; quote it in YAML)");
            }
            b.apiKey(key);
        }
        if (set(config, KEY_ENV)) {
            b.apiKeyEnv(ConfigMaps.toStr(OWNER, KEY_ENV, config.get(KEY_ENV)));
        }
        if (set(config, KEY_HEADER)) {
            b.apiKeyHeader(ConfigMaps.toStr(OWNER, KEY_HEADER, config.get(KEY_HEADER)));
        }
        if (config.containsKey(KEY_PREFIX)) {
            Object prefix = config.get(KEY_PREFIX);
            b.apiKeyPrefix(isNullLike(prefix) ? "" : ConfigMaps.toStr(OWNER, KEY_PREFIX, prefix));
        }
        if (set(config, RESPONSE_FIELD)) {
            b.responseField(ConfigMaps.toStr(OWNER, RESPONSE_FIELD, config.get(RESPONSE_FIELD)));
        }
        if (set(config, EXTRA_BODY)) {
            b.extraBody(mapping(config.get(EXTRA_BODY), EXTRA_BODY, "{reasoning_effort: low}"));
        }
        if (set(config, RETRIES)) {
            b.retries(ConfigMaps.toInt(OWNER, RETRIES, config.get(RETRIES)));
        }
        if (set(config, BACKOFF)) {
            b.backoffSeconds(ConfigMaps.toDouble(OWNER, BACKOFF, config.get(BACKOFF)));
        }
        if (set(config, MAX_RESPONSE_BYTES)) {
            b.maxResponseBytes(ConfigMaps.toLong(OWNER, MAX_RESPONSE_BYTES, config.get(MAX_RESPONSE_BYTES)));
        }
        return b.build();
    }

    private static Map<String, Object> mapping(Object value, String key, String example) {
        if (!(value instanceof Map<?, ?> map)) {
            throw new IllegalArgumentException(OWNER + " key '" + key + "' must be a mapping such as " + example
                    + ", got a " + typeName(value));
        }
        return ConfigMaps.stringKeys(OWNER + " key '" + key + "'", map);
    }

    private static boolean set(Map<String, ?> config, String key) {
        return !isNullLike(config.get(key));
    }

    private static String typeName(Object value) {
        return value == null ? "null" : value.getClass().getSimpleName();
    }
}
