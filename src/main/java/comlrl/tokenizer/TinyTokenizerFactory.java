package comlrl.tokenizer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes the tokenizer of the built-in random-weight tiny models ({@code bin/comlrl init-model}): a
 * byte-level BPE in Hugging Face's {@code tokenizer.json} format that any Hugging Face loader (and
 * {@link Tokenizer#load}) reads, with a Qwen-style ChatML chat template.
 *
 * <p>Vocabulary, ids in this order:
 * <ol>
 *   <li>0..255: the 256 bytes, id = byte value, each written as GPT-2's {@code bytes_to_unicode}
 *       character (so every text, in any script, encodes and decodes back exactly);</li>
 *   <li>256..{@code 256+MERGES-1}: {@value #MERGES} tokens made by merges learned with byte-pair
 *       encoding from a small built-in English text, so that common words are one or a few tokens.
 *       Deterministic: the most frequent pair first, ties broken by the pair's text;</li>
 *   <li>then the special tokens {@code <|endoftext|>} (eos and pad), {@code <|im_start|>},
 *       {@code <|im_end|>}.</li>
 * </ol>
 * The pre-tokenizer and decoder are {@code ByteLevel} (GPT-2's split, no prefix space); no
 * normalizer, so decode(encode(text)) == text for any text.
 */
public final class TinyTokenizerFactory {
    /** Number of tokens made by learned merges. */
    public static final int MERGES = 256;
    /** The end-of-text token: eos and pad of the tiny models. */
    public static final String END_OF_TEXT = "<|endoftext|>";
    /** Starts a ChatML turn. */
    public static final String IM_START = "<|im_start|>";
    /** Ends a ChatML turn. */
    public static final String IM_END = "<|im_end|>";
    /** Id of {@link #END_OF_TEXT}. */
    public static final int END_OF_TEXT_ID = 256 + MERGES;
    /** Id of {@link #IM_START}. */
    public static final int IM_START_ID = END_OF_TEXT_ID + 1;
    /** Id of {@link #IM_END}. */
    public static final int IM_END_ID = END_OF_TEXT_ID + 2;
    /** Number of token ids: bytes + merges + 3 special tokens. */
    public static final int VOCAB_SIZE = END_OF_TEXT_ID + 3;

    /** A ChatML template in Qwen's style (no default system message). */
    public static final String CHAT_TEMPLATE = """
            {%- for message in messages %}
                {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}
            {%- endfor %}
            {%- if add_generation_prompt %}
                {{- '<|im_start|>assistant\\n' }}
            {%- endif %}
            """;

    /** GPT-2's pre-tokenization split, which the ByteLevel pre-tokenizer applies. */
    private static final Pattern GPT2_SPLIT = Pattern.compile(
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");

    /** The text the merges are learned from (plain English of the kind prompts and answers use). */
    private static final String CORPUS = """
            The agents work together to solve the task. Each agent reads the prompt and writes an answer,
            and the reward function scores how well the answers fit together. When the reward is high, the
            training makes those answers more likely; when it is low, less likely. This is how the agents
            learn to cooperate with each other over many turns of the conversation.
            Write a short story about a city in the clouds. The people there build bridges of light between
            the towers, and every morning the children run across them to school. In the evening they watch
            the sun go down over the sea of white below, and they tell stories of the world under the clouds.
            Here is a function that returns the sum of two numbers. It takes the first number and the second
            number as input, adds them, and then returns the result to the caller. You should test it with
            positive and negative values, with zero, and with very large numbers that could overflow.
            The model is small and its weights are random, so what it writes has no meaning yet. It is used
            to check that the code runs from the start to the end: loading, generation, rewards, the loss,
            the update of the parameters, saving and loading again. A real model is much larger than this.
            Please answer the question in one or two sentences. What is the capital of France? Paris is the
            capital of France, and it is also its largest city. Which of these is the right answer, and why?
            I think that the second one is better because it is shorter and it says the same thing.
            """;

    private TinyTokenizerFactory() {}

    /** The vocabulary size {@link #write} produces (bytes, merges and special tokens). */
    public static int vocabSize() {
        return VOCAB_SIZE;
    }

    /**
     * Writes {@code tokenizer.json} and {@code tokenizer_config.json} (no model_max_length, so
     * nothing is truncated) into {@code dir}, creating it if needed.
     *
     * @return the vocabulary size, for the model's config
     */
    public static int write(Path dir) {
        return write(dir, 0);
    }

    /**
     * As {@link #write(Path)}, with {@code model_max_length} set to {@code modelMaxLength} when it is
     * positive (the model's maximum sequence length).
     */
    public static int write(Path dir, int modelMaxLength) {
        Objects.requireNonNull(dir, "dir");
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        try {
            Files.createDirectories(dir);
            Files.write(dir.resolve(Tokenizer.TOKENIZER_FILE), json.writeValueAsBytes(tokenizerJson()));
            Files.write(dir.resolve(Tokenizer.CONFIG_FILE), json.writeValueAsBytes(tokenizerConfig(modelMaxLength)));
        } catch (IOException e) {
            throw new TokenizerException("Cannot write the tiny tokenizer into " + dir + ": " + e.getMessage(), e);
        }
        return VOCAB_SIZE;
    }

    /** The contents of tokenizer.json. */
    static Map<String, Object> tokenizerJson() {
        List<String[]> merges = learnMerges(CORPUS, MERGES);
        Map<String, Object> vocab = new LinkedHashMap<>();
        String[] byteTokens = byteTokens();
        for (int b = 0; b < 256; b++) {
            vocab.put(byteTokens[b], b);
        }
        List<String> mergeStrings = new ArrayList<>();
        for (String[] pair : merges) {
            vocab.putIfAbsent(pair[0] + pair[1], vocab.size()); // two merges may make the same token
            mergeStrings.add(pair[0] + " " + pair[1]);
        }
        if (vocab.size() != END_OF_TEXT_ID) {
            throw new IllegalStateException("merges made " + (vocab.size() - 256) + " tokens, expected " + MERGES);
        }
        List<Object> added = List.of(addedToken(END_OF_TEXT_ID, END_OF_TEXT), addedToken(IM_START_ID, IM_START),
                addedToken(IM_END_ID, IM_END));

        Map<String, Object> byteLevel = new LinkedHashMap<>();
        byteLevel.put("type", "ByteLevel");
        byteLevel.put("add_prefix_space", false);
        byteLevel.put("trim_offsets", false);
        byteLevel.put("use_regex", true);

        Map<String, Object> model = new LinkedHashMap<>();
        model.put("type", "BPE");
        model.put("dropout", null);
        model.put("unk_token", null);
        model.put("continuing_subword_prefix", null);
        model.put("end_of_word_suffix", null);
        model.put("fuse_unk", false);
        model.put("byte_fallback", false);
        model.put("ignore_merges", false);
        model.put("vocab", vocab);
        model.put("merges", mergeStrings);

        Map<String, Object> root = new LinkedHashMap<>();
        root.put("version", "1.0");
        root.put("truncation", null);
        root.put("padding", null);
        root.put("added_tokens", added);
        root.put("normalizer", null);
        root.put("pre_tokenizer", byteLevel);
        root.put("post_processor", byteLevel);
        root.put("decoder", byteLevel);
        root.put("model", model);
        return root;
    }

    private static Map<String, Object> addedToken(int id, String content) {
        Map<String, Object> token = new LinkedHashMap<>();
        token.put("id", id);
        token.put("content", content);
        token.put("single_word", false);
        token.put("lstrip", false);
        token.put("rstrip", false);
        token.put("normalized", false);
        token.put("special", true);
        return token;
    }

    /** The contents of tokenizer_config.json. */
    static Map<String, Object> tokenizerConfig(int modelMaxLength) {
        Map<String, Object> decoder = new LinkedHashMap<>();
        for (int id = END_OF_TEXT_ID; id < VOCAB_SIZE; id++) {
            Map<String, Object> token = addedToken(id, List.of(END_OF_TEXT, IM_START, IM_END).get(id - END_OF_TEXT_ID));
            token.remove("id");
            decoder.put(Integer.toString(id), token);
        }
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("add_bos_token", false);
        config.put("add_prefix_space", false);
        config.put("added_tokens_decoder", decoder);
        config.put("additional_special_tokens", List.of(IM_START, IM_END));
        config.put("bos_token", null);
        config.put("chat_template", CHAT_TEMPLATE);
        config.put("clean_up_tokenization_spaces", false);
        config.put("eos_token", END_OF_TEXT);
        config.put("errors", "replace");
        if (modelMaxLength > 0) {
            config.put("model_max_length", modelMaxLength);
        }
        config.put("pad_token", END_OF_TEXT);
        config.put("split_special_tokens", false);
        config.put("tokenizer_class", "PreTrainedTokenizerFast");
        config.put("unk_token", null);
        return config;
    }

    /**
     * GPT-2's {@code bytes_to_unicode}: printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand
     * for themselves, the other 68 bytes for the characters U+0100, U+0101, ... in byte order.
     */
    static String[] byteTokens() {
        String[] tokens = new String[256];
        int next = 256;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            tokens[b] = new String(Character.toChars(printable ? b : next++));
        }
        return tokens;
    }

    /**
     * Learns merges from {@code text} until they have made {@code count} distinct tokens: split it
     * as the pre-tokenizer does, write each piece's UTF-8 bytes as byte tokens, then repeatedly merge
     * the most frequent adjacent pair (ties: the smaller "left right" text). Stops early only if no
     * pair is left.
     */
    static List<String[]> learnMerges(String text, int count) {
        String[] byteTokens = byteTokens();
        Map<String, Integer> pieceCounts = new TreeMap<>();
        Matcher m = GPT2_SPLIT.matcher(text);
        while (m.find()) {
            pieceCounts.merge(m.group(), 1, Integer::sum);
        }
        List<List<String>> words = new ArrayList<>();
        List<Integer> frequencies = new ArrayList<>();
        for (Map.Entry<String, Integer> e : pieceCounts.entrySet()) {
            List<String> symbols = new ArrayList<>();
            for (byte b : e.getKey().getBytes(StandardCharsets.UTF_8)) {
                symbols.add(byteTokens[b & 0xFF]);
            }
            words.add(symbols);
            frequencies.add(e.getValue());
        }
        List<String[]> merges = new ArrayList<>();
        Set<String> made = new HashSet<>();
        while (made.size() < count) {
            Map<String, Integer> pairCounts = new HashMap<>();
            for (int w = 0; w < words.size(); w++) {
                List<String> symbols = words.get(w);
                for (int i = 0; i + 1 < symbols.size(); i++) {
                    pairCounts.merge(symbols.get(i) + " " + symbols.get(i + 1), frequencies.get(w), Integer::sum);
                }
            }
            if (pairCounts.isEmpty()) {
                break;
            }
            String best = Collections.max(pairCounts.entrySet(), (a, b) -> a.getValue().equals(b.getValue())
                    ? b.getKey().compareTo(a.getKey()) : Integer.compare(a.getValue(), b.getValue())).getKey();
            String[] pair = best.split(" ", 2);
            merges.add(pair);
            String merged = pair[0] + pair[1];
            made.add(merged);
            for (List<String> symbols : words) {
                for (int i = 0; i + 1 < symbols.size(); i++) {
                    if (symbols.get(i).equals(pair[0]) && symbols.get(i + 1).equals(pair[1])) {
                        symbols.set(i, merged);
                        symbols.remove(i + 1);
                    }
                }
            }
        }
        return merges;
    }
}
