package comlrl.tokenizer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What {@code tokenizer_config.json}, {@code special_tokens_map.json} and
 * {@code chat_template.jinja} say: the named special tokens, chat templates, maximum length and
 * encoding flags. As in transformers, {@code special_tokens_map.json} overrides the special tokens
 * of {@code tokenizer_config.json}, and {@code chat_template.jinja} its {@code chat_template}.
 *
 * <p>A token is written as a string, as an AddedToken object {@code {"content": "<s>", ...}}, or as
 * null (none).
 */
final class SpecialTokensConfig {
    /** The named special tokens transformers knows, in its order. */
    static final List<String> NAMED_TOKENS =
            List.of("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token");
    /** transformers' VERY_LARGE_INTEGER: a model_max_length at least this large means "no limit". */
    private static final BigInteger NO_LIMIT = BigInteger.valueOf(1_000_000_000_000_000L);

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Token name to its content, for the named tokens that are set. */
    final Map<String, String> tokens = new LinkedHashMap<>();
    /** Token name to the file that set it (for error messages). */
    final Map<String, String> sources = new LinkedHashMap<>();
    final List<String> additionalSpecialTokens = new ArrayList<>();
    /** Template name to source; "default" for a single unnamed template. */
    final Map<String, String> chatTemplates = new LinkedHashMap<>();
    OptionalLong modelMaxLength = OptionalLong.empty();
    Optional<Boolean> addBosToken = Optional.empty();
    Optional<Boolean> addEosToken = Optional.empty();
    /** clean_up_tokenization_spaces (default false); see {@link SpaceCleanup} for when it applies. */
    boolean cleanUpTokenizationSpaces;
    /** clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output (default false). */
    boolean cleanUpTokenizationSpacesForBpe;
    String tokenizerClass = "";

    /**
     * Reads the configuration files that exist (each may be null: absent).
     *
     * @param config bytes of tokenizer_config.json
     * @param specialTokensMap bytes of special_tokens_map.json
     * @param chatTemplateFile text of chat_template.jinja
     */
    static SpecialTokensConfig read(byte[] config, Path configFile, byte[] specialTokensMap, Path mapFile,
            String chatTemplateFile) {
        SpecialTokensConfig c = new SpecialTokensConfig();
        if (config != null) {
            JsonNode root = parseObject(config, configFile);
            c.readTokens(root, configFile);
            c.readChatTemplate(root.get("chat_template"), configFile);
            JsonNode max = root.get("model_max_length");
            if (max != null && max.isNumber()) {
                BigInteger value = max.bigIntegerValue();
                if (value.signum() > 0 && value.compareTo(NO_LIMIT) < 0) {
                    c.modelMaxLength = OptionalLong.of(value.longValueExact());
                }
            }
            c.addBosToken = bool(root.get("add_bos_token"));
            c.addEosToken = bool(root.get("add_eos_token"));
            c.cleanUpTokenizationSpaces = bool(root.get("clean_up_tokenization_spaces")).orElse(false);
            c.cleanUpTokenizationSpacesForBpe =
                    bool(root.get("clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output"))
                            .orElse(false);
            JsonNode tokenizerClass = root.get("tokenizer_class");
            c.tokenizerClass = tokenizerClass != null && tokenizerClass.isTextual() ? tokenizerClass.asText() : "";
        }
        if (specialTokensMap != null) {
            c.readTokens(parseObject(specialTokensMap, mapFile), mapFile);
        }
        if (chatTemplateFile != null) {
            c.chatTemplates.clear();
            c.chatTemplates.put("default", chatTemplateFile);
        }
        return c;
    }

    private void readTokens(JsonNode root, Path file) {
        for (String name : NAMED_TOKENS) {
            if (root.has(name)) {
                String content = tokenContent(root.get(name), name, file);
                if (content == null) {
                    tokens.remove(name);
                } else {
                    tokens.put(name, content);
                }
                sources.put(name, file.getFileName().toString());
            }
        }
        JsonNode additional = root.get("additional_special_tokens");
        if (additional != null && additional.isArray()) {
            additionalSpecialTokens.clear();
            for (JsonNode token : additional) {
                String content = tokenContent(token, "additional_special_tokens", file);
                if (content != null) {
                    additionalSpecialTokens.add(content);
                }
            }
        }
    }

    private static String tokenContent(JsonNode node, String name, Path file) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (node.isTextual()) {
            return node.asText();
        }
        if (node.isObject() && node.has("content") && node.get("content").isTextual()) {
            return node.get("content").asText();
        }
        throw new TokenizerException("In " + file + ", " + name + " must be a string, an AddedToken object "
                + "{\"content\": \"...\"} or null, not " + node);
    }

    private void readChatTemplate(JsonNode node, Path file) {
        if (node == null || node.isNull()) {
            return;
        }
        if (node.isTextual()) {
            chatTemplates.put("default", node.asText());
            return;
        }
        if (node.isArray()) {
            for (JsonNode entry : node) {
                JsonNode name = entry.get("name");
                JsonNode template = entry.get("template");
                if (name == null || !name.isTextual() || template == null || !template.isTextual()) {
                    throw new TokenizerException("In " + file + ", each entry of the chat_template list must be "
                            + "{\"name\": \"...\", \"template\": \"...\"}, not " + entry);
                }
                chatTemplates.put(name.asText(), template.asText());
            }
            return;
        }
        throw new TokenizerException("In " + file + ", chat_template must be a string or a list of "
                + "{\"name\", \"template\"} objects, not " + node.getNodeType());
    }

    private static Optional<Boolean> bool(JsonNode node) {
        return node != null && node.isBoolean() ? Optional.of(node.asBoolean()) : Optional.empty();
    }

    /** Parses a JSON object, with the file and the position in the message when it is malformed. */
    static JsonNode parseObject(byte[] json, Path file) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new TokenizerException("Malformed JSON in " + file + ": " + e.getOriginalMessage()
                    + (e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr() + ")"), e);
        } catch (IOException e) {
            throw new TokenizerException("Cannot read " + file + ": " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new TokenizerException("Malformed " + file + ": expected a JSON object, found "
                    + (root == null ? "nothing" : root.getNodeType().toString().toLowerCase(java.util.Locale.ROOT)));
        }
        return root;
    }

    List<String> additionalSpecialTokens() {
        return Collections.unmodifiableList(additionalSpecialTokens);
    }
}
