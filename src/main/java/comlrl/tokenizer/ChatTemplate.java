package comlrl.tokenizer;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import java.time.Clock;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import jinjava.javax.el.CompositeELResolver;
import jinjava.javax.el.ExpressionFactory;

/**
 * A Hugging Face chat template (the Jinja2 {@code chat_template} of {@code tokenizer_config.json}),
 * rendered with Jinjava so that the text is byte for byte what transformers'
 * {@code apply_chat_template(messages, tokenize=False, add_generation_prompt=...)} returns.
 *
 * <p>Transformers renders with Jinja2's {@code ImmutableSandboxedEnvironment(trim_blocks=True,
 * lstrip_blocks=True)} plus the loop-controls extension, its own {@code tojson} filter, and the
 * globals {@code raise_exception} and {@code strftime_now}; it passes {@code messages},
 * {@code tools}, {@code documents}, {@code add_generation_prompt} and the tokenizer's special tokens
 * ({@code bos_token}, {@code eos_token}, ...) as variables, plus any extra keyword arguments
 * ({@code enable_thinking}). This class reproduces that as follows:
 *
 * <ul>
 *   <li>Jinjava with the legacy overrides that make it parse like Jinja2 (natural operator
 *       precedence, Python-ish output, null loop values kept); trim_blocks and lstrip_blocks are
 *       applied exactly by the source rewrite, since Jinjava's lstrip_blocks also strips spaces
 *       before a tag in the middle of a line.</li>
 *   <li>A source rewrite ({@link TemplateSource}) for what Jinjava cannot parse or binds
 *       differently: slices with a step ({@code messages[::-1]}), keyword arguments with operators
 *       ({@code namespace(last_query_index=messages|length - 1)}), tests under {@code not}
 *       ({@code not tools is defined}), whitespace control, newline handling, and output of
 *       Python values ({@code True}, lists, dicts as {@code str()} prints them).</li>
 *   <li>Python's operators ({@link PyOperators}, parsed by {@link PyExpressions} with Jinja2's
 *       precedence): integers never overflow ({@code 10 ** 20}), {@code //} and {@code %} floor,
 *       {@code +} concatenates only two strings or two lists and otherwise raises Python's
 *       TypeError ({@code '\n' + message.content} for list content: "can only concatenate str
 *       (not "list") to str"; Jinjava printed the Java list), {@code ~} joins {@code str()}s,
 *       {@code ==}, {@code in}, {@code and}, {@code or}, {@code not} and {@code if} as Python
 *       (the string "false" is true).</li>
 *   <li>Python's None apart from undefined: null inside messages and variable values, and the
 *       template's {@code none}, are None ({@link PyValues#NONE}): defined, printed "None"
 *       ({@code 'a' ~ none}, {@code [none]|join}), kept by {@code default}, {@code is none};
 *       {@code tools} and {@code documents} are None when not given, as transformers passes
 *       them. Undefined names and attributes print "" and are not none.</li>
 *   <li>Python string and dict methods ({@code startswith}, {@code endswith}, {@code strip},
 *       {@code lstrip}, {@code rstrip}, {@code split}, {@code replace}, {@code join},
 *       {@code items}, ...) with CPython semantics, resolved before Jinjava's Java-method lookup;
 *       {@code ', '.join(xs)} raises Python's TypeError for an item that is not a string
 *       ("sequence item 0: expected str instance, NoneType found").</li>
 *   <li>Filters {@code tojson} (as transformers defines it: {@code json.dumps} with
 *       {@code ensure_ascii=False}), {@code string}, {@code trim}, {@code items}, {@code join}
 *       ({@code str()} of each item) and {@code sum} as Jinja2 has them; tests {@code iterable}
 *       and {@code sequence} true for strings as in Python, {@code none}; the
 *       {@code {% generation %}} block tag; functions {@code raise_exception} and
 *       {@code strftime_now}.</li>
 * </ul>
 *
 * <p>Errors are never ignored: a template that does not parse or uses an unknown filter fails in
 * {@link #compile}; any error reported while rendering (including {@code raise_exception}) fails
 * the render with a {@link ChatTemplateException}.
 *
 * <p>Known differences from Jinja2, none of which the Qwen2/2.5/3 and Llama 3/3.1 templates meet:
 * a top-level variable passed as null is left out (undefined), not None; Jinja2's
 * UndefinedError (calling a method of a list, {@code 'a' + undefined}) is some other
 * ChatTemplateException; {@code select} needs a test; chained comparisons ({@code 1 < x < 3})
 * do not parse. These fail loudly instead of rendering: {@code %} string formatting,
 * {@code loop.previtem}/{@code loop.nextitem}, recursive loops with a filter or else.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class ChatTemplate {
    private static final Jinjava JINJAVA = createEnvironment();

    private final String source;
    private final String jinjavaSource;
    private final Clock clock;

    private ChatTemplate(String source, String jinjavaSource, Clock clock) {
        this.source = source;
        this.jinjavaSource = jinjavaSource;
        this.clock = clock;
    }

    /**
     * Parses a Jinja2 chat template.
     *
     * @throws ChatTemplateException when the template does not parse, or uses a filter that neither
     *     Jinjava nor this class defines
     */
    public static ChatTemplate compile(String source) {
        Objects.requireNonNull(source, "source");
        TemplateSource.Rewritten rewritten;
        try {
            rewritten = TemplateSource.rewrite(source);
        } catch (IllegalArgumentException e) {
            throw new ChatTemplateException("Chat template does not parse: " + e.getMessage(), e);
        }
        for (String filter : rewritten.filters()) {
            if (JINJAVA.getGlobalContext().getFilter(filter) == null) {
                throw new ChatTemplateException("Chat template uses the unknown filter '" + filter
                        + "' (Jinja2 would fail too: \"No filter named '" + filter + "'\")");
            }
        }
        JinjavaInterpreter interpreter = JINJAVA.newInterpreter();
        JinjavaInterpreter.pushCurrent(interpreter);
        try {
            interpreter.parse(rewritten.source());
        } catch (RuntimeException e) {
            throw new ChatTemplateException("Chat template does not parse: " + e.getMessage(), e);
        } finally {
            JinjavaInterpreter.popCurrent();
        }
        if (!interpreter.getErrors().isEmpty()) {
            throw new ChatTemplateException("Chat template does not parse: " + describe(interpreter.getErrors()));
        }
        return new ChatTemplate(source, rewritten.source(), Clock.systemDefaultZone());
    }

    /** The template as written (in tokenizer_config.json). */
    public String source() {
        return source;
    }

    /** The rewritten source that Jinjava renders (for debugging a template). */
    public String jinjavaSource() {
        return jinjavaSource;
    }

    /** This template with {@code strftime_now} reading {@code clock} (default: the system clock). */
    public ChatTemplate withClock(Clock clock) {
        return new ChatTemplate(source, jinjavaSource, Objects.requireNonNull(clock, "clock"));
    }

    /** {@link #render(List, boolean, Map)} with no further variables. */
    public String render(List<? extends Map<String, ?>> messages, boolean addGenerationPrompt) {
        return render(messages, addGenerationPrompt, Map.of());
    }

    /**
     * Renders a conversation as transformers' {@code apply_chat_template(messages, tokenize=False,
     * add_generation_prompt=addGenerationPrompt, **variables)} does with this template.
     *
     * @param messages the conversation: maps with at least {@code role} and {@code content}, and
     *     optionally {@code tool_calls}, {@code reasoning_content}, ... (values: strings, numbers,
     *     booleans, lists, maps, null)
     * @param addGenerationPrompt whether to end with the header of an assistant turn
     * @param variables further template variables: the special tokens ({@code bos_token},
     *     {@code eos_token}, ...), {@code tools} (a list of JSON-schema maps), and keyword arguments
     *     such as {@code enable_thinking}; null values are left out (undefined), except that
     *     {@code tools} and {@code documents} are None unless given, as transformers passes them;
     *     nulls inside messages and variable values are Python's None
     * @return the rendered text
     * @throws ChatTemplateException when rendering reports an error or the template calls
     *     {@code raise_exception}
     */
    public String render(List<? extends Map<String, ?>> messages, boolean addGenerationPrompt,
            Map<String, ?> variables) {
        Objects.requireNonNull(messages, "messages");
        Objects.requireNonNull(variables, "variables");
        Map<String, Object> context = new HashMap<>();
        for (Map.Entry<String, ?> e : variables.entrySet()) {
            if (e.getValue() != null) {
                context.put(e.getKey(), plain(e.getValue()));
            }
        }
        context.put("messages", plain(messages));
        context.put("add_generation_prompt", addGenerationPrompt);
        context.putIfAbsent("tools", PyValues.NONE); // transformers passes tools=None, documents=None
        context.putIfAbsent("documents", PyValues.NONE);
        context.put(PyFunctions.NOW_VARIABLE, LocalDateTime.now(clock));
        RenderResult result;
        try {
            result = JINJAVA.renderForResult(jinjavaSource, context);
        } catch (PyFunctions.RaisedException e) {
            throw raised(e);
        } catch (RuntimeException e) {
            throw new ChatTemplateException("Chat template failed to render: " + e.getMessage(), e);
        }
        if (!result.getErrors().isEmpty()) {
            for (TemplateError error : result.getErrors()) {
                PyFunctions.RaisedException raised = raisedIn(error.getException());
                if (raised != null) {
                    throw raised(raised);
                }
            }
            throw new ChatTemplateException("Chat template failed to render: " + describe(result.getErrors()));
        }
        return result.getOutput();
    }

    private static ChatTemplateException raised(PyFunctions.RaisedException e) {
        return new ChatTemplateException("Chat template raised an exception: " + e.getMessage(), e);
    }

    private static PyFunctions.RaisedException raisedIn(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof PyFunctions.RaisedException raised) {
                return raised;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    /**
     * The errors' messages with their lines: the Python error where an operator raised one
     * ("TypeError: can only concatenate str (not "list") to str"), else Jinjava's message and the
     * root cause where that message hides it.
     */
    private static String describe(List<TemplateError> errors) {
        return errors.stream()
                .map(e -> {
                    String message = e.getMessage();
                    for (Throwable t = e.getException(); t != null && t.getCause() != t; t = t.getCause()) {
                        if (t instanceof PyOperators.PyException python && !message.startsWith("str.")
                                && !message.startsWith("dict.")) {
                            message = python.getMessage();
                            break;
                        }
                    }
                    Throwable root = e.getException();
                    while (root != null && root.getCause() != null && root.getCause() != root) {
                        root = root.getCause();
                    }
                    if (root != null && root.getMessage() != null && !message.contains(root.getMessage())) {
                        message += ": " + root.getMessage();
                    }
                    return message + (e.getLineno() > 0 ? " (line " + e.getLineno() + ")" : "");
                })
                .distinct()
                .collect(Collectors.joining("; "));
    }

    /**
     * A copy with Java-collection shapes Jinjava reads as Python dicts and lists (arrays to lists),
     * and null as Python's None ({@link PyValues#NONE}).
     */
    private static Object plain(Object value) {
        if (value == null) {
            return PyValues.NONE;
        }
        if (value instanceof Map<?, ?> map) {
            Map<Object, Object> copy = new LinkedHashMap<>();
            map.forEach((k, v) -> copy.put(k, plain(v)));
            return copy;
        }
        if (value instanceof CharSequence s) {
            return s.toString();
        }
        if (PyValues.isSequence(value)) {
            List<Object> copy = new ArrayList<>();
            for (Object item : PyValues.asList(value)) {
                copy.add(plain(item));
            }
            return copy;
        }
        return value;
    }

    private static Jinjava createEnvironment() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PyMethodResolver());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        JinjavaConfig config = JinjavaConfig.newBuilder()
                .withTrimBlocks(false) // TemplateSource applies trim_blocks and lstrip_blocks itself
                .withLstripBlocks(false)
                .withNestedInterpretationEnabled(false)
                .withLocale(Locale.ROOT)
                .withElResolver(resolver)
                .withLegacyOverrides(LegacyOverrides.newBuilder()
                        .withUseTrimmingForNotesAndExpressions(true)
                        .withUseNaturalOperatorPrecedence(true)
                        .withParseWhitespaceControlStrictly(true)
                        .withUsePyishObjectMapper(true)
                        .withKeepNullableLoopValues(true)
                        .build())
                .build();
        ExpressionFactory expressions = PyExpressions.factory();
        Jinjava jinjava = new Jinjava(config) {
            @Override
            public ExpressionFactory getExpressionFactory() {
                return expressions; // Python's arithmetic and string operators
            }
        };
        for (Filter filter : PyFilters.all()) {
            jinjava.registerFilter(filter);
        }
        jinjava.registerTag(new PyFilters.GenerationTag());
        jinjava.registerTag(new PyFilters.PyIfTag());
        for (ExpTest test : PyFilters.tests()) {
            jinjava.registerExpTest(test);
        }
        register(jinjava, "raise_exception", "raiseException", Object.class);
        register(jinjava, "strftime_now", "strftimeNow", String.class);
        register(jinjava, TemplateSource.STR_FUNCTION, "pyStr", Object.class);
        register(jinjava, TemplateSource.SLICE_FUNCTION, "pySlice", Object.class, Object.class, Object.class,
                Object.class);
        register(jinjava, TemplateSource.PICK_FUNCTION, "pick", Object.class, Object.class);
        register(jinjava, TemplateSource.ITER_FUNCTION, "iter", Object.class);
        return jinjava;
    }

    private static void register(Jinjava jinjava, String name, String method, Class<?>... parameterTypes) {
        jinjava.registerFunction(new ELFunctionDefinition("", name, PyFunctions.class, method, parameterTypes));
    }
}
