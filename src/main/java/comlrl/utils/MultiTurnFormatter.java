package comlrl.utils;

import comlrl.data.TaskItem;

/**
 * A formatter that receives the external prompt of multi-turn training (Python: a formatter with an
 * {@code external_prompts} parameter). At turn 0, and whenever there is no external prompt, it is
 * called with {@code externalPrompt == null}.
 *
 * <pre>{@code
 * MultiTurnFormatter coder = (item, feedback) -> feedback == null
 *         ? "Solve:\n" + item.getString("prompt")
 *         : "Revise your solution using this feedback:\n" + feedback;
 * }</pre>
 */
@FunctionalInterface
public interface MultiTurnFormatter extends Formatter {
    /** The prompt for {@code item}; {@code externalPrompt} is null at turn 0. Never returns null. */
    @Override
    String format(TaskItem item, String externalPrompt);

    /** {@code format(item, null)}. */
    @Override
    default String format(TaskItem item) {
        return format(item, null);
    }
}
