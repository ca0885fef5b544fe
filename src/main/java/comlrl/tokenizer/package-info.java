/**
 * Hugging Face tokenizers (tokenizer.json through the HF tokenizers library, special tokens from tokenizer_config.json) and chat templates rendered with Jinjava as transformers renders them; a tiny byte-level tokenizer for built-in models.
 */
package comlrl.tokenizer;
