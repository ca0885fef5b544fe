package comlrl.tokenizer;

import java.util.Map;

/**
 * transformers' {@code clean_up_tokenization_spaces} step of {@code decode}, and when transformers
 * (5.x) applies it. The step removes the space before {@code . ? ! ,} and before the contractions
 * {@code n't 'm 's 've 're}, and turns {@code " ' "} into {@code "'"}; it was made for WordPiece
 * tokenizers, whose decoders put a space between all tokens.
 *
 * <p>The fast tokenizer ({@code TokenizersBackend}, which every class we load is in transformers
 * 5) applies it when
 *
 * <pre>
 *   clean_up_tokenization_spaces                                       (tokenizer_config.json, default false)
 *   and (backend model is not BPE
 *        or clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output)  (default false)
 * </pre>
 *
 * so Llama 3's {@code "clean_up_tokenization_spaces": true} does nothing: {@code "if x != 0:"}
 * decodes back to itself. The backend model is the one the tokenizer class builds when its
 * transformers class rebuilds the backend with a fixed model ({@link #CLASS_MODELS}: Qwen2, Llama,
 * GPT-2, ... build BPE; BERT WordPiece; T5 Unigram), otherwise the {@code model.type} of
 * tokenizer.json ({@code PreTrainedTokenizerFast} and classes transformers does not know).
 */
final class SpaceCleanup {
    /**
     * transformers 5.18's tokenizer classes (without the "Fast" suffix, which it ignores) whose
     * constructor builds the backend with a fixed model, and that model. Checked against
     * transformers by the test resource {@code decode/class-models.json}.
     */
    static final Map<String, String> CLASS_MODELS = Map.ofEntries(
            bpe("BartTokenizer"), bpe("BlenderbotTokenizer"), bpe("CLIPTokenizer"), bpe("CodeLlamaTokenizer"),
            bpe("CohereTokenizer"), bpe("DebertaTokenizer"), bpe("EsmcTokenizer"), bpe("GPT2Tokenizer"),
            bpe("GPTNeoXTokenizer"), bpe("GemmaTokenizer"), bpe("HerbertTokenizer"), bpe("LEDTokenizer"),
            bpe("LayoutLMv3Tokenizer"), bpe("LlamaTokenizer"), bpe("LukeTokenizer"), bpe("MarkupLMTokenizer"),
            bpe("MvpTokenizer"), bpe("NllbTokenizer"), bpe("NougatTokenizer"), bpe("OpenAIGPTTokenizer"),
            bpe("Qwen2Tokenizer"), bpe("Qwen3_5Tokenizer"), bpe("ReformerTokenizer"), bpe("RobertaTokenizer"),
            bpe("SeamlessM4TTokenizer"), bpe("Siglip2Tokenizer"), bpe("WhisperTokenizer"),
            wordPiece("BertTokenizer"), wordPiece("DPRQuestionEncoderTokenizer"), wordPiece("FunnelTokenizer"),
            wordPiece("LayoutLMv2Tokenizer"), wordPiece("LxmertTokenizer"), wordPiece("MPNetTokenizer"),
            wordPiece("MobileBertTokenizer"), wordPiece("SplinterTokenizer"),
            unigram("AlbertTokenizer"), unigram("BigBirdTokenizer"), unigram("DebertaV2Tokenizer"),
            unigram("LasrTokenizer"), unigram("LayoutXLMTokenizer"), unigram("MBart50Tokenizer"),
            unigram("MBartTokenizer"), unigram("PegasusTokenizer"), unigram("RemBertTokenizer"),
            unigram("T5Tokenizer"), unigram("UdopTokenizer"), unigram("VideoPrismTokenizer"),
            unigram("XGLMTokenizer"), unigram("XLMRobertaTokenizer"), unigram("XLNetTokenizer"));

    private SpaceCleanup() {}

    private static Map.Entry<String, String> bpe(String tokenizerClass) {
        return Map.entry(tokenizerClass, "BPE");
    }

    private static Map.Entry<String, String> wordPiece(String tokenizerClass) {
        return Map.entry(tokenizerClass, "WordPiece");
    }

    private static Map.Entry<String, String> unigram(String tokenizerClass) {
        return Map.entry(tokenizerClass, "Unigram");
    }

    /**
     * Whether decode cleans up spaces, as transformers decides it for this configuration.
     *
     * @param tokenizerClass tokenizer_config.json's tokenizer_class ("" when absent)
     * @param tokenizerJsonModel the model type of tokenizer.json ("BPE", "WordPiece", ...)
     */
    static boolean applies(SpecialTokensConfig config, String tokenizerJsonModel) {
        if (!config.cleanUpTokenizationSpaces) {
            return false;
        }
        String name = config.tokenizerClass.endsWith("Fast")
                ? config.tokenizerClass.substring(0, config.tokenizerClass.length() - 4) : config.tokenizerClass;
        String backendModel = CLASS_MODELS.getOrDefault(name, tokenizerJsonModel);
        return !backendModel.equals("BPE") || config.cleanUpTokenizationSpacesForBpe;
    }

    /** transformers' {@code clean_up_tokenization}, the replacements in its order. */
    static String cleanUp(String text) {
        return text.replace(" .", ".").replace(" ?", "?").replace(" !", "!").replace(" ,", ",")
                .replace(" ' ", "'").replace(" n't", "n't").replace(" 'm", "'m").replace(" 's", "'s")
                .replace(" 've", "'ve").replace(" 're", "'re");
    }
}
