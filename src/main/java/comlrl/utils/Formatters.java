package comlrl.utils;

import comlrl.data.TaskItem;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One formatter per agent, in actor order, built with the reference's {@code build_formatters}
 * rules (§2.2): no formatter → every agent uses {@link Formatter#defaultFormatter()}; one formatter →
 * shared by all agents; a list → its length must equal num_agents. Immutable.
 *
 * <p>Multi-turn prompts follow §4.2: see {@link #format(int, TaskItem, String)} and
 * {@link #turnPrompt(int, TaskItem, String, boolean)}.
 */
public final class Formatters {
    /** Field where {@link #withExternalPrompt(TaskItem, String)} keeps the item's original prompt. */
    public static final String ORIGINAL_PROMPT_FIELD = "_original_prompt";

    static final MultiTurnFormatter DEFAULT = new MultiTurnFormatter() {
        @Override
        public String format(TaskItem item, String externalPrompt) {
            return externalPrompt != null ? externalPrompt : item.getString("prompt", "");
        }

        @Override
        public Set<String> requiredFields() {
            return Set.of("prompt");
        }

        @Override
        public String toString() {
            return "defaultFormatter()";
        }
    };

    private final List<Formatter> formatters;

    private Formatters(List<Formatter> formatters) {
        this.formatters = Collections.unmodifiableList(formatters);
    }

    /** Every agent uses {@link Formatter#defaultFormatter()}. */
    public static Formatters defaults(int numAgents) {
        return build(DEFAULT, numAgents);
    }

    /**
     * The trainers' {@code formatters} argument: null (the defaults), one {@link Formatter} for
     * every agent, or a list of them, one per agent.
     */
    @SuppressWarnings("unchecked")
    public static Formatters fromArgument(Object formatters, int numAgents) {
        if (formatters == null) {
            return defaults(numAgents);
        }
        if (formatters instanceof Formatter f) {
            return build(f, numAgents);
        }
        if (formatters instanceof List<?> l) {
            return build((List<? extends Formatter>) l, numAgents);
        }
        throw new IllegalArgumentException("formatters must be one Formatter or a list of them, got "
                + formatters.getClass());
    }

    /** {@code formatter} shared by all {@code numAgents} agents; null means the default formatter. */
    public static Formatters build(Formatter formatter, int numAgents) {
        checkNumAgents(numAgents);
        return new Formatters(new ArrayList<>(Collections.nCopies(numAgents, formatter == null ? DEFAULT : formatter)));
    }

    /**
     * One formatter per agent in actor order; null means the default formatter for every agent.
     *
     * @throws IllegalArgumentException "Number of formatters must match num_agents when providing a
     *     sequence." when the sizes differ, or when an element is null
     */
    public static Formatters build(List<? extends Formatter> formatters, int numAgents) {
        checkNumAgents(numAgents);
        if (formatters == null) {
            return defaults(numAgents);
        }
        if (formatters.size() != numAgents) {
            throw new IllegalArgumentException("Number of formatters must match num_agents when providing a sequence."
                    + " Got " + formatters.size() + " formatters for num_agents=" + numAgents
                    + "; give one per agent in actor order, or a single formatter to share.");
        }
        List<Formatter> copy = new ArrayList<>(numAgents);
        for (int i = 0; i < numAgents; i++) {
            Formatter formatter = formatters.get(i);
            if (formatter == null) {
                throw new IllegalArgumentException("Formatter for agent " + i + " is null; pass a formatter, "
                        + "or no list at all for the default formatter.");
            }
            copy.add(formatter);
        }
        return new Formatters(copy);
    }

    /**
     * Formatters from a config-file value: null → defaults; a template string → shared by all
     * agents; a list of template strings → one per agent (see {@link Formatter#template(String)}).
     */
    public static Formatters fromConfig(Object spec, int numAgents) {
        if (spec == null) {
            return defaults(numAgents);
        }
        if (spec instanceof String template) {
            return build(Formatter.template(template), numAgents);
        }
        if (spec instanceof List<?> list) {
            List<Formatter> templates = new ArrayList<>(list.size());
            for (Object element : list) {
                if (!(element instanceof String template)) {
                    throw new IllegalArgumentException("formatters must be a template string or a list of template "
                            + "strings; element " + templates.size() + " is " + element);
                }
                templates.add(Formatter.template(template));
            }
            return build(templates, numAgents);
        }
        throw new IllegalArgumentException("formatters must be a template string or a list of template strings, got "
                + spec + " (" + spec.getClass().getSimpleName() + ")");
    }

    /**
     * The fields the formatters read ({@link Formatter#requiredFields()}), each with the first
     * formatter that reads it, for messages: {@code formatters template "Q: {prompt}"} when one is
     * shared, {@code formatters[1] (agent 1) template "..."} per agent, {@code the default formatter
     * (no formatters given)}. Every row of the data must hold a string in each; formatters written as
     * code declare nothing unless they override {@link Formatter#requiredFields()}.
     */
    public Map<String, String> requiredFields() {
        boolean shared = formatters.stream().distinct().count() == 1;
        Map<String, String> fields = new LinkedHashMap<>();
        for (int agent = 0; agent < formatters.size(); agent++) {
            Formatter formatter = formatters.get(agent);
            String which = formatter == DEFAULT ? "the default formatter (no formatters given; it reads prompt)"
                    : (shared ? "formatters" : "formatters[" + agent + "] (agent " + agent + ")")
                    + (formatter instanceof TemplateFormatter t ? " template \"" + t.template() + "\"" : "");
            for (String field : formatter.requiredFields()) {
                fields.putIfAbsent(field, which);
            }
        }
        return fields;
    }

    /**
     * Checks that every field the formatters read ({@link #requiredFields()}) is one of
     * {@code columns}, so a typo in a template fails while the config is read instead of at the
     * first prompt.
     *
     * @param source the task set, for messages: {@code "dataset.train (tasks.jsonl)"}
     * @throws IllegalArgumentException naming the formatter, the missing field, the closest column
     *     and the columns there are
     */
    public void requireFields(Collection<String> columns, String source) {
        for (Map.Entry<String, String> e : requiredFields().entrySet()) {
            String field = e.getKey();
            if (columns.contains(field)) {
                continue;
            }
            String suggestion = columns.isEmpty() ? "" : "; did you mean {" + ConfigMaps.closest(field, columns) + "}?";
            throw new IllegalArgumentException(e.getValue() + " reads {" + field + "}, but " + source
                    + " has no column '" + field + "'" + suggestion + " Columns: " + columns);
        }
    }

    /** The number of agents. */
    public int numAgents() {
        return formatters.size();
    }

    /** The formatter of {@code agent}. */
    public Formatter get(int agent) {
        return formatters.get(agent);
    }

    /** All formatters, in actor order (unmodifiable). */
    public List<Formatter> asList() {
        return formatters;
    }

    /** The turn-0 prompt of {@code agent}: {@code formatter.format(item)}. */
    public String format(int agent, TaskItem item) {
        return checked(agent, formatters.get(agent).format(item));
    }

    /**
     * The prompt of {@code agent} at a later turn (§4.2, default mode): the item is copied with
     * {@code prompt} := {@code externalPrompt} (see {@link #withExternalPrompt(TaskItem, String)}) and
     * the formatter is called as {@code format(copy, externalPrompt)}, so a plain formatter reading
     * {@code prompt} sees the external prompt and a {@link MultiTurnFormatter} receives it directly.
     * With {@code externalPrompt == null} this is {@link #format(int, TaskItem)}.
     */
    public String format(int agent, TaskItem item, String externalPrompt) {
        if (externalPrompt == null) {
            return format(agent, item);
        }
        return checked(agent, formatters.get(agent).format(withExternalPrompt(item, externalPrompt), externalPrompt));
    }

    /**
     * The model prompt of {@code agent} for one turn: with {@code passthrough}
     * ({@code external_prompt_passthrough}) and an external prompt, the external prompt verbatim;
     * otherwise {@link #format(int, TaskItem, String)}.
     */
    public String turnPrompt(int agent, TaskItem item, String externalPrompt, boolean passthrough) {
        if (passthrough && externalPrompt != null) {
            return externalPrompt;
        }
        return format(agent, item, externalPrompt);
    }

    /**
     * A copy of {@code item} with {@code prompt} := {@code externalPrompt}; the original prompt is
     * kept in {@value #ORIGINAL_PROMPT_FIELD} (unless that field is already set, so the first prompt
     * survives several turns).
     */
    public static TaskItem withExternalPrompt(TaskItem item, String externalPrompt) {
        Objects.requireNonNull(externalPrompt, "externalPrompt");
        TaskItem copy = item.has(ORIGINAL_PROMPT_FIELD) ? item : item.with(ORIGINAL_PROMPT_FIELD, item.get("prompt"));
        return copy.with("prompt", externalPrompt);
    }

    @Override
    public String toString() {
        return "Formatters" + formatters;
    }

    private static String checked(int agent, String prompt) {
        if (prompt == null) {
            throw new IllegalStateException("Formatter must return a string prompt. The formatter of agent " + agent
                    + " returned null.");
        }
        return prompt;
    }

    private static void checkNumAgents(int numAgents) {
        if (numAgents < 1) {
            throw new IllegalArgumentException("num_agents must be >= 1, got " + numAgents);
        }
    }
}
