/**
 * The decoder-only transformer families we train (Qwen2/2.5, Llama, Qwen3, Mistral): {@link comlrl.model.ModelConfig} from config.json, {@link comlrl.model.DecoderLm} (forward pass on libtorch ops, following Hugging Face), {@link comlrl.model.KvCache}, the actor-critic {@link comlrl.model.ValueHead}, Hugging Face sequence-classification (reward) models {@link comlrl.model.SequenceClassifier} (the decoder without an LM head plus {@code score.weight}), named shapes in {@link comlrl.model.ModelPresets}. Files live in {@code model.io}.
 */
package comlrl.model;
