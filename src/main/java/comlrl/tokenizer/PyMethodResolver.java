package comlrl.tokenizer;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.interpret.TemplateError.ErrorItem;
import com.hubspot.jinjava.interpret.TemplateError.ErrorReason;
import com.hubspot.jinjava.interpret.TemplateError.ErrorType;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * Answers Python method calls on template values that Jinjava would otherwise look up as Java
 * methods: {@code content.startswith('<tool_response>')}, {@code content.split('</think>')[-1]},
 * {@code text.strip('\n')}, {@code message.items()}.
 *
 * <p>Placed before Jinjava's own resolvers; it resolves only the method names below and leaves
 * everything else (properties, other methods) to them. Semantics follow CPython: {@code split} keeps
 * empty fields ({@code 'a</think>'.split('</think>')} is {@code ['a', '']}, where Java's split drops
 * the trailing one), {@code strip()} removes Python whitespace, {@code strip(chars)} any of the
 * given characters. Indices ({@code find}) count code points, as Python's do.
 *
 * <ul>
 *   <li>str: startswith, endswith, strip, lstrip, rstrip, split, rsplit, replace, upper, lower,
 *       title, capitalize, find, rfind, count, join, isdigit, isalpha, isalnum, isspace, isupper,
 *       islower</li>
 *   <li>dict: items, keys, values, get</li>
 * </ul>
 */
final class PyMethodResolver extends ELResolver {
    private static final Set<String> STRING_METHODS = Set.of("startswith", "endswith", "strip", "lstrip",
            "rstrip", "split", "rsplit", "replace", "upper", "lower", "title", "capitalize", "find", "rfind",
            "count", "join", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower");
    private static final Set<String> MAP_METHODS = Set.of("items", "keys", "values", "get");

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (base == null || method == null) {
            return null;
        }
        String name = method.toString();
        Object[] args = params == null ? new Object[0] : params;
        if (base == PyValues.NONE) { // Jinja2: None has no methods
            context.setPropertyResolved(true);
            throw new IllegalArgumentException("'None' has no attribute '" + name + "'");
        }
        String s = PyValues.asString(base);
        boolean string = s != null && STRING_METHODS.contains(name);
        boolean dict = base instanceof Map<?, ?> && MAP_METHODS.contains(name);
        if (!string && !dict) {
            return null;
        }
        context.setPropertyResolved(true);
        try {
            return string ? stringMethod(s, name, args) : mapMethod((Map<?, ?>) base, name, args);
        } catch (RuntimeException e) {
            // Jinjava would swallow the exception and report "Cannot find method"; keep Python's message
            String message = (string ? "str." : "dict.") + name + "(): " + e.getMessage();
            JinjavaInterpreter interpreter = JinjavaInterpreter.getCurrent();
            if (interpreter == null) {
                throw new IllegalArgumentException(message, e);
            }
            interpreter.addError(new TemplateError(ErrorType.FATAL, ErrorReason.EXCEPTION, ErrorItem.FUNCTION,
                    message, name, interpreter.getLineNumber(), e));
            return null;
        }
    }

