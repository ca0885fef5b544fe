package comlrl.trainers.preference;

import comlrl.data.TaskItem;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Who writes an iteration's comparator candidates (reference §7.4, {@code comparator_policy}): for
 * one task item, {@code n} completions of every agent's prompt.
 */
interface ComparatorSource extends AutoCloseable {
    /**
     * Per agent, {@code n} completion texts (candidate k is the k-th of every agent) of its prompt text
     * or ids (the ids for the agents' own tokenizers), with one seed per agent from the comparator's stream.
     */
    default List<List<String>> generate(TaskItem item, List<String> promptTexts, List<long[]> promptIds, int n,
            long[] seeds) {
        return IntStream.range(0, promptTexts.size())
                .mapToObj(i -> generateOne(i, item, promptTexts.get(i), n, seeds[i])).toList();
    }

    /** {@code n} completions of one agent for a prompt text (centralized: one agent writes every role's answer). */
    List<String> generateOne(int agent, TaskItem item, String prompt, int n, long seed);

    /** Whether each process (the agents split) generates its agents' candidates (nulls for the others); else rank 0. */
    default boolean perProcess() {
        return false;
    }

    @Override
    default void close() {
    }
}
