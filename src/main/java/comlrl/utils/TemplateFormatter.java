package comlrl.utils;

import comlrl.data.TaskItem;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A formatter from a template string, for config files:
 * {@code "Write a short response to this task:\n{prompt}"}. Each {@code {field}} is replaced by the
 * task item's field (its {@code toString()}; a null value gives the empty string); <code>{{</code> and
 * <code>}}</code> write a literal brace. There are no format specs: everything between the braces is the
 * field name (surrounding blanks ignored). A missing field fails with the fields the item has.
 * Every placeholder is a {@link #requiredFields() required field}: a run checks, before any model
 * loads, that each row holds a string there (see {@code TaskSet.requireRows}). Immutable.
 */
public final class TemplateFormatter implements Formatter {
    private final String template;
    private final List<String> literals;   // literals.size() == fields.size() + 1
    private final List<String> fields;

    private TemplateFormatter(String template, List<String> literals, List<String> fields) {
        this.template = template;
        this.literals = literals;
        this.fields = fields;
    }

    static TemplateFormatter parse(String template) {
        if (template == null) {
            throw new IllegalArgumentException("formatter template must not be null");
        }
        List<String> literals = new ArrayList<>();
        List<String> fields = new ArrayList<>();
        StringBuilder literal = new StringBuilder();
        int i = 0;
        while (i < template.length()) {
            char c = template.charAt(i);
            if (c == '{') {
                if (i + 1 < template.length() && template.charAt(i + 1) == '{') {
                    literal.append('{');
                    i += 2;
                    continue;
                }
                int close = template.indexOf('}', i + 1);
                int nestedOpen = template.indexOf('{', i + 1);
                if (close < 0) {
                    throw malformed(template, "'{' at index " + i + " is never closed (write '{{' for a literal brace)");
                }
                if (nestedOpen >= 0 && nestedOpen < close) {
                    throw malformed(template, "'{' at index " + nestedOpen + " inside a placeholder");
                }
                String field = template.substring(i + 1, close).trim();
                if (field.isEmpty()) {
                    throw malformed(template, "empty placeholder '{}' at index " + i
                            + "; name a task item field, e.g. {prompt}");
                }
                literals.add(literal.toString());
                literal.setLength(0);
                fields.add(field);
                i = close + 1;
            } else if (c == '}') {
                if (i + 1 < template.length() && template.charAt(i + 1) == '}') {
                    literal.append('}');
                    i += 2;
                    continue;
                }
                throw malformed(template, "unmatched '}' at index " + i + " (write '}}' for a literal brace)");
            } else {
                literal.append(c);
                i++;
            }
        }
        literals.add(literal.toString());
        return new TemplateFormatter(template, List.copyOf(literals), List.copyOf(fields));
    }

    @Override
    public String format(TaskItem item) {
        StringBuilder prompt = new StringBuilder(literals.get(0));
        for (int f = 0; f < fields.size(); f++) {
            String field = fields.get(f);
            if (!item.has(field)) {
                throw new IllegalArgumentException("Formatter template placeholder {" + field
                        + "} names a field the task item does not have; fields present: " + item.asMap().keySet()
                        + " (template: \"" + template + "\")");
            }
            Object value = item.get(field);
            prompt.append(value == null ? "" : value.toString());
            prompt.append(literals.get(f + 1));
        }
        return prompt.toString();
    }

    /** The template text as given. */
    public String template() {
        return template;
    }

    /** The distinct field names the template reads, in order of first use. */
    public Set<String> placeholders() {
        return Collections.unmodifiableSet(new LinkedHashSet<>(fields));
    }

    /** {@link #placeholders()}: every field the template reads must hold a string. */
    @Override
    public Set<String> requiredFields() {
        return placeholders();
    }

    @Override
    public String toString() {
        return "template(\"" + template + "\")";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TemplateFormatter t && t.template.equals(template);
    }

    @Override
    public int hashCode() {
        return template.hashCode();
    }

    private static IllegalArgumentException malformed(String template, String problem) {
        return new IllegalArgumentException("Malformed formatter template: " + problem + ". Template: \"" + template + "\"");
    }
}
