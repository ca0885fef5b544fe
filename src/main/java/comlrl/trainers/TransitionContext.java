package comlrl.trainers;

import comlrl.data.TaskItem;
import java.util.List;

/**
 * What an {@link ExternalTransition} receives (the reference's keyword arguments).
 *
 * @param prompt the task item's original {@code prompt}
 * @param agentCompletions one completion per agent from the previous turn of this branch
 * @param numAgents N
 * @param promptHistoryPerAgent per agent, the prompts of this branch so far (raw external prompts after turn 1)
 * @param responseHistoryPerAgent per agent, the responses of this branch so far
 * @param item the whole task item
 */
public record TransitionContext(String prompt, List<String> agentCompletions, int numAgents,
        List<List<String>> promptHistoryPerAgent, List<List<String>> responseHistoryPerAgent, TaskItem item) {
}
