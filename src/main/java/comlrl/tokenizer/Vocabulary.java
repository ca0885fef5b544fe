package comlrl.tokenizer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * The token strings and ids of a {@code tokenizer.json}: the model's vocabulary (BPE, WordPiece,
 * WordLevel: an object token to id; Unigram: a list of [token, score] pairs, id = position) and
 * the added tokens, with their {@code special} flag. Read with a streaming parser that skips the
 * merges, and that reports malformed JSON with the file name and position.
 */
final class Vocabulary {
    private final Map<String, Long> idsByToken;
    private final Map<Long, String> tokensById;
    private final TreeSet<Long> specialIds;
    private final String modelType;
    private final int size;

    private Vocabulary(Map<String, Long> idsByToken, Map<Long, String> tokensById, TreeSet<Long> specialIds,
            String modelType) {
        this.idsByToken = idsByToken;
        this.tokensById = tokensById;
        this.specialIds = specialIds;
        this.modelType = modelType;
        long max = tokensById.keySet().stream().mapToLong(Long::longValue).max().orElse(-1);
        this.size = Math.toIntExact(max + 1);
    }

    /** Parses the bytes of {@code file} (named in errors). */
    static Vocabulary parse(byte[] json, Path file) {
        Map<String, Long> idsByToken = new HashMap<>();
        Map<Long, String> tokensById = new HashMap<>();
        TreeSet<Long> specialIds = new TreeSet<>();
        try (JsonParser p = new JsonFactory().createParser(json)) {
            expect(p.nextToken() == JsonToken.START_OBJECT, file, "the file is not a JSON object");
            String modelType = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.getCurrentName();
                p.nextToken();
                if (field.equals("model")) {
                    expect(p.currentToken() == JsonToken.START_OBJECT, file, "\"model\" is not an object");
                    modelType = readModel(p, file, idsByToken, tokensById);
                } else if (field.equals("added_tokens") && p.currentToken() == JsonToken.START_ARRAY) {
                    readAddedTokens(p, file, idsByToken, tokensById, specialIds);
                } else {
                    p.skipChildren();
                }
            }
            expect(p.nextToken() == null, file, "unexpected content after the top-level object");
            expect(modelType != null, file, "no \"model\" section: this is not a Hugging Face tokenizer.json");
            expect(!tokensById.isEmpty(), file, "the vocabulary is empty");
            return new Vocabulary(idsByToken, tokensById, specialIds, modelType);
        } catch (JsonProcessingException e) {
            throw new TokenizerException("Malformed JSON in " + file + ": " + e.getOriginalMessage()
                    + " (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")", e);
        } catch (IOException e) {
            throw new TokenizerException("Cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads the model section into the maps and returns the model type: its {@code "type"}, or for
     * older files without one what the tokenizers library infers from the fields (merges: BPE; a
     * list vocabulary: Unigram; a subword prefix or word length: WordPiece; else WordLevel).
     */
    private static String readModel(JsonParser p, Path file, Map<String, Long> idsByToken, Map<Long, String> tokensById)
            throws IOException {
        String type = null;
        String inferred = "WordLevel";
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.getCurrentName();
            JsonToken value = p.nextToken();
            if (field.equals("type") && value == JsonToken.VALUE_STRING) {
                type = p.getText();
            } else if (!field.equals("vocab")) {
                if (field.equals("merges")) {
                    inferred = "BPE";
                } else if ((field.equals("continuing_subword_prefix") || field.equals("max_input_chars_per_word"))
                        && !inferred.equals("BPE")) {
                    inferred = "WordPiece";
                }
                p.skipChildren();
            } else if (value == JsonToken.START_OBJECT) { // BPE, WordPiece, WordLevel: {"token": id}
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String token = p.getCurrentName();
                    expect(p.nextToken() == JsonToken.VALUE_NUMBER_INT, file, "vocab entry \"" + token + "\" has no integer id");
                    put(idsByToken, tokensById, token, p.getLongValue());
                }
            } else if (value == JsonToken.START_ARRAY) { // Unigram: [["token", score], ...]
                inferred = "Unigram";
                long id = 0;
                while (p.nextToken() == JsonToken.START_ARRAY) {
                    expect(p.nextToken() == JsonToken.VALUE_STRING, file, "Unigram vocab entry " + id + " has no token");
                    put(idsByToken, tokensById, p.getText(), id++);
                    while (p.nextToken() != JsonToken.END_ARRAY) {
                        p.skipChildren();
                    }
                }
            } else {
                p.skipChildren();
            }
        }
        return type != null ? type : inferred;
    }

    private static void readAddedTokens(JsonParser p, Path file, Map<String, Long> idsByToken,
            Map<Long, String> tokensById, TreeSet<Long> specialIds) throws IOException {
        while (p.nextToken() == JsonToken.START_OBJECT) {
            Long id = null;
            String content = null;
            boolean special = false;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.getCurrentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "id" -> id = value == JsonToken.VALUE_NUMBER_INT ? p.getLongValue() : null;
                    case "content" -> content = value == JsonToken.VALUE_STRING ? p.getText() : null;
                    case "special" -> special = value == JsonToken.VALUE_TRUE;
                    default -> p.skipChildren();
                }
            }
            expect(id != null && content != null, file, "an added token has no integer \"id\" or no \"content\"");
            put(idsByToken, tokensById, content, id);
            if (special) {
                specialIds.add(id);
            }
        }
    }

    private static void put(Map<String, Long> idsByToken, Map<Long, String> tokensById, String token, long id) {
        idsByToken.put(token, id);
        tokensById.put(id, token);
    }

    private static void expect(boolean condition, Path file, String problem) {
        if (!condition) {
            throw new TokenizerException("Malformed tokenizer file " + file + ": " + problem);
        }
    }

    /** The model of tokenizer.json: "BPE", "WordPiece", "WordLevel" or "Unigram". */
    String modelType() {
        return modelType;
    }

    /** Number of ids: the highest id + 1. */
    int size() {
        return size;
    }

    Long id(String token) {
        return idsByToken.get(token);
    }

    String token(long id) {
        return tokensById.get(id);
    }

    boolean isSpecial(long id) {
        return specialIds.contains(id);
    }

    long[] specialIds() {
        return specialIds.stream().mapToLong(Long::longValue).toArray();
    }
}
