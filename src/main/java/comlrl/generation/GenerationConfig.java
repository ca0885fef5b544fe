package comlrl.generation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A model directory's {@code generation_config.json}: the ids generation stops at and pads with,
 * and the model's own generation defaults (top_k, repetition_penalty, ...). The raw JSON is kept so
 * saving writes it back unchanged. A directory without the file takes the generation settings that
 * an older {@code config.json} carries, as transformers does ({@code GenerationConfig.from_model_config}).
 *
 * @param raw the file's content (empty when the directory has none)
 * @param legacy generation settings found in {@code config.json} when there is no generation_config.json
 *        (never saved; empty otherwise)
 */
public record GenerationConfig(List<Long> eosTokenIds, long padTokenId, long bosTokenId, ObjectNode raw,
        ObjectNode legacy) {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Where the model's generation settings are read from. */
    public static final String FILE = "generation_config.json";

    public GenerationConfig {
        eosTokenIds = List.copyOf(eosTokenIds);
        legacy = legacy == null ? JSON.createObjectNode() : legacy;
    }

    public GenerationConfig(List<Long> eosTokenIds, long padTokenId, long bosTokenId, ObjectNode raw) {
        this(eosTokenIds, padTokenId, bosTokenId, raw, null);
    }

    /** Reads {@code dir/generation_config.json} when present, else the settings of {@code dir/config.json}. */
    public static GenerationConfig load(Path dir) {
        Path file = dir.resolve(FILE);
        if (!Files.isRegularFile(file)) {
            return new GenerationConfig(List.of(), -1, -1, JSON.createObjectNode(),
                    legacySettings(dir.resolve("config.json")));
        }
        ObjectNode obj = readObject(file);
        List<Long> eos = new ArrayList<>();
        JsonNode e = obj.get("eos_token_id");
        if (e != null && e.isArray()) {
            e.forEach(x -> eos.add(x.asLong()));
        } else if (e != null && e.isIntegralNumber()) {
            eos.add(e.asLong());
        }
        return new GenerationConfig(eos,
                obj.path("pad_token_id").isIntegralNumber() ? obj.get("pad_token_id").asLong() : -1,
                obj.path("bos_token_id").isIntegralNumber() ? obj.get("bos_token_id").asLong() : -1, obj);
    }

    private static ObjectNode readObject(Path file) {
        JsonNode n;
        try {
            n = JSON.readTree(Files.readString(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("Malformed JSON in " + file + ": " + e.getMessage(), e);
        }
        if (!(n instanceof ObjectNode obj)) {
            throw new IllegalArgumentException(file + " must hold a JSON object");
        }
        return obj;
    }

    /** The generation settings {@link GenerationSettings} knows, taken from an older config.json. */
    private static ObjectNode legacySettings(Path configJson) {
        ObjectNode out = JSON.createObjectNode();
        if (!Files.isRegularFile(configJson)) {
            return out;
        }
        ObjectNode config = readObject(configJson);
        for (String key : GenerationSettings.MODEL_KEYS) {
            JsonNode v = config.get(key);
            if (v != null && !v.isNull()) {
                out.set(key, v);
            }
        }
        return out;
    }

    /**
     * The model's value of generation setting {@code key}: from generation_config.json, else from an
     * older config.json; null when neither sets it (a JSON null counts as unset, as in transformers).
     */
    public JsonNode setting(String key) {
        JsonNode v = raw.get(key);
        if (v != null && !v.isNull()) {
            return v;
        }
        v = legacy.get(key);
        return v == null || v.isNull() ? null : v;
    }

    /** The file {@link #setting} found {@code key} in ({@code generation_config.json} or {@code config.json}). */
    public String settingSource(String key) {
        JsonNode v = raw.get(key);
        return v != null && !v.isNull() ? FILE : "config.json";
    }

    /** A config for a new model with the given special ids. */
    public static GenerationConfig of(long bos, long eos, long pad) {
        ObjectNode o = JSON.createObjectNode();
        if (bos >= 0) {
            o.put("bos_token_id", bos);
        }
        o.put("eos_token_id", eos);
        if (pad >= 0) {
            o.put("pad_token_id", pad);
        }
        return new GenerationConfig(List.of(eos), pad, bos, o);
    }

    public void save(Path dir) {
        try {
            Files.writeString(dir.resolve(FILE), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(raw) + "\n");
        } catch (IOException e) {
            throw new IllegalStateException("Cannot write generation_config.json in " + dir + ": " + e.getMessage(), e);
        }
    }
}
