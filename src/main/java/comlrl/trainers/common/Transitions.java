package comlrl.trainers.common;

import comlrl.data.TaskItem;
import comlrl.trainers.ExternalTransition;
import comlrl.trainers.TransitionContext;
import java.util.List;
import java.util.stream.Stream;

/** Multi-turn environment steps: the external transition, its result checked to hold one prompt per agent. */
public record Transitions(ExternalTransition transition, int numAgents) {
    /** The next turn's raw prompts, one per agent. */
    public List<String> next(TaskItem item, List<String> chosen, List<List<String>> promptHistory,
            List<List<String>> responseHistory) {
        List<String> next = transition.next(new TransitionContext(item.getString("prompt", ""), List.copyOf(chosen),
                numAgents, List.copyOf(promptHistory), List.copyOf(responseHistory), item));
        if (next == null || next.size() != numAgents) {
            throw new IllegalArgumentException("External transition must return per-agent prompts: expected "
                    + numAgents + " prompts, got " + (next == null ? "null" : next.size()));
        }
        return next;
    }

    /** {@code list} with {@code value} appended (a new unmodifiable list). */
    public static List<String> append(List<String> list, String value) {
        return Stream.concat(list.stream(), Stream.of(value)).toList();
    }
}
