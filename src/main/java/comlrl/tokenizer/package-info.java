/**
 * Tokenizers and chat templates of Hugging Face model directories, in pure Java (no libtorch).
 *
 * <p>This package owns:
 * <ul>
 *   <li>{@link comlrl.tokenizer.Tokenizer}: loads {@code tokenizer.json} (run by the Rust tokenizers
 *       library through DJL, never truncating or padding) with {@code tokenizer_config.json},
 *       {@code special_tokens_map.json} and {@code chat_template.jinja}; encodes, decodes and
 *       resolves the special tokens (pad falls back to eos) as transformers does (the clean-up of
 *       decoded spaces where transformers 5 applies it: {@code SpaceCleanup}), and saves the
 *       files back unchanged;</li>
 *   <li>{@link comlrl.tokenizer.ChatTemplate}: renders Jinja2 chat templates with Jinjava, byte for
 *       byte as transformers' {@code apply_chat_template} (Python slicing, {@code namespace},
 *       string methods, {@code tojson}, whitespace control, {@code raise_exception}, None, and
 *       Python's operators through {@code PyOperators}/{@code PyExpressions}), and fails loudly on
 *       any template error, including the TypeErrors Jinja2 raises;</li>
 *   <li>{@link comlrl.tokenizer.TinyTokenizerFactory}: the deterministic byte-level BPE tokenizer
 *       with a ChatML template that the built-in tiny models use.</li>
 * </ul>
 *
 * <p>Errors that users can fix (missing or malformed files, unknown special tokens) are
 * {@link comlrl.tokenizer.TokenizerException}s naming the file; template problems are
 * {@link comlrl.tokenizer.ChatTemplateException}s. Tests that need the real Qwen3 and Llama 3
 * tokenizers read them from {@code .fixtures/}, filled by {@code scripts/fetch-fixtures.sh}.
 */
package comlrl.tokenizer;
