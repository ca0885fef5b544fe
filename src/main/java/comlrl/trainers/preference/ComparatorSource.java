package comlrl.trainers.preference;

import comlrl.data.TaskItem;
import java.util.List;

/**
 * Who writes an iteration's comparator candidates (reference §7.4, {@code comparator_policy}): for
 * one task item, {@code n} completions of every agent's prompt.
 */
interface ComparatorSource extends AutoCloseable {
    /**
     * @param promptTexts each agent's formatted prompt
     * @param promptIds each agent's encoded prompt (for the agents' own tokenizers)
     * @param seeds one seed per agent, from the comparator's own stream
     * @return per agent, {@code n} completion texts (aligned: candidate k is the k-th of every agent)
     */
    List<List<String>> generate(TaskItem item, List<String> promptTexts, List<long[]> promptIds, int n, long[] seeds);

    @Override
    default void close() {
    }
}
