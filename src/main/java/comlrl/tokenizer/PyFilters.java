package comlrl.tokenizer;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.tag.IfTag;
import com.hubspot.jinjava.lib.tag.Tag;
import com.hubspot.jinjava.tree.Node;
import com.hubspot.jinjava.tree.TagNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Filters and tags that make Jinjava behave as Hugging Face's chat-template environment: its
 * {@code tojson} override (plain {@code json.dumps}, no HTML escaping, non-ASCII kept), and
 * Jinja2's {@code string}, {@code trim} and {@code items}, which Jinjava lacks or renders the Java
 * way, {@code sum} keeping integers integral (and exact), {@code join} printing items as Python's
 * {@code str()}, and {@code max} and {@code min}, which it lacks; the tests {@code iterable} and
 * {@code sequence}, true for strings as in Python, and {@code none}, true for None; plus
 * transformers' {@code {% generation %}} block tag, which renders its body unchanged.
 */
final class PyFilters {
    private PyFilters() {}

    /** Every filter this class provides, to register over Jinjava's own of the same name. */
    static List<Filter> all() {
        return List.of(new ToJson(), new PyString(), new Trim(), new Items(), new Extreme("max"), new Extreme("min"),
                new Sum(), new Join());
    }

    /** Tests that Jinjava answers the Java way: Python strings are iterable sequences; None is none. */
    static List<ExpTest> tests() {
        return List.of(new PyTest("iterable"), new PyTest("sequence"), new NoneTest(), new TruthyTest());
    }

    /** Jinjava's {@code truthy}, which select/selectattr use without a test: Python's bool(). */
    private static final class TruthyTest implements ExpTest {
        @Override
        public String getName() {
            return "truthy";
        }

        @Override
        public boolean evaluate(Object value, JinjavaInterpreter interpreter, Object... args) {
            return PyValues.truthy(value);
        }
    }

    /**
     * Jinjava's {@code if} (and its {@code elif}s) deciding by Python's bool(): Jinjava's own takes
     * the string "false" for false.
     */
    static final class PyIfTag extends IfTag {
        private static final long serialVersionUID = 1L;

        @Override
        public boolean isPositiveIfElseNode(TagNode tagNode, JinjavaInterpreter interpreter) {
            return PyValues.truthy(interpreter.resolveELExpression(tagNode.getHelpers(), tagNode.getLineNumber(),
                    tagNode.getStartPosition()));
        }
    }

    /** Jinja2's {@code none}: the value is None ({@link PyValues#NONE}); an undefined one is not. */
    private static final class NoneTest implements ExpTest {
        @Override
        public String getName() {
            return "none";
        }

        @Override
        public boolean evaluate(Object value, JinjavaInterpreter interpreter, Object... args) {
            return value == PyValues.NONE;
        }
    }

    /** Jinja2's {@code iterable} ({@code iter(x)} works) and {@code sequence} (has len and []). */
    private static final class PyTest implements ExpTest {
        private final String name;

        PyTest(String name) {
            this.name = name;
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        public boolean evaluate(Object value, JinjavaInterpreter interpreter, Object... args) {
            return PyValues.asString(value) != null || value instanceof Map<?, ?> || PyValues.isSequence(value);
        }
    }

    /** A filter whose Python signature takes positional and keyword arguments. */
    private abstract static class PyFilter implements Filter {
        abstract Object apply(Object value, Object[] args, Map<String, Object> kwargs);

        @Override
        public Object filter(Object value, JinjavaInterpreter interpreter, String... args) {
            return apply(value, args, Map.of());
        }

        @Override
        public Object filter(Object value, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            return apply(value, args == null ? new Object[0] : args, kwargs == null ? Map.of() : kwargs);
        }

        /** Argument {@code name}, given by keyword or at {@code position}, else null (as for None). */
        static Object arg(Object[] args, Map<String, Object> kwargs, int position, String name) {
            Object value = kwargs.containsKey(name) ? kwargs.get(name) : position < args.length ? args[position] : null;
            return value == PyValues.NONE ? null : value;
        }
    }

    /** {@code tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)}. */
    static final class ToJson extends PyFilter {
        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        Object apply(Object value, Object[] args, Map<String, Object> kwargs) {
            Object ensureAscii = arg(args, kwargs, 0, "ensure_ascii");
            Object indent = arg(args, kwargs, 1, "indent");
            Object separators = arg(args, kwargs, 2, "separators");
            Object sortKeys = arg(args, kwargs, 3, "sort_keys");
            String itemSeparator = null;
            String keySeparator = null;
            if (separators != null) {
                List<Object> pair = PyValues.asList(separators);
                if (pair.size() != 2) {
                    throw new IllegalArgumentException("tojson separators must be a pair, got " + PyValues.repr(separators));
                }
                itemSeparator = PyValues.str(pair.get(0));
                keySeparator = PyValues.str(pair.get(1));
            }
            Integer indentValue = null;
            if (indent instanceof Number n) {
                indentValue = n.intValue();
            } else if (indent != null) {
                String text = PyValues.asString(indent);
                indentValue = text == null ? null : Integer.parseInt(text.trim());
            }
            return PyValues.jsonDumps(value, truthy(ensureAscii), indentValue, itemSeparator, keySeparator,
                    truthy(sortKeys));
        }
    }

    /** Jinja2's {@code string}: Python's {@code str()} (lists and dicts as Python writes them). */
    static final class PyString extends PyFilter {
        @Override
        public String getName() {
            return "string";
        }

        @Override
        Object apply(Object value, Object[] args, Map<String, Object> kwargs) {
            return PyValues.str(value);
        }
    }