    private static Object stringMethod(String s, String name, Object[] args) {
        switch (name) {
            case "startswith":
            case "endswith": {
                requireArgs(name, args, 1, 2);
                String text = args.length > 1 ? sliceFrom(s, toInt(args[1])) : s;
                List<String> affixes = new ArrayList<>();
                if (PyValues.isSequence(args[0])) {
                    for (Object o : PyValues.asList(args[0])) {
                        affixes.add(str(name, o));
                    }
                } else {
                    affixes.add(str(name, args[0]));
                }
                for (String affix : affixes) {
                    if (name.equals("startswith") ? text.startsWith(affix) : text.endsWith(affix)) {
                        return true;
                    }
                }
                return false;
            }
            case "strip":
                requireArgs(name, args, 0, 1);
                return PyValues.strip(s, optStr(name, args, 0), true, true);
            case "lstrip":
                requireArgs(name, args, 0, 1);
                return PyValues.strip(s, optStr(name, args, 0), true, false);
            case "rstrip":
                requireArgs(name, args, 0, 1);
                return PyValues.strip(s, optStr(name, args, 0), false, true);
            case "split":
                requireArgs(name, args, 0, 2);
                return split(s, optStr(name, args, 0), args.length > 1 && !PyValues.isNone(args[1]) ? toInt(args[1]) : -1);
            case "rsplit":
                requireArgs(name, args, 0, 2);
                return rsplit(s, optStr(name, args, 0), args.length > 1 && !PyValues.isNone(args[1]) ? toInt(args[1]) : -1);
            case "replace": {
                requireArgs(name, args, 2, 3);
                return replace(s, str(name, args[0]), str(name, args[1]), args.length > 2 ? toInt(args[2]) : -1);
            }
            case "upper":
                requireArgs(name, args, 0, 0);
                return s.toUpperCase(Locale.ROOT);
            case "lower":
                requireArgs(name, args, 0, 0);
                return s.toLowerCase(Locale.ROOT);
            case "title":
                requireArgs(name, args, 0, 0);
                return title(s);
            case "capitalize":
                requireArgs(name, args, 0, 0);
                return s.isEmpty() ? s
                        : new StringBuilder().appendCodePoint(Character.toUpperCase(s.codePointAt(0)))
                                .append(s.substring(Character.charCount(s.codePointAt(0))).toLowerCase(Locale.ROOT))
                                .toString();
            case "find": {
                requireArgs(name, args, 1, 1);
                int at = s.indexOf(str(name, args[0]));
                return (long) (at < 0 ? -1 : s.codePointCount(0, at));
            }
            case "rfind": {
                requireArgs(name, args, 1, 1);
                int at = s.lastIndexOf(str(name, args[0]));
                return (long) (at < 0 ? -1 : s.codePointCount(0, at));
            }
            case "count": {
                requireArgs(name, args, 1, 1);
                String sub = str(name, args[0]);
                if (sub.isEmpty()) {
                    return (long) s.codePointCount(0, s.length()) + 1;
                }
                long n = 0;
                for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
                    n++;
                }
                return n;
            }
            case "join": {
                requireArgs(name, args, 1, 1);
                if (args[0] == PyValues.NONE) {
                    throw PyOperators.typeError("can only join an iterable");
                }
                List<String> parts = new ArrayList<>();
                for (Object o : PyValues.asList(PyFunctions.iter(args[0]))) {
                    String part = PyValues.asString(o);
                    if (part == null) { // Jinja2 raises this TypeError where Jinjava would print "null" or "{type=text}"
                        throw PyOperators.typeError("sequence item " + parts.size() + ": expected str instance, "
                                + PyOperators.typeName(o) + " found");
                    }
                    parts.add(part);
                }
                return String.join(s, parts);
            }
            case "isdigit":
                return !s.isEmpty() && s.codePoints().allMatch(Character::isDigit);
            case "isalpha":
                return !s.isEmpty() && s.codePoints().allMatch(Character::isLetter);
            case "isalnum":
                return !s.isEmpty() && s.codePoints().allMatch(Character::isLetterOrDigit);
            case "isspace":
                return !s.isEmpty() && s.codePoints().allMatch(PyValues::isPySpace);
            case "isupper":
                return s.codePoints().anyMatch(Character::isUpperCase) && s.codePoints().noneMatch(Character::isLowerCase);
            case "islower":
                return s.codePoints().anyMatch(Character::isLowerCase) && s.codePoints().noneMatch(Character::isUpperCase);
            default:
                throw new IllegalStateException("unhandled str method " + name);
        }
    }

    private static Object mapMethod(Map<?, ?> map, String name, Object[] args) {
        switch (name) {
            case "items": {
                requireArgs(name, args, 0, 0);
                List<Object> items = new ArrayList<>();
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    items.add(pair(e.getKey(), e.getValue()));
                }
                return items;
            }
            case "keys":
                requireArgs(name, args, 0, 0);
                return new ArrayList<Object>(map.keySet());
            case "values":
                requireArgs(name, args, 0, 0);
                return new ArrayList<Object>(map.values());
            case "get": {
                requireArgs(name, args, 1, 2);
                if (map.containsKey(args[0])) {
                    return map.get(args[0]);
                }
                return args.length > 1 ? args[1] : PyValues.NONE; // Python's default default is None
            }
            default:
                throw new IllegalStateException("unhandled dict method " + name);
        }
    }

    /** A (key, value) pair as a two-element list, which Jinjava's {@code for k, v in ...} unpacks. */
    static List<Object> pair(Object key, Object value) {
        List<Object> pair = new ArrayList<>(2);
        pair.add(key);
        pair.add(value);
        return pair;
    }

    /** Python's str.split: without a separator on whitespace runs (no empty fields), else exactly. */
    static List<String> split(String s, String sep, int maxSplit) {
        List<String> out = new ArrayList<>();
        if (sep == null) {
            int[] cps = s.codePoints().toArray();
            int i = 0;
            while (true) {
                while (i < cps.length && PyValues.isPySpace(cps[i])) {
                    i++;
                }
                if (i >= cps.length) {
                    break;
                }
                if (maxSplit >= 0 && out.size() == maxSplit) {
                    out.add(new String(cps, i, cps.length - i));
                    break;
                }
                int start = i;
                while (i < cps.length && !PyValues.isPySpace(cps[i])) {
                    i++;
                }
                out.add(new String(cps, start, i - start));
            }
            return out;
        }
        if (sep.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        int from = 0;
        for (int at = s.indexOf(sep); at >= 0 && (maxSplit < 0 || out.size() < maxSplit); at = s.indexOf(sep, from)) {
            out.add(s.substring(from, at));
            from = at + sep.length();
        }
        out.add(s.substring(from));
        return out;
    }

    /** Python's str.rsplit: like split, but counting maxsplit from the right. */
    static List<String> rsplit(String s, String sep, int maxSplit) {
        if (sep == null && maxSplit < 0) {
            return split(s, null, -1);
        }
        List<String> out = new ArrayList<>();
        if (sep == null) {
            int[] cps = s.codePoints().toArray();
            int i = cps.length;
            while (true) {
                while (i > 0 && PyValues.isPySpace(cps[i - 1])) {
                    i--;
                }
                if (i <= 0) {
                    break;
                }
                if (out.size() == maxSplit) {
                    out.add(new String(cps, 0, i));
                    break;
                }
                int end = i;
                while (i > 0 && !PyValues.isPySpace(cps[i - 1])) {
                    i--;
                }
                out.add(new String(cps, i, end - i));
            }
            Collections.reverse(out);
            return out;
        }
        if (sep.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        int end = s.length();
        int at = s.lastIndexOf(sep, end - sep.length());
        while (at >= 0 && (maxSplit < 0 || out.size() < maxSplit)) {
            out.add(s.substring(at + sep.length(), end));
            end = at;
            at = end - sep.length() < 0 ? -1 : s.lastIndexOf(sep, end - sep.length());
        }
        out.add(s.substring(0, end));
        Collections.reverse(out);
        return out;
    }

    private static String replace(String s, String old, String replacement, int count) {
        if (count < 0) {
            return s.replace(old, replacement);
        }
        StringBuilder out = new StringBuilder();
        int from = 0;
        int done = 0;
        if (old.isEmpty()) {
            // Python inserts the replacement between code points (and at both ends), up to count times.
            int i = 0;
            while (i <= s.length() && done < count) {
                out.append(replacement);
                done++;
                if (i < s.length()) {
                    int cp = s.codePointAt(i);
                    out.appendCodePoint(cp);
                    i += Character.charCount(cp);
                } else {
                    i++;
                }
            }
            if (i <= s.length()) {
                out.append(s.substring(Math.min(i, s.length())));
            }
            return out.toString();
        }
        for (int at = s.indexOf(old); at >= 0 && done < count; at = s.indexOf(old, from)) {
            out.append(s, from, at).append(replacement);
            from = at + old.length();
            done++;
        }
        return out.append(s.substring(from)).toString();
    }

    private static String title(String s) {
        StringBuilder out = new StringBuilder();
        boolean previousCased = false;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            boolean cased = Character.isUpperCase(cp) || Character.isLowerCase(cp) || Character.isTitleCase(cp);
            out.appendCodePoint(previousCased ? Character.toLowerCase(cp) : Character.toTitleCase(cp));
            previousCased = cased;
        }
        return out.toString();
    }

    private static String sliceFrom(String s, int start) {
        int n = s.codePointCount(0, s.length());
        int from = start < 0 ? Math.max(0, n + start) : Math.min(n, start);
        return s.substring(s.offsetByCodePoints(0, from));
    }

    private static void requireArgs(String name, Object[] args, int min, int max) {
        if (args.length < min || args.length > max) {
            throw new IllegalArgumentException("str/dict method " + name + "() takes " + (min == max ? "" + min
                    : min + " to " + max) + " arguments, got " + args.length);
        }
    }

    private static String str(String method, Object value) {
        String s = PyValues.asString(value);
        if (s == null) {
            throw new IllegalArgumentException(method + "() expects a string argument, got "
                    + (value == null ? "None" : PyValues.repr(value)));
        }
        return s;
    }

    private static String optStr(String method, Object[] args, int index) {
        return args.length > index && !PyValues.isNone(args[index]) ? str(method, args[index]) : null;
    }

    private static int toInt(Object value) {
        if (value instanceof Number n) {
            return n.intValue();
        }
        throw new IllegalArgumentException("expected an integer, got " + PyValues.repr(value));
    }

    // The remaining ELResolver methods resolve nothing (but attributes of None): properties are left
    // to Jinjava's resolvers.

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        if (base == PyValues.NONE) { // an attribute or item of None is undefined, as in Jinja2
            context.setPropertyResolved(true);
        }
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {
        // read-only: nothing to set
    }

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
