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
 * A model directory's {@code generation_config.json}: the ids generation stops at and pads with.
 * The raw JSON is kept so saving writes it back unchanged.
 */
public record GenerationConfig(List<Long> eosTokenIds, long padTokenId, long bosTokenId, ObjectNode raw) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public GenerationConfig {
        eosTokenIds = List.copyOf(eosTokenIds);
    }

    /** Reads {@code dir/generation_config.json} when present, else an empty config. */
    public static GenerationConfig load(Path dir) {
        Path file = dir.resolve("generation_config.json");
        if (!Files.isRegularFile(file)) {
            return new GenerationConfig(List.of(), -1, -1, JSON.createObjectNode());
        }
        JsonNode n;
        try {
            n = JSON.readTree(Files.readString(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("Malformed JSON in " + file + ": " + e.getMessage(), e);
        }
        if (!(n instanceof ObjectNode obj)) {
            throw new IllegalArgumentException(file + " must hold a JSON object");
        }
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
            Files.writeString(dir.resolve("generation_config.json"),
                    JSON.writerWithDefaultPrettyPrinter().writeValueAsString(raw) + "\n");
        } catch (IOException e) {
            throw new IllegalStateException("Cannot write generation_config.json in " + dir + ": " + e.getMessage(), e);
        }
    }
}
