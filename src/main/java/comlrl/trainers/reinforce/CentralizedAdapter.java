package comlrl.trainers.reinforce;

import comlrl.data.TaskItem;
import java.util.List;

/**
 * How one centralized actor plays every role (reference §3.7, {@code centralized_adapter}): the
 * roles' prompts are combined into one joint prompt, and the actor's joint completion is split back
 * into one output per role, which the task reward then scores as if N agents had answered.
 *
 * <p>Call order per task item: {@link #buildPrompt} once (with each role's formatted prompt), then
 * {@link #parseCompletion} once per sampled joint completion.
 */
public interface CentralizedAdapter {
    /**
     * The actor's prompt for {@code item}.
     *
     * @param agentPrompts each role's prompt ({@code formatter_r(item)}), in role order
     */
    String buildPrompt(TaskItem item, List<String> agentPrompts);

    /**
     * Splits a joint completion into exactly {@code numAgents} role outputs, in role order. Throw
     * (any runtime exception) when the completion does not follow the expected format: every role's
     * output is then {@code ""}.
     */
    List<String> parseCompletion(String completion, TaskItem item, int numAgents);
}
