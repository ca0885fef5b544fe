package comlrl.trainers;

import comlrl.data.TaskItem;
import java.util.List;
import java.util.Map;

/**
 * Custom evaluation metrics, per task item: receives completions in {@code [agent][item][turn]}
 * order, the task items and their raw prompts, and returns one map of metrics per item.
 */
@FunctionalInterface
public interface EvalLogger {
    List<Map<String, Double>> log(List<List<List<String>>> agentCompletionsTurns, List<TaskItem> batchItems,
            List<String> prompts);
}
