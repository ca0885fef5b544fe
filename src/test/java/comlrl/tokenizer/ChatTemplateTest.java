package comlrl.tokenizer;

import static comlrl.tokenizer.QwenChatTemplateTest.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Jinja2 semantics ChatTemplate adds to Jinjava, one construct at a time. Expected values are
 * what Jinja2 (as configured by transformers) renders, worked out by hand and checked with Jinja2.
 */
class ChatTemplateTest {
    private static final List<Map<String, Object>> CONVERSATION = List.of(message("system", "S"),
            message("user", "U1"), message("assistant", "A1"), message("user", "U2"));

    private static String render(String template) {
        return ChatTemplate.compile(template).render(CONVERSATION, true);
    }

    private static String render(String template, Map<String, ?> variables) {
        return ChatTemplate.compile(template).render(CONVERSATION, true, variables);
    }

    @Test
    void pythonSlicesIncludingSteps() {
        assertThat(render("{% for m in messages[::-1] %}{{ m.role }},{% endfor %}")).isEqualTo("user,assistant,user,system,");
        assertThat(render("{% for m in messages[::-2] %}{{ m.content }};{% endfor %}")).isEqualTo("U2;U1;");
        assertThat(render("{{ messages[1:]|length }} {{ messages[:-1]|length }} {{ messages[-1].content }}")).isEqualTo("3 3 U2");
        assertThat(render("{{ 'abcdef'[1:5:2] }} {{ 'abcdef'[::-1] }} {{ 'héllo'[-3:] }} {{ 'ab'[5:] }}|"))
                .isEqualTo("bd fedcba llo |");
        assertThat(render("{{ messages[0].content[::-1] }}{{ (messages|map(attribute='content')|list)[1:3]|join }}"))
                .isEqualTo("SU1A1");
    }

    @Test
    void namespaceWithSeveralKeywordArgumentsAndExpressions() {
        assertThat(render("{% set ns = namespace(a=1, last=messages|length - 1, s='x' ~ 'y') %}"
                + "{% for m in messages %}{% if m.role == 'user' %}{% set ns.a = loop.index0 %}{% endif %}{% endfor %}"
                + "{{ ns.a }}|{{ ns.last }}|{{ ns.s }}")).isEqualTo("3|3|xy");
    }

    @Test
    void pythonStringMethods() {
        // split keeps empty fields (Java's would drop the trailing one)
        assertThat(render("{{ 'a</think>'.split('</think>')[-1] }}|{{ 'a,b,,c,'.split(',')|length }}|{{ '  a  b '.split()|join('+') }}"))
                .isEqualTo("|5|a+b");
        assertThat(render("{{ '\\n\\nx\\n'.strip('\\n') }}|{{ 'xxabcxx'.lstrip('x') }}|{{ 'xxabcxx'.rstrip('x') }}|{{ ' \\t y \\n'.strip() }}"))
                .isEqualTo("x|abcxx|xxabc|y");
        assertThat(render("{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith(('lo', 'x')) }} {{ 'Hello'.startswith('lo') }}"))
                .isEqualTo("True True False");
        assertThat(render("{{ 'a-b-c'.replace('-', '+') }} {{ 'a-b-c'.replace('-', '', 1) }} {{ 'abc'.upper() }} {{ 'ABC'.lower() }}"))
                .isEqualTo("a+b+c ab-c ABC abc");
        assertThat(render("{{ 'hello world'.title() }} {{ 'hello'.capitalize() }} {{ 'a,b,c'.rsplit(',', 1)|join('|') }} {{ ', '.join(['x', 'y']) }}"))
                .isEqualTo("Hello World Hello a,b|c x, y");
        assertThat(render("{{ 'abcabc'.find('c') }} {{ 'abcabc'.rfind('c') }} {{ 'abcabc'.count('bc') }} {{ '42'.isdigit() }}"))
                .isEqualTo("2 5 2 True");
    }

