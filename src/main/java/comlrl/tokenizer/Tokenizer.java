package comlrl.tokenizer;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The tokenizer of a Hugging Face model directory: {@code tokenizer.json} run by the Rust
 * tokenizers library (through DJL), plus what {@code tokenizer_config.json},
 * {@code special_tokens_map.json} and {@code chat_template.jinja} add: named special tokens, chat
 * templates, maximum length. Behaves as transformers' fast tokenizer
 * ({@code AutoTokenizer.from_pretrained(dir)}):
 *
 * <ul>
 *   <li>{@link #encode(String, boolean) encode(text, true)} is {@code tokenizer(text).input_ids}:
 *       the post-processor of tokenizer.json adds its special tokens (Llama 3.1's BOS; Qwen's
 *       none). For the Llama and Gemma tokenizer classes, whose transformers classes rebuild the
 *       post-processor from {@code add_bos_token} (default true) and {@code add_eos_token} (default
 *       false), those flags decide. There is never truncation or padding.</li>
 *   <li>{@link #decode} is {@code tokenizer.decode(ids, skip_special_tokens=...)}. Its
 *       {@code clean_up_tokenization_spaces} step applies only where transformers 5 applies it
 *       ({@link SpaceCleanup}): never for BPE tokenizers (Llama 3, Qwen, Mistral) unless the
 *       config forces it, so Llama 3's "if x != 0:" decodes back to itself. Ids the vocabulary
 *       does not have (a model's embedding is often larger than its vocabulary) decode to
 *       nothing, as in transformers.</li>
 *   <li>The pad token falls back to the eos token when the model has none, as CoMLRL's
 *       {@code ensure_pad_token} does.</li>
 * </ul>
 *
 * <p>Thread-safe for concurrent encoding and decoding; {@link #close()} frees the native
 * tokenizer and must come after all use.
 */
public final class Tokenizer implements AutoCloseable {
    /** The fast-tokenizer file every model directory must have. */
    public static final String TOKENIZER_FILE = "tokenizer.json";
    /** Special tokens, chat template, lengths (optional). */
    public static final String CONFIG_FILE = "tokenizer_config.json";
    /** Special tokens overriding those of the config (optional, older layout). */
    public static final String SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json";
    /** The chat template in its own file (optional, newer layout; overrides the config's). */
    public static final String CHAT_TEMPLATE_FILE = "chat_template.jinja";

    /** The tokenizer class transformers uses when a directory has no tokenizer_config.json. */
    private static final String GENERIC_CONFIG = "{\n  \"tokenizer_class\": \"PreTrainedTokenizerFast\"\n}\n";
    /** transformers classes whose fast tokenizer rebuilds the post-processor from add_bos/eos_token. */
    private static final Set<String> BOS_EOS_FLAG_CLASSES = Set.of("LlamaTokenizer", "LlamaTokenizerFast",
            "CodeLlamaTokenizer", "CodeLlamaTokenizerFast", "GemmaTokenizer", "GemmaTokenizerFast");

    static {
        // DJL reports usage over the network unless told not to; this library runs offline.
        if (System.getenv("OPT_OUT_TRACKING") == null && System.getProperty("OPT_OUT_TRACKING") == null) {
            System.setProperty("OPT_OUT_TRACKING", "true");
        }
    }

    private final Path directory;
    private final HuggingFaceTokenizer tokenizer;
    private final Vocabulary vocabulary;
    private final SpecialTokensConfig config;
    private final byte[] tokenizerJson;
    private final byte[] configJson;
    private final byte[] specialTokensMapJson;
    private final byte[] chatTemplateFile;
    private final Map<String, Long> specialTokenIds;
    private final boolean bosEosFromFlags;
    private final boolean cleanUpSpaces;
    private final Map<String, ChatTemplate> compiledTemplates = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private Tokenizer(Path directory, HuggingFaceTokenizer tokenizer, Vocabulary vocabulary,
            SpecialTokensConfig config, byte[] tokenizerJson, byte[] configJson, byte[] specialTokensMapJson,
            byte[] chatTemplateFile, Map<String, Long> specialTokenIds) {
        this.directory = directory;
        this.tokenizer = tokenizer;
        this.vocabulary = vocabulary;
        this.config = config;
        this.tokenizerJson = tokenizerJson;
        this.configJson = configJson;
        this.specialTokensMapJson = specialTokensMapJson;
        this.chatTemplateFile = chatTemplateFile;
        this.specialTokenIds = specialTokenIds;
        this.bosEosFromFlags = BOS_EOS_FLAG_CLASSES.contains(config.tokenizerClass);
        this.cleanUpSpaces = SpaceCleanup.applies(config, vocabulary.modelType());
    }

    /**
     * Loads the tokenizer of a model directory.
     *
     * @param dir a directory with {@code tokenizer.json} and usually {@code tokenizer_config.json}
     * @throws TokenizerException when tokenizer.json is missing, a file is malformed, or a named
     *     special token is not in the vocabulary; the message names the file and what to do
     */
    public static Tokenizer load(Path dir) {
        Objects.requireNonNull(dir, "dir");
        if (!Files.isDirectory(dir)) {
            throw new TokenizerException("Tokenizer directory " + dir + " does not exist (or is not a directory): "
                    + "pass a Hugging Face model directory that holds " + TOKENIZER_FILE);
        }
        Path tokenizerFile = dir.resolve(TOKENIZER_FILE);
        byte[] tokenizerJson = readIfExists(tokenizerFile);
        if (tokenizerJson == null) {
            throw new TokenizerException("No " + TOKENIZER_FILE + " in " + dir + " (looked for " + tokenizerFile
                    + "). CoMLRL reads Hugging Face fast tokenizers from tokenizer.json; for a model that only has "
                    + "a slow tokenizer (tokenizer.model, or vocab.json + merges.txt) write one once with "
                    + "transformers: AutoTokenizer.from_pretrained(dir).save_pretrained(dir). "
                    + "`bin/comlrl init-model` writes a working one for the built-in tiny models.");
        }
        Vocabulary vocabulary = Vocabulary.parse(tokenizerJson, tokenizerFile);
        Path configFile = dir.resolve(CONFIG_FILE);
        Path mapFile = dir.resolve(SPECIAL_TOKENS_MAP_FILE);
        byte[] configJson = readIfExists(configFile);
        byte[] mapJson = readIfExists(mapFile);
        byte[] templateBytes = readIfExists(dir.resolve(CHAT_TEMPLATE_FILE));
        String templateFile = templateBytes == null ? null : new String(templateBytes, StandardCharsets.UTF_8);
        SpecialTokensConfig config = SpecialTokensConfig.read(configJson, configFile, mapJson, mapFile, templateFile);

        Map<String, Long> specialTokenIds = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : config.tokens.entrySet()) {
            Long id = vocabulary.id(e.getValue());
            boolean required = !e.getKey().equals("unk_token") && !e.getKey().equals("mask_token")
                    && !e.getKey().equals("sep_token") && !e.getKey().equals("cls_token");
            if (id == null && required) {
                throw new TokenizerException(e.getKey() + " \"" + e.getValue() + "\" (set in "
                        + config.sources.get(e.getKey()) + " in " + dir + ") is not a token of " + tokenizerFile
                        + ": fix the token there, or add it to the added_tokens of " + TOKENIZER_FILE);
            }
            if (id != null) {
                specialTokenIds.put(e.getKey(), id);
            }
        }

        HuggingFaceTokenizer tokenizer;
        try {
            // a file path (not the directory) so that DJL does not apply tokenizer_config.json itself
            tokenizer = HuggingFaceTokenizer.newInstance(tokenizerFile,
                    Map.of("truncation", "false", "padding", "false", "addSpecialTokens", "false"));
        } catch (IOException | RuntimeException e) {
            throw new TokenizerException("The tokenizers library could not load " + tokenizerFile + ": "
                    + e.getMessage(), e);
        }
        return new Tokenizer(dir, tokenizer, vocabulary, config, tokenizerJson, configJson, mapJson, templateBytes,
                specialTokenIds);
    }

    private static byte[] readIfExists(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new TokenizerException("Cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** The directory this tokenizer was loaded from. */
    public Path directory() {
        return directory;
    }

    /**
     * Token ids of {@code text}, as transformers' {@code tokenizer(text,
     * add_special_tokens=addSpecialTokens).input_ids}, never truncated.
     */
    public long[] encode(String text, boolean addSpecialTokens) {
        Objects.requireNonNull(text, "text");
        ensureOpen();
        if (!bosEosFromFlags) {
            return tokenizer.encode(text, addSpecialTokens, false).getIds();
        }
        long[] ids = tokenizer.encode(text, false, false).getIds();
        if (!addSpecialTokens) {
            return ids;
        }
        boolean bos = config.addBosToken.orElse(true) && specialTokenIds.containsKey("bos_token");
        boolean eos = config.addEosToken.orElse(false) && specialTokenIds.containsKey("eos_token");
        long[] out = new long[ids.length + (bos ? 1 : 0) + (eos ? 1 : 0)];
        if (bos) {
            out[0] = specialTokenIds.get("bos_token");
        }
        System.arraycopy(ids, 0, out, bos ? 1 : 0, ids.length);
        if (eos) {
            out[out.length - 1] = specialTokenIds.get("eos_token");
        }
        return out;
    }

    /** {@link #encode} as ints (ids always fit). */
    public int[] encodeToInts(String text, boolean addSpecialTokens) {
        long[] ids = encode(text, addSpecialTokens);
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = Math.toIntExact(ids[i]);
        }
        return out;
    }

    /**
     * Text of {@code ids}, as transformers' {@code tokenizer.decode(ids,
     * skip_special_tokens=skipSpecialTokens)}: special tokens (added tokens flagged special) are
     * dropped when asked; ids outside the vocabulary decode to nothing; spaces are cleaned up only
     * where transformers does it ({@link SpaceCleanup}).
     *
     * @throws IllegalArgumentException for a negative id
     */
    public String decode(long[] ids, boolean skipSpecialTokens) {
        Objects.requireNonNull(ids, "ids");
        ensureOpen();
        for (long id : ids) {
            if (id < 0) {
                throw new IllegalArgumentException("negative token id " + id + " (vocabulary of " + directory
                        + " has ids 0.." + (vocabSize() - 1) + ")");
            }
        }
        String text = tokenizer.decode(ids, skipSpecialTokens);
        return cleanUpSpaces ? SpaceCleanup.cleanUp(text) : text;
    }

    /** The eos token (tokenizer_config.json's eos_token), e.g. Qwen3's {@code <|im_end|>}. */
    public String eosToken() {
        String token = config.tokens.get("eos_token");
        if (token == null) {
            throw new TokenizerException("The tokenizer in " + directory + " has no eos_token: set \"eos_token\" in "
                    + directory.resolve(CONFIG_FILE));
        }
        return token;
    }

    /** Id of {@link #eosToken()}. */
    public long eosTokenId() {
        eosToken(); // fails with a clear message when there is none
        return specialTokenIds.get("eos_token");
    }

    /** The pad token: the config's pad_token, else the eos token (CoMLRL's ensure_pad_token). */
    public String padToken() {
        String pad = config.tokens.get("pad_token");
        if (pad != null) {
            return pad;
        }
        if (config.tokens.get("eos_token") != null) {
            return config.tokens.get("eos_token");
        }
        throw new TokenizerException("The tokenizer in " + directory + " has neither a pad_token nor an eos_token "
                + "to pad with: set \"pad_token\" (or \"eos_token\") in " + directory.resolve(CONFIG_FILE));
    }

    /** Id of {@link #padToken()}. */
    public long padTokenId() {
        return vocabulary.id(padToken());
    }

    /** Whether the model defines its own pad token (false: padding uses the eos token). */
    public boolean hasOwnPadToken() {
        return config.tokens.containsKey("pad_token");
    }

    /** The bos token, if the model has one (Llama: {@code <|begin_of_text|>}; Qwen: none). */
    public Optional<String> bosToken() {
        return Optional.ofNullable(config.tokens.get("bos_token"));
    }

    /** Id of {@link #bosToken()}, if any. */
    public OptionalLong bosTokenId() {
        Long id = specialTokenIds.get("bos_token");
        return id == null ? OptionalLong.empty() : OptionalLong.of(id);
    }

    /** Id of the unk token, if the model has one that is in its vocabulary. */
    public OptionalLong unkTokenId() {
        Long id = specialTokenIds.get("unk_token");
        return id == null ? OptionalLong.empty() : OptionalLong.of(id);
    }

    /**
     * Number of token ids: the highest id of the vocabulary and added tokens + 1 (transformers'
     * {@code len(tokenizer)} when ids are contiguous). A model's {@code vocab_size} must be at least this.
     */
    public int vocabSize() {
        return vocabulary.size();
    }

    /** Id of a token string as it is in the vocabulary (byte-level: {@code "Ġworld"}), if present. */
    public OptionalLong tokenToId(String token) {
        Long id = vocabulary.id(Objects.requireNonNull(token, "token"));
        return id == null ? OptionalLong.empty() : OptionalLong.of(id);
    }

    /** The token string of an id, if the vocabulary has it. */
    public Optional<String> idToToken(long id) {
        return Optional.ofNullable(vocabulary.token(id));
    }

    /** Whether {@code id} is a special token: an added token flagged special, which decode can skip. */
    public boolean isSpecial(long id) {
        return vocabulary.isSpecial(id);
    }

    /** The ids of all special tokens, ascending. */
    public long[] specialTokenIds() {
        return vocabulary.specialIds();
    }

    /** tokenizer_config.json's model_max_length, if set and not transformers' "no limit" value. */
    public OptionalLong modelMaxLength() {
        return config.modelMaxLength;
    }

    /** tokenizer_config.json's add_bos_token, if set. */
    public Optional<Boolean> addBosToken() {
        return config.addBosToken;
    }

    /** tokenizer_config.json's tokenizer_class ("" when absent). */
    public String tokenizerClass() {
        return config.tokenizerClass;
    }

    /**
     * The special tokens as transformers passes them to chat templates ({@code special_tokens_map}):
     * {@code bos_token}, {@code eos_token}, ... for those that are set, and
     * {@code additional_special_tokens}.
     */
    public Map<String, Object> specialTokensMap() {
        Map<String, Object> map = new LinkedHashMap<>(config.tokens);
        if (!config.additionalSpecialTokens.isEmpty()) {
            map.put("additional_special_tokens", new ArrayList<>(config.additionalSpecialTokens));
        }
        return Collections.unmodifiableMap(map);
    }

    /** Names of the chat templates ("default" for the usual single one); empty when there is none. */
    public Set<String> chatTemplateNames() {
        return Collections.unmodifiableSet(config.chatTemplates.keySet());
    }

    /** Whether the model has a (default) chat template. */
    public boolean hasChatTemplate() {
        return config.chatTemplates.containsKey("default");
    }

    /**
     * The chat template called {@code name} ("default" for the usual one), compiled on first use.
     *
     * @throws TokenizerException when there is no such template
     * @throws ChatTemplateException when it does not parse
     */
    public ChatTemplate chatTemplate(String name) {
        String source = config.chatTemplates.get(name);
        if (source == null) {
            throw new TokenizerException(config.chatTemplates.isEmpty()
                    ? "The tokenizer in " + directory + " has no chat template: add \"chat_template\" to "
                    + directory.resolve(CONFIG_FILE) + " (or a " + CHAT_TEMPLATE_FILE + "), or format prompts "
                    + "without one"
                    : "The tokenizer in " + directory + " has no chat template named \"" + name + "\"; it has "
                    + config.chatTemplates.keySet());
        }
        return compiledTemplates.computeIfAbsent(name, n -> ChatTemplate.compile(source));
    }

    /** {@link #applyChatTemplate(List, boolean, Map)} without further variables. */
    public String applyChatTemplate(List<? extends Map<String, ?>> messages, boolean addGenerationPrompt) {
        return applyChatTemplate(messages, addGenerationPrompt, Map.of());
    }

    /**
     * The conversation rendered with the default chat template, as transformers'
     * {@code tokenizer.apply_chat_template(messages, tokenize=False,
     * add_generation_prompt=addGenerationPrompt, **variables)}: the template also sees
     * {@link #specialTokensMap()}; {@code variables} (e.g. {@code enable_thinking}, {@code tools})
     * come on top.
     */
    public String applyChatTemplate(List<? extends Map<String, ?>> messages, boolean addGenerationPrompt,
            Map<String, ?> variables) {
        Map<String, Object> all = new LinkedHashMap<>(specialTokensMap());
        all.putAll(variables);
        return chatTemplate("default").render(messages, addGenerationPrompt, all);
    }

    /**
     * Writes this tokenizer into {@code dir} (created if needed) so that {@link #load} reads it back
     * identically: the original bytes of tokenizer.json, tokenizer_config.json (a minimal one naming
     * {@code PreTrainedTokenizerFast} if the model had none), and special_tokens_map.json and
     * chat_template.jinja if they were loaded.
     */
    public void save(Path dir) {
        Objects.requireNonNull(dir, "dir");
        try {
            Files.createDirectories(dir);
            Files.write(dir.resolve(TOKENIZER_FILE), tokenizerJson);
            Files.write(dir.resolve(CONFIG_FILE),
                    configJson != null ? configJson : GENERIC_CONFIG.getBytes(StandardCharsets.UTF_8));
            if (specialTokensMapJson != null) {
                Files.write(dir.resolve(SPECIAL_TOKENS_MAP_FILE), specialTokensMapJson);
            }
            if (chatTemplateFile != null) {
                Files.write(dir.resolve(CHAT_TEMPLATE_FILE), chatTemplateFile);
            }
        } catch (IOException e) {
            throw new TokenizerException("Cannot save the tokenizer into " + dir + ": " + e.getMessage(), e);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("Tokenizer of " + directory + " is closed");
        }
    }

    /** Frees the native tokenizer; idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            tokenizer.close();
        }
    }

    @Override
    public String toString() {
        return "Tokenizer[" + directory + ", vocab " + vocabSize() + "]";
    }
}
