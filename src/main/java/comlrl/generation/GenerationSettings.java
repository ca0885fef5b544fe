package comlrl.generation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Resolves the settings of one generation call the way transformers' {@code generate} does:
 * <pre>
 *   value(key) = the call's value        when the caller passes the key (a null value switches it off)
 *              | the model's value       from generation_config.json (or an older config.json)
 *              | transformers' default   (top_k 50, repetition_penalty 1.0, ...; see {@link #DEFAULTS})
 * </pre>
 * The Python trainers always pass {@code temperature}, {@code top_p}, {@code do_sample=True} and
 * {@code num_beams=1}, and {@code top_k} unless it is None; every other setting comes from the
 * model, so a Qwen2.5 instruct model samples with its own {@code repetition_penalty: 1.05} and
 * {@code top_k: 20}. The result says where each value came from.
 */
public final class GenerationSettings {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** transformers' global defaults of the settings we act on (GenerationConfig's default parameters). */
    public static final Map<String, Object> DEFAULTS;

    static {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("temperature", 1.0);
        d.put("top_k", 50);
        d.put("top_p", 1.0);
        d.put("min_p", null);
        d.put("typical_p", 1.0);
        d.put("epsilon_cutoff", 0.0);
        d.put("eta_cutoff", 0.0);
        d.put("repetition_penalty", 1.0);
        d.put("no_repeat_ngram_size", 0);
        d.put("bad_words_ids", null);
        d.put("min_length", 0);
        d.put("min_new_tokens", null);
        d.put("forced_bos_token_id", null);
        d.put("forced_eos_token_id", null);
        d.put("remove_invalid_values", false);
        d.put("suppress_tokens", null);
        d.put("begin_suppress_tokens", null);
        d.put("renormalize_logits", false);
        d.put("stop_strings", null);
        DEFAULTS = java.util.Collections.unmodifiableMap(d);
    }

    /** Keys a caller may pass ({@code generation_kwargs}); also the keys read from a model's config. */
    public static final Set<String> MODEL_KEYS = DEFAULTS.keySet();

    /**
     * Settings of transformers' generate that we do not implement: a model that sets one (to anything
     * but its off value) is refused with a message, since its samples would differ from transformers'.
     */
    private static final Map<String, Object> UNSUPPORTED = Map.of(
            "sequence_bias", "null", "exponential_decay_length_penalty", "null", "guidance_scale", "1.0",
            "watermarking_config", "null", "top_h", "null", "penalty_alpha", "null",
            "dola_layers", "null", "diversity_penalty", "0.0", "force_words_ids", "null");

    private GenerationSettings() {
    }

    /** One resolved value and where it came from ("run config", "generation_config.json", ...). */
    public record Setting(Object value, String source) {
    }

    /** The settings used, as a {@link SamplingConfig}, and each value with its source. */
    public record Resolved(SamplingConfig sampling, Map<String, Setting> settings) {
        /** {@code {key: {"value": v, "source": s}}}, for resolved configs and logs. */
        public Map<String, Object> describe() {
            Map<String, Object> out = new LinkedHashMap<>();
            settings.forEach((k, s) -> {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("value", s.value());
                entry.put("source", s.source());
                out.put(k, entry);
            });
            return out;
        }
    }

    /**
     * Checks that {@code kwargs} only names settings we implement, before any model loads.
     *
     * @param owner what the keys come from, for messages (e.g. "generation_kwargs")
     */
    public static void requireKnown(String owner, Collection<String> kwargs) {
        for (String key : kwargs) {
            if (MODEL_KEYS.contains(key)) {
                continue;
            }
            if (UNSUPPORTED.containsKey(key)) {
                throw new IllegalArgumentException(owner + ": '" + key + "' is not implemented here (only these are: "
                        + String.join(", ", new TreeSet<>(MODEL_KEYS)) + ")");
            }
            throw new IllegalArgumentException("Unknown " + owner + " key '" + key + "'. Valid keys: "
                    + String.join(", ", new TreeSet<>(MODEL_KEYS)));
        }
    }

    /**
     * Resolves a call's settings against a model's generation config.
     *
     * @param passed the settings the caller passes, by transformers name; a present key with a null
     *        value is passed as None (switched off); absent keys come from the model, then the defaults
     * @param callerSource what to call the caller's values in {@link Setting#source()} ("run config")
     * @param greedy arg-max decoding (the warpers do not act; the processors still do)
     */
    public static Resolved resolve(Map<String, ?> passed, String callerSource, boolean greedy, int maxNewTokens,
            int numReturnSequences, GenerationConfig model) {
        requireKnown("generation settings", passed.keySet());
        for (Map.Entry<String, Object> u : UNSUPPORTED.entrySet()) {
            JsonNode v = model.setting(u.getKey());
            if (v != null && !v.asText().equals(u.getValue()) && !(v.isNumber() && u.getValue().equals(
                    String.valueOf(v.asDouble())))) {
                throw new IllegalArgumentException(model.settingSource(u.getKey()) + " of the model sets " + u.getKey()
                        + " = " + v + ", which this library does not implement; remove it from the file (or set it to "
                        + u.getValue() + ") to sample without it");
            }
        }
        Map<String, Setting> settings = new LinkedHashMap<>();
        for (String key : MODEL_KEYS) {
            if (passed.containsKey(key)) {
                settings.put(key, new Setting(normalize(key, passed.get(key)), callerSource));
                continue;
            }
            JsonNode v = model.setting(key);
            if (v != null) {
                settings.put(key, new Setting(normalize(key, JSON.convertValue(v, Object.class)), model.settingSource(key)));
            } else {
                settings.put(key, new Setting(DEFAULTS.get(key), "transformers default"));
            }
        }
        settings.put("do_sample", new Setting(!greedy, callerSource));
        settings.put("num_beams", new Setting(1, callerSource));
        settings.put("max_new_tokens", new Setting(maxNewTokens, callerSource));
        return new Resolved(toSampling(settings, greedy, maxNewTokens, numReturnSequences), settings);
    }

    private static SamplingConfig toSampling(Map<String, Setting> s, boolean greedy, int maxNewTokens, int n) {
        Double temperature = dbl(s, "temperature");
        Integer topK = integer(s, "top_k");
        Double topP = dbl(s, "top_p");
        LogitsProcessing processing = LogitsProcessing.builder()
                .repetitionPenalty(orElse(dbl(s, "repetition_penalty"), 1.0))
                .noRepeatNgramSize(orElse(integer(s, "no_repeat_ngram_size"), 0))
                .badWordsIds(idLists(s, "bad_words_ids"))
                .minLength(orElse(integer(s, "min_length"), 0))
                .minNewTokens(orElse(integer(s, "min_new_tokens"), 0))
                .forcedBosTokenId(s.get("forced_bos_token_id").value() == null ? null : (long) integer(s, "forced_bos_token_id"))
                .forcedEosTokenId(ids(s, "forced_eos_token_id"))
                .removeInvalidValues(Boolean.TRUE.equals(s.get("remove_invalid_values").value()))
                .suppressTokens(ids(s, "suppress_tokens"))
                .beginSuppressTokens(ids(s, "begin_suppress_tokens"))
                .minP(dbl(s, "min_p"))
                .typicalP(orElse(dbl(s, "typical_p"), 1.0))
                .epsilonCutoff(orElse(dbl(s, "epsilon_cutoff"), 0.0))
                .etaCutoff(orElse(dbl(s, "eta_cutoff"), 0.0))
                .build();
        // a None temperature is no scaling; None top_p no nucleus; top_k None or 0 no top-k; None stop_strings none
        @SuppressWarnings("unchecked")
        List<String> stopStrings = (List<String>) s.get("stop_strings").value();
        return new SamplingConfig(temperature == null ? 1.0 : temperature, topK, topP, greedy, maxNewTokens, n,
                processing, stopStrings);
    }

    private static <T> T orElse(T value, T otherwise) {
        return value == null ? otherwise : value;
    }

    /** Checks the type of one value and brings numbers to Double/Integer and id lists to List&lt;Long&gt;. */
    private static Object normalize(String key, Object value) {
        if (value == null) {
            return null;
        }
        Object d = DEFAULTS.get(key);
        switch (key) {
            case "bad_words_ids" -> {
                List<List<Long>> out = new ArrayList<>();
                if (!(value instanceof List<?> outer)) {
                    throw typeError(key, "a list of token-id lists", value);
                }
                for (Object inner : outer) {
                    out.add(idList(key, inner, "a list of token-id lists"));
                }
                return out;
            }
            case "stop_strings" -> { // transformers takes one string or a list of them
                List<Object> list = value instanceof String one ? List.of(one)
                        : value instanceof List<?> l ? new ArrayList<>(l) : null;
                if (list == null || !list.stream().allMatch(e -> e instanceof String str && !str.isEmpty())) {
                    throw typeError(key, "a non-empty string or a list of them", value);
                }
                return list.stream().map(String.class::cast).toList();
            }
            case "suppress_tokens", "begin_suppress_tokens" -> {
                return idList(key, value, "a list of token ids");
            }
            case "forced_eos_token_id" -> {
                return value instanceof List<?> ? idList(key, value, "a token id or a list of them")
                        : List.of(asLong(key, value, "a token id or a list of them"));
            }
            case "remove_invalid_values", "renormalize_logits" -> {
                if (value instanceof Boolean) {
                    return value;
                }
                throw typeError(key, "true or false", value);
            }
            default -> {
                if (d instanceof Integer || key.equals("min_new_tokens") || key.equals("forced_bos_token_id")) {
                    return (int) asLong(key, value, "an integer");
                }
                if (value instanceof Number num) {
                    return num.doubleValue();
                }
                if (value instanceof String str) {
                    try {
                        return Double.parseDouble(str.trim());
                    } catch (NumberFormatException e) {
                        throw typeError(key, "a number", value);
                    }
                }
                throw typeError(key, "a number", value);
            }
        }
    }

    private static List<Long> idList(String key, Object value, String expected) {
        if (!(value instanceof List<?> list)) {
            throw typeError(key, expected, value);
        }
        List<Long> out = new ArrayList<>();
        for (Object o : list) {
            out.add(asLong(key, o, expected));
        }
        return out;
    }

    private static long asLong(String key, Object value, String expected) {
        if (value instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
            return n.longValue();
        }
        if (value instanceof String s) {
            try {
                return Long.parseLong(s.trim());
            } catch (NumberFormatException e) {
                throw typeError(key, expected, value);
            }
        }
        throw typeError(key, expected, value);
    }

    private static IllegalArgumentException typeError(String key, String expected, Object value) {
        return new IllegalArgumentException(String.format(Locale.ROOT, "generation setting '%s' must be %s, got %s",
                key, expected, value));
    }

    private static Double dbl(Map<String, Setting> s, String key) {
        return (Double) s.get(key).value();
    }

    private static Integer integer(Map<String, Setting> s, String key) {
        return (Integer) s.get(key).value();
    }

    @SuppressWarnings("unchecked")
    private static List<Long> ids(Map<String, Setting> s, String key) {
        Object v = s.get(key).value();
        return v == null ? List.of() : (List<Long>) v;
    }

    @SuppressWarnings("unchecked")
    private static List<List<Long>> idLists(Map<String, Setting> s, String key) {
        Object v = s.get(key).value();
        return v == null ? List.of() : (List<List<Long>>) v;
    }
}