    @Test
    void dictMethodsAndItemsFilter() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("x", 1);
        d.put("y", 2);
        assertThat(render("{% for k, v in d|items %}{{ k }}={{ v }} {% endfor %}|{% for k, v in d.items() %}{{ k }}{% endfor %}"
                + "|{{ d.keys()|join }}|{{ d.get('x') }}{{ d.get('z', 'none') }}", Map.of("d", d)))
                .isEqualTo("x=1 y=2 |xy|xy|1none");
    }

    @Test
    void toJsonIsPythonJsonDumps() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("a", 1);
        d.put("b", List.of(1, 2.5, true));
        d.put("c", "é\"<>&");
        d.put("n", null);
        assertThat(render("{{ d|tojson }}", Map.of("d", d)))
                .isEqualTo("{\"a\": 1, \"b\": [1, 2.5, true], \"c\": \"é\\\"<>&\", \"n\": null}");
        assertThat(render("{{ [1, 'x']|tojson(indent=2) }}")).isEqualTo("[\n  1,\n  \"x\"\n]");
        assertThat(render("{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }} {{ 'é'|tojson(ensure_ascii=true) }}"))
                .isEqualTo("{\"a\": 2, \"b\": 1} \"\\u00e9\"");
    }

    @Test
    void valuesPrintAsPythonStrDoes() {
        assertThat(render("{{ true }} {{ [true, none, 'x'] }} {{ {'a': 'it\\'s'} }} {{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e-7 }} {{ 3 }}"))
                .isEqualTo("True [True, None, 'x'] {'a': \"it's\"} 1.0 0.30000000000000004 1e-07 3");
        assertThat(render("{{ {'a': 1, 'b': [1, 2]}|string }}|{{ undefined_variable }}|")).isEqualTo("{'a': 1, 'b': [1, 2]}||");
    }

    @Test
    void testsBindTighterThanNot() {
        // Jinja2: "not tools is defined" is "not (tools is defined)"
        assertThat(render("{{ not tools is defined }} {{ not nothing is defined }} {{ not tools is none }}",
                Map.of("tools", List.of()))).isEqualTo("False True True");
        assertThat(render("{{ messages|length is divisibleby 2 }} {{ 'abc' is iterable }} {{ 'abc' is sequence }} "
                + "{{ messages[0] is mapping }} {{ messages[0].x is not defined }}")).isEqualTo("True True True True True");
    }

    @Test
    void whitespaceControlAsJinja2WithTrimAndLstripBlocks() {
        // trim_blocks: the newline after a block tag goes; lstrip_blocks: indentation before a tag
        // alone on its line goes; neither touches text in the middle of a line
        assertThat(render("{% for m in messages %}\n  {% if not loop.last %}\n  {{ m.role }}, {% endif %}\n{% endfor %}\nend\n"))
                .isEqualTo("  system,   user,   assistant, end");
        assertThat(render("{% for m in messages %}{{ m.role }}{% if not loop.last %}, {% endif %}{% endfor %}"))
                .isEqualTo("system, user, assistant, user");
        // '-' strips all whitespace on its side, '+' keeps what lstrip/trim would remove
        assertThat(render("a  \n  {%- if true -%}  \n  b  \n  {%- endif %}\n  {%+ if true %}c{% endif +%}\nd"))
                .isEqualTo("ab  c\nd");
        // comments vanish with the same rules; {{- -}} strips around output
        assertThat(render("x\n{# note #}\ny {{- ' z ' -}} \n w")).isEqualTo("x\ny z w");
        // one trailing newline of the template is dropped, like Jinja2's keep_trailing_newline=False
        assertThat(render("{{ 'last' }}\n")).isEqualTo("last");
        assertThat(render("line\r\nnext")).isEqualTo("line\nnext");
    }

    @Test
    void loopFiltersCountOnlyThePassingItems() {
        // Jinjava ignores "if" in a for tag; Jinja2 filters, and loop.* counts the kept items
        assertThat(render("{% for m in messages if m.role == 'user' %}{{ loop.index }}{{ m.content }}"
                + "{% if loop.last %}.{% endif %}{% endfor %}")).isEqualTo("1U12U2.");
        assertThat(render("{% for m in messages if m.role == 'tool' %}x{% else %}none{% endfor %}")).isEqualTo("none");
        assertThat(render("{% for k in {'a': 1, 'b': 2} if k != 'a' %}{{ k }}{% endfor %}|{% for k in {'x': 1} %}{{ k }}{% endfor %}"))
                .isEqualTo("b|x");
    }

    @Test
    void loopsIterateAsPythonAndElseRunsOnlyForNoItems() {
        // a string gives its characters, a dict its keys; else only when nothing was iterated
        assertThat(render("{% for c in 'héllo' if c != 'l' %}{{ c }}.{% endfor %}|{% for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %}"))
                .isEqualTo("h.é.o.|ab");
        assertThat(render("{% for m in messages %}x{% else %}none{% endfor %}|{% for m in [] %}x{% else %}"
                + "{% if true %}none{% else %}?{% endif %}{% endfor %}|{% for m in undefined_list %}x{% else %}empty{% endfor %}"))
                .isEqualTo("xxxx|none|empty");
    }

    @Test
    void stringLiteralsUsePythonEscapes() {
        assertThat(render("{{ '\\u00e9\\x41\\'\\\"' }}|{{ \"tab\\there\" }}|{{ 'back\\\\slash' }}|{{ 'keep\\q' }}"))
                .isEqualTo("éA'\"|tab\there|back\\slash|keep\\q");
    }

    @Test
    void numericFiltersAsJinja2() {
        assertThat(render("{{ [1, 2, 3]|sum }} {{ [1, 2.5]|sum }} {{ [3, 1, 2]|max }} {{ ['b', 'A', 'c']|min }} "
                + "{{ messages|max(attribute='content') }}")).isEqualTo("6 3.5 3 A {'role': 'user', 'content': 'U2'}");
    }

    @Test
    void integerArithmeticIsPythons() {
        // Jinjava saturated 10 ** 20 to Long.MAX_VALUE, wrapped 2 ** 63 - 1 + 1, truncated -7 % 3 to -1
        assertThat(render("{{ 10 ** 20 }} {{ 9223372036854775807 + 1 }} {{ 3037000500 * 3037000500 }}"))
                .isEqualTo("100000000000000000000 9223372036854775808 9223372037000250000");
        // floor division and modulo round towards minus infinity: -7 = 2 * -4 + 1... = 3 * -3 + 2
        assertThat(render("{{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ -7.5 % 2 }} {{ 7 / 2 }} {{ 2 ** -1 }}"))
                .isEqualTo("-4 2 -2 0.5 3.5 0.5");
        // ** binds tighter than * (Jinjava: (2 * 3) ** 2 = 36); 2 ** 3 ** 2 is (2 ** 3) ** 2 in Jinja2
        assertThat(render("{{ 2 * 3 ** 2 }} {{ 2 ** 3 ** 2 }} {{ [1, 2]|sum * 10 ** 19 }} {{ '-' * 3 }}"))
                .isEqualTo("18 64 30000000000000000000 ---");
        assertThatThrownBy(() -> render("{{ 5 // 0 }}")).isInstanceOf(ChatTemplateException.class)
                .hasMessage("Chat template failed to render: ZeroDivisionError: integer division or modulo by zero (line 1)");
    }

    @Test
    void noneIsPythonsNone() {
        Map<String, Object> withNone = new HashMap<>();
        withNone.put("role", "assistant");
        withNone.put("content", null);
        ChatTemplate t = ChatTemplate.compile("{{ messages[0].content }}|{{ messages[0].content is none }}"
                + "|{{ messages[0].content is defined }}|{{ 'a' ~ none }}|{{ [none, 1, true]|join(',') }}"
                + "|{{ messages[0].missing is none }}|{{ tools is none }}");
        assertThat(t.render(List.of(withNone), false)).isEqualTo("None|True|True|aNone|None,1,True|False|True");
    }

    @Test
    void joiningOrAddingNonStringsFailsAsInJinja2() {
        // Jinjava printed "anull" and "<s>[{type=text, text=hi}]"; Jinja2 raises TypeError
        Map<String, Object> part = new LinkedHashMap<>();
        part.put("type", "text");
        part.put("text", "hi");
        Map<String, Object> parts = Map.of("role", "user", "content", List.of(part));
        ChatTemplate plus = ChatTemplate.compile("{{ '<s>' + messages[0].content }}");
        assertThatThrownBy(() -> plus.render(List.of(parts), false)).isInstanceOf(ChatTemplateException.class)
                .hasMessage("Chat template failed to render: TypeError: can only concatenate str (not \"list\") to str "
                        + "(line 1)");
        ChatTemplate join = ChatTemplate.compile("{{ ', '.join(messages[0].content) }}");
        assertThatThrownBy(() -> join.render(List.of(parts), false)).isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("TypeError: sequence item 0: expected str instance, dict found");
        // the join filter prints str() of each item, as Jinja2's does
        assertThat(ChatTemplate.compile("{{ messages[0].content|join }}").render(List.of(parts), false))
                .isEqualTo("{'type': 'text', 'text': 'hi'}");
    }

    @Test
    void truthinessIsPythons() {
        // Jinjava took the string "false" for false
        assertThat(render("{% if 'false' %}T{% endif %}|{{ 'False' or 'x' }}|{{ 'a' and 'b' }}|{{ not 'false' }}"
                + "|{{ [] or 'e' }}|{% if 0.0 %}x{% elif [0] %}L{% endif %}")).isEqualTo("T|False|b|False|e|L");
    }

    @Test
    void rendersConcurrentlyWithoutInterference() throws Exception {
        ChatTemplate t = ChatTemplate.compile("{% for m in messages[::-1] %}{{ m.content.strip() }}{% endfor %}");
        var pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            List<java.util.concurrent.Future<String>> results = new java.util.ArrayList<>();
            for (int i = 0; i < 200; i++) {
                String n = Integer.toString(i);
                results.add(pool.submit(() -> t.render(List.of(message("user", " a" + n + " "), message("user", "b")), false)));
            }
            for (int i = 0; i < results.size(); i++) {
                assertThat(results.get(i).get()).isEqualTo("ba" + i);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void rawBlocksAndGenerationTags() {
        assertThat(render("{% raw %}{{ kept }}{% endraw %} {% generation %}\n{{ 'gen' }}\n{% endgeneration %}\nafter"))
                .isEqualTo("{{ kept }} gen\nafter");
    }

    @Test
    void messageContentIsNeverInterpretedAsATemplate() {
        ChatTemplate t = ChatTemplate.compile("{{ messages[0].content }}");
        assertThat(t.render(List.of(message("user", "{{ 1 + 1 }} {% if x %}")), false)).isEqualTo("{{ 1 + 1 }} {% if x %}");
    }

    @Test
    void variablesAndGenerationPrompt() {
        ChatTemplate t = ChatTemplate.compile("{{ bos_token }}{{ messages|length }}{% if add_generation_prompt %}+{% endif %}");
        assertThat(t.render(List.of(message("user", "u")), true, Map.of("bos_token", "<s>"))).isEqualTo("<s>1+");
        assertThat(t.render(List.of(message("user", "u")), false)).isEqualTo("1");
        Map<String, Object> withNull = new HashMap<>();
        withNull.put("bos_token", null);
        assertThat(t.render(List.of(), false, withNull)).isEqualTo("0");
    }

    @Test
    void raiseExceptionFailsTheRenderWithTheTemplatesMessage() {
        ChatTemplate t = ChatTemplate.compile("{% if messages[0].role != 'user' %}"
                + "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}ok");
        assertThat(t.render(List.of(message("user", "u")), false)).isEqualTo("ok");
        assertThatThrownBy(() -> t.render(List.of(message("system", "s")), false))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessage("Chat template raised an exception: "
                        + "Conversation roles must alternate user/assistant/user/assistant/...");
    }

    @Test
    void syntaxErrorsFailAtCompileTime() {
        assertThatThrownBy(() -> ChatTemplate.compile("{% for m in messages %}{{ m.role }}"))
                .isInstanceOf(ChatTemplateException.class).hasMessageStartingWith("Chat template does not parse");
        assertThatThrownBy(() -> ChatTemplate.compile("{{ 'unterminated }}"))
                .isInstanceOf(ChatTemplateException.class).hasMessageContaining("unterminated string literal at line 1");
        assertThatThrownBy(() -> ChatTemplate.compile("text\n{{ messages[0]"))
                .isInstanceOf(ChatTemplateException.class).hasMessageContaining("unclosed '{{' at line 2");
        assertThatThrownBy(() -> ChatTemplate.compile("{% if x %}{% endfor %}"))
                .isInstanceOf(ChatTemplateException.class).hasMessageStartingWith("Chat template does not parse");
    }

    @Test
    void unknownFiltersFailAtCompileTimeAsInJinja2() {
        // Jinjava would print nothing for an unknown filter; Jinja2 refuses the template
        assertThatThrownBy(() -> ChatTemplate.compile("{{ messages|no_such_filter }}"))
                .isInstanceOf(ChatTemplateException.class).hasMessageContaining("unknown filter 'no_such_filter'");
    }

    @Test
    void errorsWhileRenderingAreReportedNotIgnored() {
        ChatTemplate unknownFunction = ChatTemplate.compile("{{ no_such_function(1) }}");
        assertThatThrownBy(() -> unknownFunction.render(List.of(), false))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("Chat template failed to render").hasMessageContaining("no_such_function");
        ChatTemplate badMethodArgument = ChatTemplate.compile("{{ messages[0].content.split('') }}");
        assertThatThrownBy(() -> badMethodArgument.render(List.of(message("user", "u")), false))
                .isInstanceOf(ChatTemplateException.class).hasMessageContaining("empty separator");
        ChatTemplate sliceOfNone = ChatTemplate.compile("{{ nothing[::-1] }}");
        assertThatThrownBy(() -> sliceOfNone.render(List.of(), false))
                .isInstanceOf(ChatTemplateException.class).hasMessageContaining("cannot slice an undefined value");
    }

    @Test
    void rewrittenSourceIsVisibleForDebugging() {
        ChatTemplate t = ChatTemplate.compile("{%- for m in messages[::-1] %}\n{{- m.role }}\n{%- endfor %}");
        assertThat(t.source()).isEqualTo("{%- for m in messages[::-1] %}\n{{- m.role }}\n{%- endfor %}");
        assertThat(t.jinjavaSource()).isEqualTo(
                "{% for m in __comlrl_iter(__comlrl_pyslice(messages, none, none, -1)) %}{{ __comlrl_pystr(m.role) }}"
                        + "{% endfor %}");
    }
}
