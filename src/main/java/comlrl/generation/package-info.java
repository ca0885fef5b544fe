/**
 * Sampling and scoring with a decoder: {@link comlrl.generation.Generator} (temperature, top-k, top-p, greedy, per-sequence seeds, KV cache), {@link comlrl.generation.Scorer} (log-probabilities with gradients), and {@link comlrl.generation.CausalLm}, a model with its tokenizer and generation config as loaded from and saved to a Hugging Face directory; {@link comlrl.generation.CausalLmWithValueHead} (a model and its value head), {@link comlrl.generation.PromptEncoder} (prompt text to ids, chat template or not) and {@link comlrl.generation.SeedStream} (a run's checkpointed stream of sampling seeds). Depends on model and tokenizer.
 */
package comlrl.generation;
