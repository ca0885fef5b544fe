package comlrl.utils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.data.TaskItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FormattersTest {
    private static final TaskItem ITEM = item();

    private static TaskItem item() {
        Map<String, Object> fields = new java.util.LinkedHashMap<>();
        fields.put("prompt", "Invent a new holiday.");
        fields.put("target_min", 2.0);
        fields.put("target_max", 3.0);
        return TaskItem.of(fields);
    }

    private static final Formatter BRIEF =
            item -> "Write a short response to this task:\n" + item.getString("prompt");
    private static final Formatter DETAILED =
            item -> "Write a detailed response to this task:\n" + item.getString("prompt");

    @Test
    void seedDocFormatterCheck() {
        // spec: assert item["prompt"] in brief_formatter(item)
        assertThat(BRIEF.format(ITEM)).contains(ITEM.getString("prompt"));
    }

    @Test
    void templateFillsFieldsAndEscapes() {
        TemplateFormatter template = Formatter.template("Write a short response to this task:\n{prompt}");
        assertThat(template.format(ITEM)).isEqualTo(BRIEF.format(ITEM));
        assertThat(Formatter.template("{{literal}} ratio in [{ target_min }, {target_max}]}}").format(ITEM))
                .isEqualTo("{literal} ratio in [2.0, 3.0]}");
        assertThat(Formatter.template("no placeholders").format(ITEM)).isEqualTo("no placeholders");
        assertThat(Formatter.template("{prompt}{prompt}").placeholders()).containsExactly("prompt");
        assertThat(Formatter.template("").format(ITEM)).isEmpty();
        assertThat(Formatter.template("x{a}").format(TaskItem.of(nullValued("a")))).isEqualTo("x");
    }

    private static Map<String, Object> nullValued(String field) {
        Map<String, Object> map = new java.util.HashMap<>();
        map.put(field, null);
        return map;
    }

    @Test
    void templateMissingFieldNamesFieldsPresent() {
        assertThatThrownBy(() -> Formatter.template("Solve {question}").format(ITEM))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("{question}")
                .hasMessageContaining("fields present: [prompt, target_min, target_max]");
    }

    @Test
    void malformedTemplates() {
        assertThatThrownBy(() -> Formatter.template("Solve {prompt"))
                .hasMessageContaining("'{' at index 6 is never closed");
        assertThatThrownBy(() -> Formatter.template("a } b"))
                .hasMessageContaining("unmatched '}' at index 2");
        assertThatThrownBy(() -> Formatter.template("x {} y"))
                .hasMessageContaining("empty placeholder");
        assertThatThrownBy(() -> Formatter.template("{a{b}}"))
                .hasMessageContaining("inside a placeholder");
        assertThatThrownBy(() -> Formatter.template(null)).hasMessageContaining("must not be null");
    }

    @Test
    void defaultFormatterReadsPromptOrExternalPrompt() {
        Formatter fallback = Formatter.defaultFormatter();
        assertThat(fallback.format(ITEM)).isEqualTo("Invent a new holiday.");
        assertThat(fallback.format(ITEM, "feedback")).isEqualTo("feedback");
        assertThat(fallback.format(TaskItem.of(Map.of("question", "q")))).isEmpty();
    }

    @Test
    void buildWithAList() {
        Formatters formatters = Formatters.build(List.of(BRIEF, DETAILED), 2);
        assertThat(formatters.numAgents()).isEqualTo(2);
        assertThat(formatters.format(0, ITEM)).startsWith("Write a short");
        assertThat(formatters.format(1, ITEM)).startsWith("Write a detailed");
        assertThat(formatters.asList()).containsExactly(BRIEF, DETAILED);
    }

    @Test
    void listLengthMustMatchNumAgents() {
        assertThatThrownBy(() -> Formatters.build(List.of(BRIEF, DETAILED), 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Number of formatters must match num_agents when providing a sequence.")
                .hasMessageContaining("Got 2 formatters for num_agents=3");
        List<Formatter> withNull = new ArrayList<>();
        withNull.add(BRIEF);
        withNull.add(null);
        assertThatThrownBy(() -> Formatters.build(withNull, 2)).hasMessageContaining("agent 1 is null");
        assertThatThrownBy(() -> Formatters.build(BRIEF, 0)).hasMessageContaining("num_agents must be >= 1");
    }

    @Test
    void singleOrNoFormatterIsShared() {
        Formatters shared = Formatters.build(BRIEF, 3);
        assertThat(shared.asList()).containsExactly(BRIEF, BRIEF, BRIEF);
        assertThat(Formatters.build((Formatter) null, 2).format(1, ITEM)).isEqualTo("Invent a new holiday.");
        assertThat(Formatters.build((List<Formatter>) null, 2).get(0)).isSameAs(Formatter.defaultFormatter());
        assertThat(Formatters.defaults(2).numAgents()).isEqualTo(2);
    }

    @Test
    void plainFormatterSeesTheExternalPromptAsItsItemPrompt() {
        Formatters formatters = Formatters.build(BRIEF, 1);
        assertThat(formatters.format(0, ITEM, "Revise: too long."))
                .isEqualTo("Write a short response to this task:\nRevise: too long.");
        assertThat(formatters.format(0, ITEM, null)).isEqualTo(BRIEF.format(ITEM));
    }

    @Test
    void multiTurnFormatterReceivesTheExternalPrompt() {
        List<String> seen = new ArrayList<>();
        MultiTurnFormatter coder = (item, feedback) -> {
            seen.add(item.getString("prompt") + "|" + item.getString(Formatters.ORIGINAL_PROMPT_FIELD, "-"));
            return feedback == null ? "Solve: " + item.getString("prompt") : "Revise: " + feedback;
        };
        Formatters formatters = Formatters.build(coder, 1);
        assertThat(formatters.format(0, ITEM)).isEqualTo("Solve: Invent a new holiday.");
        assertThat(formatters.format(0, ITEM, "tests failed")).isEqualTo("Revise: tests failed");
        assertThat(seen).containsExactly("Invent a new holiday.|-", "tests failed|Invent a new holiday.");
        assertThat(coder.format(ITEM)).isEqualTo("Solve: Invent a new holiday.");   // format(item) = format(item, null)
    }

    @Test
    void withExternalPromptKeepsTheFirstOriginal() {
        TaskItem turn1 = Formatters.withExternalPrompt(ITEM, "second");
        TaskItem turn2 = Formatters.withExternalPrompt(turn1, "third");
        assertThat(turn2.getString("prompt")).isEqualTo("third");
        assertThat(turn2.getString(Formatters.ORIGINAL_PROMPT_FIELD)).isEqualTo("Invent a new holiday.");
        assertThat(ITEM.has(Formatters.ORIGINAL_PROMPT_FIELD)).isFalse();
    }

    @Test
    void passthroughUsesTheExternalPromptVerbatim() {
        Formatters formatters = Formatters.build(BRIEF, 1);
        assertThat(formatters.turnPrompt(0, ITEM, "verbatim", true)).isEqualTo("verbatim");
        assertThat(formatters.turnPrompt(0, ITEM, null, true)).isEqualTo(BRIEF.format(ITEM));
        assertThat(formatters.turnPrompt(0, ITEM, "ext", false)).endsWith("\next");
    }

    @Test
    void nullPromptIsAnError() {
        Formatters formatters = Formatters.build(item -> null, 1);
        assertThatThrownBy(() -> formatters.format(0, ITEM))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Formatter must return a string prompt.");
    }

    @Test
    void fromConfig() {
        Formatters formatters = Formatters.fromConfig(List.of(
                "Write a short response to this task:\n{prompt}",
                "Write a detailed response to this task:\n{prompt}"), 2);
        assertThat(formatters.format(0, ITEM)).isEqualTo(BRIEF.format(ITEM));
        assertThat(formatters.format(1, ITEM)).isEqualTo(DETAILED.format(ITEM));
        assertThat(Formatters.fromConfig("{prompt}!", 2).format(1, ITEM)).isEqualTo("Invent a new holiday.!");
        assertThat(Formatters.fromConfig(null, 2).get(0)).isSameAs(Formatter.defaultFormatter());
        assertThatThrownBy(() -> Formatters.fromConfig(List.of("{prompt}"), 2))
                .hasMessageStartingWith("Number of formatters must match num_agents");
        assertThatThrownBy(() -> Formatters.fromConfig(List.of(3), 1)).hasMessageContaining("element 0 is 3");
        assertThatThrownBy(() -> Formatters.fromConfig(7, 1)).hasMessageContaining("template string");
    }

    @Test
    void requireFieldsNamesTheTemplateTheFieldAndTheColumns() {
        List<String> columns = List.of("prompt", "target_min", "target_max");
        Formatters.fromConfig(List.of("Short: {prompt}", "Long: {prompt} in [{target_min}, {target_max}]"), 2)
                .requireFields(columns, "dataset.train (t.jsonl)");
        Formatters.build(BRIEF, 2).requireFields(List.of(), "x");   // code formatters are not checked
        assertThatThrownBy(() -> Formatters.fromConfig(List.of("Short: {prompt}", "Long: {promt}"), 2)
                .requireFields(columns, "dataset.train (t.jsonl)"))
                .hasMessage("formatters[1] (agent 1) template \"Long: {promt}\" reads {promt}, but dataset.train (t.jsonl) "
                        + "has no column 'promt'; did you mean {prompt}? Columns: [prompt, target_min, target_max]");
        assertThatThrownBy(() -> Formatters.fromConfig("Q: {question}", 2).requireFields(columns, "dataset.eval (e.csv)"))
                .hasMessageStartingWith("formatters template \"Q: {question}\" reads {question}, but dataset.eval (e.csv)");
    }

    @Test
    void requiredFieldsNameTheFieldsEachFormatterReadsAndWho() {
        assertThat(Formatters.defaults(2).requiredFields())
                .containsExactly(Map.entry("prompt", "the default formatter (no formatters given; it reads prompt)"));
        assertThat(Formatters.fromConfig(List.of("Short: {prompt}", "Long: {prompt} in [{target_min}, {target_max}]"), 2)
                .requiredFields()).containsExactly(
                        Map.entry("prompt", "formatters[0] (agent 0) template \"Short: {prompt}\""),
                        Map.entry("target_min", "formatters[1] (agent 1) template \"Long: {prompt} in "
                                + "[{target_min}, {target_max}]\""),
                        Map.entry("target_max", "formatters[1] (agent 1) template \"Long: {prompt} in "
                                + "[{target_min}, {target_max}]\""));
        assertThat(Formatters.fromConfig("Q: {question}", 2).requiredFields())
                .containsExactly(Map.entry("question", "formatters template \"Q: {question}\""));
        assertThat(Formatters.build(BRIEF, 2).requiredFields()).as("code declares nothing unless it says so").isEmpty();
    }
}
