package comlrl.trainers.actorcritic;

import comlrl.utils.ConfigField;
import comlrl.utils.ConfigName;
import java.util.Locale;

/**
 * {@code critic_type}: what the critic conditions on (reference §5.5, §5.6).
 */
public enum CriticType implements ConfigName {
    /** {@code V(h)}: the value of the prompt alone, read at the prompt's last token. Config: "v". */
    V,
    /** {@code Q(h, a)}: the value of the prompt and the response, read at the response's last token. Config: "q". */
    Q;

    /** The {@code critic_type} config field (default "v"), for the actor-critic configs and MARLHFConfig. */
    public static final ConfigField<CriticType> CONFIG_FIELD = ConfigField.choice("critic_type", V,
            CriticType::parse, CriticType::configName)
            .means("What the critic values: v (the prompt) or q (the prompt and the agents' answers).");

    /** Whether the critic's input includes the agent's response (Q) or only the prompt (V). */
    public boolean readsResponse() {
        return this == Q;
    }

    /** Parses "v" or "q" (case and blanks ignored; null: "v", the reference's {@code (critic_type or "v").lower()}). */
    public static CriticType parse(String value) {
        return switch (value == null ? "v" : value.trim().toLowerCase(Locale.ROOT)) {
            case "v" -> V;
            case "q" -> Q;
            default -> throw new IllegalArgumentException("critic_type must be one of: 'v', 'q' (got \"" + value
                    + "\"): 'v' values the prompt, V(h); 'q' values the prompt with the response, Q(h, a)");
        };
    }

    @Override
    public String toString() {
        return configName();
    }
}
