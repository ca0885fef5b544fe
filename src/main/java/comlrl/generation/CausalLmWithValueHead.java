package comlrl.generation;

import comlrl.model.ValueHead;

/**
 * A causal LM and, when it is a critic or a shared-backbone actor, its value head (reference
 * {@code CausalLMWithValueHead}); {@code valueHead()} is null for a pure actor. The head reads the
 * model's final hidden states, one value per token. Restore a saved head with
 * {@code valueHead().restore(dir)} (the reference's {@code value_head.load_state_dict(...)}).
 */
public record CausalLmWithValueHead(CausalLm model, ValueHead valueHead) {
}
