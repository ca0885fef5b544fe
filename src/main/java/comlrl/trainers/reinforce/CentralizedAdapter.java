package comlrl.trainers.reinforce;

import comlrl.data.TaskItem;
import java.util.List;

/**
 * How one centralized actor plays every role (reference §3.7, {@code centralized_adapter}): the roles'
 * prompts are joined into one, and each joint completion is split back into one output per role.
 * Per task item: {@link #buildPrompt} once, then {@link #parseCompletion} once per joint completion.
 */
public interface CentralizedAdapter {
    /** The actor's prompt for {@code item}, from each role's prompt ({@code formatter_r(item)}), in role order. */
    String buildPrompt(TaskItem item, List<String> agentPrompts);

    /**
     * Splits a joint completion into exactly {@code numAgents} role outputs, in role order; throw (any
     * runtime exception) when it does not follow the format, and every role's output is {@code ""}.
     */
    List<String> parseCompletion(String completion, TaskItem item, int numAgents);
}
