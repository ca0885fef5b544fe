package comlrl.trainers;

import comlrl.data.TaskItem;
import java.util.ArrayList;
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

    /**
     * The rows of an evaluation that drew several joint samples of each item ({@code eval_num_generations}):
     * {@code samples.get(s)} is sample s's completions in {@code [agent][item][turn]} order, every sample of the
     * same items. By default {@link #log} of each sample, rows sample after sample, so that a mean over the
     * rows averages over items and samples. A logger that reports across samples (pass@k) overrides it
     * with one row per item.
     */
    default List<Map<String, Double>> logSamples(List<List<List<List<String>>>> samples, List<TaskItem> batchItems,
            List<String> prompts) {
        List<Map<String, Double>> rows = new ArrayList<>();
        for (List<List<List<String>>> sample : samples) {
            rows.addAll(log(sample, batchItems, prompts));
        }
        return rows;
    }
}
