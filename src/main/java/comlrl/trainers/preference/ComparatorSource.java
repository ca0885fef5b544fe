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

    /**
     * {@code n} completions of one agent for a prompt of its own (centralized comparator
     * generation: one agent writes every role's answer).
     */
    default List<String> generateOne(int agent, TaskItem item, String prompt, int n, long seed) {
        throw new UnsupportedOperationException("this comparator cannot answer a joint prompt");
    }

    /**
     * Whether each process of a ddp run (the agents split) generates the candidates of the agents it
     * holds, nulls for the others, and the processes' lists are merged; else one process (rank 0)
     * generates every agent's and sends them.
     */
    default boolean perProcess() {
        return false;
    }

    @Override
    default void close() {
    }
}
