/**
 * Sampling and scoring with a decoder: {@link comlrl.generation.Generator} (temperature, top-k, top-p, greedy, per-sequence seeds, KV cache), {@link comlrl.generation.Scorer} (log-probabilities with gradients), and {@link comlrl.generation.CausalLm}, a model with its tokenizer and generation config as loaded from and saved to a Hugging Face directory. Depends on model and tokenizer.
 */
package comlrl.generation;
