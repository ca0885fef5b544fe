package comlrl.utils;

import comlrl.data.TaskItem;
import java.util.Set;

/**
 * Turns a task item into one agent's prompt (Python: {@code formatter(item)}). One formatter can be
 * shared by all agents, or a list in actor order gives each agent its role; see {@link Formatters}.
 *
 * <pre>{@code
 * Formatter brief = item -> "Write a short response to this task:\n" + item.getString("prompt");
 * Formatter fromConfig = Formatter.template("Write a short response to this task:\n{prompt}");
 * }</pre>
 *
 * A formatter that should see the external prompts of multi-turn training directly implements
 * {@link MultiTurnFormatter}; a plain formatter is called on a copy of the item whose {@code prompt}
 * holds the external prompt (see {@link Formatters#format(int, TaskItem, String)}).
 */
@FunctionalInterface
public interface Formatter {
    /** The prompt for {@code item}; never null. */
    String format(TaskItem item);

    /**
     * The prompt for {@code item} given the external prompt of a later turn ({@code null} at turn 0).
     * A plain formatter ignores {@code externalPrompt} (the reference calls formatters without an
     * {@code external_prompts} parameter as {@code f(item)}); {@link MultiTurnFormatter} overrides it.
     */
    default String format(TaskItem item, String externalPrompt) {
        return format(item);
    }

    /**
     * The task-item fields this formatter reads, each of which must hold a string in every row
     * (checked when the data is loaded, before any model: see {@link Formatters#requiredFields()}).
     * A template's placeholders; {@code prompt} for the default formatter; none for a formatter
     * written as code, unless it overrides this to declare them.
     */
    default Set<String> requiredFields() {
        return Set.of();
    }

    /**
     * A formatter filling {@code {field}} placeholders from the task item; <code>{{</code> and <code>}}</code>
     * write literal braces. See {@link TemplateFormatter}.
     *
     * @throws IllegalArgumentException for a malformed template
     */
    static TemplateFormatter template(String template) {
        return TemplateFormatter.parse(template);
    }

    /**
     * The default formatter: the external prompt when one is given, else the item's {@code prompt}
     * field ({@code ""} when absent or null).
     */
    static MultiTurnFormatter defaultFormatter() {
        return Formatters.DEFAULT;
    }
}
