package comlrl.generation.api;

import comlrl.utils.ConfigNames;
import java.util.List;

/**
 * The wire format an {@link ApiComparator} speaks (config key {@code comparator_api_format}). What
 * each one sends and reads is described on {@link ApiComparator}.
 */
public enum ApiFormat {
    /** Our own JSON schema: one POST with the prompt, the sampling settings and the batch item. */
    GENERIC("generic"),
    /** OpenAI Chat Completions ({@code /v1/chat/completions}) and the many servers that copy it. */
    OPENAI_CHAT("openai", "openai_chat", "chat"),
    /** Anthropic Messages ({@code /v1/messages}). */
    ANTHROPIC("anthropic", "anthropic_messages", "messages"),
    /** OpenAI Responses ({@code /v1/responses}). */
    OPENAI_RESPONSES("openai_responses", "responses", "codex");

    private final String configName;
    private final List<String> aliases;

    ApiFormat(String configName, String... aliases) {
        this.configName = configName;
        this.aliases = List.of(aliases);
    }

    /** The config spelling: "generic", "openai", "anthropic" or "openai_responses". */
    public String configName() {
        return configName;
    }

    /** Other accepted spellings, e.g. "chat" for {@link #OPENAI_CHAT}. */
    public List<String> aliases() {
        return aliases;
    }

    /** Whether {@code comparator_api_model} must be set: every format but {@link #GENERIC}. */
    public boolean requiresModel() {
        return this != GENERIC;
    }

    /**
     * The format named {@code value} (its config name or an alias; case and surrounding blanks
     * ignored); {@link #GENERIC} when {@code value} is null.
     *
     * @throws IllegalArgumentException for any other name, listing the valid ones and their aliases
     */
    public static ApiFormat parse(String value) {
        return ConfigNames.parse(ApiComparatorSettings.FORMAT, value, GENERIC, values(), ApiFormat::configName,
                ApiFormat::aliases, "");
    }
}
