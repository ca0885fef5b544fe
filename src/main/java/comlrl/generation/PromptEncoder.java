package comlrl.generation;

import comlrl.generation.CausalLm;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Prompt text to token ids: the formatted text as is ({@code tokenizer(text)}, default special
 * tokens), or, with the chat template on, the model's chat template applied to an optional system
 * message and the text as the user message, with the generation prompt (no special tokens added
 * again, so templates that start with BOS do not get two).
 */
public record PromptEncoder(boolean chatTemplate, String systemPrompt) {
    /** Plain {@code tokenizer(text)}. */
    public static PromptEncoder plain() {
        return new PromptEncoder(false, null);
    }

    public long[] encode(CausalLm lm, String text) {
        if (!chatTemplate) {
            return lm.encode(text);
        }
        List<Map<String, Object>> messages = new ArrayList<>();
        if (systemPrompt != null) {
            messages.add(Map.of("role", "system", "content", systemPrompt));
        }
        messages.add(Map.of("role", "user", "content", text));
        return lm.tokenizer().encode(lm.tokenizer().applyChatTemplate(messages, true), false);
    }
}