    /** Jinja2's {@code trim(chars=None)}: Python's {@code str.strip}, not Java's {@code trim}. */
    static final class Trim extends PyFilter {
        @Override
        public String getName() {
            return "trim";
        }

        @Override
        Object apply(Object value, Object[] args, Map<String, Object> kwargs) {
            Object chars = arg(args, kwargs, 0, "chars");
            return PyValues.strip(PyValues.str(value), chars == null ? null : PyValues.str(chars), true, true);
        }
    }

    /** Jinja2's {@code items}: a mapping's (key, value) pairs; nothing for an undefined value. */
    static final class Items extends PyFilter {
        @Override
        public String getName() {
            return "items";
        }

        @Override
        Object apply(Object value, Object[] args, Map<String, Object> kwargs) {
            List<Object> items = new ArrayList<>();
            if (value == null) {
                return items;
            }
            if (!(value instanceof Map<?, ?> map)) {
                throw new IllegalArgumentException("Can only get item pairs from a mapping, got " + PyValues.repr(value));
            }
            for (Map.Entry<?, ?> e : map.entrySet()) {
                items.add(PyMethodResolver.pair(e.getKey(), e.getValue()));
            }
            return items;
        }
    }

    /**
     * Jinja2's {@code max(case_sensitive=False, attribute=None)} and {@code min}: the largest or
     * smallest item (compared by {@code attribute} when given; strings ignoring case unless asked);
     * nothing for an empty sequence.
     */
    static final class Extreme extends PyFilter {
        private final String name;

        Extreme(String name) {
            this.name = name;
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        Object apply(Object value, Object[] args, Map<String, Object> kwargs) {
            boolean caseSensitive = truthy(arg(args, kwargs, 0, "case_sensitive"));
            Object attribute = arg(args, kwargs, 1, "attribute");
            Object best = null;
            Object bestKey = null;
            for (Object item : PyValues.asList(PyValues.asString(value) != null ? List.of() : value)) {
                Object key = attribute == null ? item : attribute(item, PyValues.str(attribute));
                String text = PyValues.asString(key);
                if (text != null && !caseSensitive) {
                    key = text.toLowerCase(java.util.Locale.ROOT);
                }
                if (bestKey == null || compare(key, bestKey) * (name.equals("max") ? 1 : -1) > 0) {
                    best = item;
                    bestKey = key;
                }
            }
            return best;
        }

        static Object attribute(Object item, String path) {
            Object current = item;
            for (String part : path.split("\\.")) {
                current = current instanceof Map<?, ?> map ? map.get(part) : null;
            }
            return current;
        }

        private static int compare(Object a, Object b) {
            if (a instanceof Number x && b instanceof Number y) {
                return Double.compare(x.doubleValue(), y.doubleValue());
            }
            String sa = PyValues.asString(a);
            String sb = PyValues.asString(b);
            if (sa != null && sb != null) {
                return sa.compareTo(sb);
            }
            throw new IllegalArgumentException("cannot compare " + PyValues.repr(a) + " and " + PyValues.repr(b));
        }
    }

    /**
     * Jinja2's {@code sum(attribute=None, start=0)}: Python's {@code sum}, adding left to right with
     * Python's {@code +}, so integers stay exact integers (Jinjava's gives 6.0, and wraps).
     */
    static final class Sum extends PyFilter {
        @Override
        public String getName() {
            return "sum";
        }

        @Override
        Object apply(Object value, Object[] args, Map<String, Object> kwargs) {
            Object attribute = arg(args, kwargs, 0, "attribute");
            Object start = arg(args, kwargs, 1, "start");
            if (PyValues.asString(start) != null) {
                throw PyOperators.typeError("sum() can't sum strings [use ''.join(seq) instead]");
            }
            Object total = start == null ? (Object) 0L : start;
            for (Object item : PyValues.asList(value)) {
                total = PyOperators.add(total, attribute == null ? item : Extreme.attribute(item, PyValues.str(attribute)));
            }
            return total;
        }
    }

    /**
     * Jinja2's {@code join(d='', attribute=None)}: {@code str()} of each item (or of its
     * {@code attribute}) joined by {@code d}, so None items print "None" and dicts as Python
     * writes them; a string joins its characters, a dict its keys, an undefined value is "".
     */
    static final class Join extends PyFilter {
        @Override
        public String getName() {
            return "join";
        }

        @Override
        Object apply(Object value, Object[] args, Map<String, Object> kwargs) {
            Object separator = arg(args, kwargs, 0, "d");
            Object attribute = arg(args, kwargs, 1, "attribute");
            List<String> parts = new ArrayList<>();
            for (Object item : PyValues.asList(PyFunctions.iter(value))) {
                parts.add(PyValues.str(attribute == null ? item : Extreme.attribute(item, PyValues.str(attribute))));
            }
            return String.join(separator == null ? "" : PyValues.str(separator), parts);
        }
    }

    /** Python truthiness of a filter argument. */
    static boolean truthy(Object value) {
        return PyValues.truthy(value);
    }

    /**
     * transformers' {@code {% generation %}...{% endgeneration %}}: marks the assistant's tokens for
     * masks; for rendering it is its body, unchanged.
     */
    static final class GenerationTag implements Tag {
        private static final long serialVersionUID = 1L;

        @Override
        public String getName() {
            return "generation";
        }

        @Override
        public String getEndTagName() {
            return "endgeneration";
        }

        @Override
        public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
            StringBuilder out = new StringBuilder();
            for (Node child : tagNode.getChildren()) {
                out.append(child.render(interpreter).getValue());
            }
            return out.toString();
        }
    }
}
