package comlrl.trainers;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Resolves which models become the agents, with the reference's rules and messages: a shortcut
 * ({@code agent_model}) replicated per agent, or an explicit list ({@code agents}); both only when
 * the list names the same model as the shortcut.
 */
public final class AgentSources {
    private AgentSources() {
    }

    /**
     * @param kind "agents" or "critics" (used in messages)
     * @param shortcut the homogeneous shortcut (a model id or directory), or null
     * @param models the explicit list (Strings or loaded model objects), or null
     * @param expectedCount the number of entries needed
     * @param label what the count means in messages ("num_agents")
     * @return one source per entry (Strings or objects)
     */
    public static List<Object> resolve(String kind, Object shortcut, List<?> models, int expectedCount, String label) {
        String shortcutName = kind.equals("agents") ? "agent_model" : "critic_model";
        if (shortcut == null && models == null) {
            throw new IllegalArgumentException("Either " + shortcutName + " or " + kind + " must be provided.");
        }
        if (models != null) {
            if (models.size() != expectedCount) {
                throw new IllegalArgumentException(kind + " length (" + models.size() + ") must match " + label
                        + " (" + expectedCount + ").");
            }
            for (int i = 0; i < models.size(); i++) {
                if (models.get(i) == null) {
                    throw new IllegalArgumentException(kind + "[" + i + "] is null; every entry needs a model");
                }
            }
            for (Object m : shortcut == null ? List.of() : models) {
                if (!(m instanceof String)) {
                    throw new IllegalArgumentException("Cannot provide both " + shortcutName + " and " + kind
                            + " unless " + kind + " is a list of model names.");
                }
                if (!m.equals(shortcut)) {
                    throw new IllegalArgumentException("Model name conflict: " + kind + " entry '" + m
                            + "' differs from the shortcut '" + shortcut + "'; give only one of them, or "
                            + "make them name the same model");
                }
            }
            return new ArrayList<>(models);
        }
        return new ArrayList<>(Collections.nCopies(expectedCount, shortcut));
    }
}
