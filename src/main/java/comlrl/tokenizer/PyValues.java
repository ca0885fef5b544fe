package comlrl.tokenizer;

import com.hubspot.jinjava.objects.SafeString;
import com.hubspot.jinjava.util.HasObjectTruthValue;
import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Python's view of template values, so that chat templates print what Hugging Face's Jinja2
 * environment prints: {@code str()}, {@code repr()}, {@code json.dumps()} and string whitespace.
 *
 * <p>Values are the Java shapes a template sees: {@link String} (or Jinjava's {@link SafeString}),
 * {@link Boolean}, integral and floating {@link Number}s, {@link Map}, {@link Collection} or array,
 * {@link #NONE} for None (a message's {@code "content": null}, the template's {@code none}), and
 * null for an undefined variable or attribute (Jinja2's Undefined).
 */
final class PyValues {
    /**
     * Python's None: prints as "None", is defined, is false, equals none, is JSON null. (Jinjava's
     * null, which it also gives for undefined names, prints as "" and counts as undefined.)
     */
    static final Object NONE = PyNone.NONE;

    private PyValues() {}

    /** The type of {@link #NONE}. */
    private enum PyNone implements HasObjectTruthValue {
        NONE;

        @Override
        public boolean getObjectTruthValue() {
            return false;
        }

        @Override
        public String toString() {
            return "None";
        }
    }

    /**
     * Python's {@code bool(value)}: None, False, zero, and empty strings, lists and dicts are
     * false, everything else true. (Jinjava also takes the string "false" for false.)
     */
    static boolean truthy(Object value) {
        if (isNone(value)) {
            return false;
        }
        if (value instanceof Boolean b) {
            return b;
        }
        if (value instanceof BigInteger b) {
            return b.signum() != 0;
        }
        if (value instanceof BigDecimal b) {
            return b.signum() != 0;
        }
        if (value instanceof Number n) {
            return n.doubleValue() != 0; // NaN is true, as in Python
        }
        String s = asString(value);
        if (s != null) {
            return !s.isEmpty();
        }
        if (value instanceof Map<?, ?> map) {
            return !map.isEmpty();
        }
        if (value instanceof Collection<?> collection) {
            return !collection.isEmpty();
        }
        if (value.getClass().isArray()) {
            return Array.getLength(value) > 0;
        }
        if (value instanceof HasObjectTruthValue t) {
            return t.getObjectTruthValue();
        }
        return true;
    }

    /**
     * Whether a value is None or undefined ({@link #NONE} or null): where Python treats an omitted
     * argument and None alike.
     */
    static boolean isNone(Object value) {
        return value == null || value == NONE;
    }

    /** The value as a Java string when it is one of the string types templates carry, else null. */
    static String asString(Object value) {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof SafeString s) {
            return s.toString();
        }
        if (value instanceof CharSequence s) {
            return s.toString();
        }
        if (value instanceof Character c) {
            return c.toString();
        }
        return null;
    }

    /**
     * {@code str(value)} as Python prints it ({@link #NONE} as "None"), except that null prints as
     * the empty string, as Jinja2 prints an undefined value ({@code {{ bos_token }}} of a model
     * without one).
     */
    static String str(Object value) {
        if (value == null) {
            return "";
        }
        String s = asString(value);
        if (s != null) {
            return s;
        }
        return repr(value);
    }

    /** {@code repr(value)} as Python writes it (strings single-quoted, None, True, [..], {..}). */
    static String repr(Object value) {
        StringBuilder out = new StringBuilder();
        appendRepr(out, value);
        return out.toString();
    }

    private static void appendRepr(StringBuilder out, Object value) {
        if (isNone(value)) {
            out.append("None");
            return;
        }
        String s = asString(value);
        if (s != null) {
            appendStringRepr(out, s);
        } else if (value instanceof Boolean b) {
            out.append(b ? "True" : "False");
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            out.append(Double.isNaN(d) ? "nan" : Double.isInfinite(d) ? (d > 0 ? "inf" : "-inf") : floatRepr(d));
        } else if (value instanceof BigDecimal bd) {
            out.append(floatRepr(bd.doubleValue()));
        } else if (value instanceof Number n) {
            out.append(n.toString());
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) {
                    out.append(", ");
                }
                first = false;
                appendRepr(out, e.getKey());
                out.append(": ");
                appendRepr(out, e.getValue());
            }
            out.append('}');
        } else if (value instanceof Map.Entry<?, ?> e) {
            out.append('(');
            appendRepr(out, e.getKey());
            out.append(", ");
            appendRepr(out, e.getValue());
            out.append(')');
        } else if (isSequence(value)) {
            out.append('[');
            boolean first = true;
            for (Object item : asList(value)) {
                if (!first) {
                    out.append(", ");
                }
                first = false;
                appendRepr(out, item);
            }
            out.append(']');
        } else {
            out.append(value);
        }
    }

    /** Python's repr of a str: single quotes unless the text has ' and no ", escapes as CPython. */
    private static void appendStringRepr(StringBuilder out, String s) {
        char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        out.append(quote);
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == quote || cp == '\\') {
                out.append('\\').appendCodePoint(cp);
            } else if (cp == '\t') {
                out.append("\\t");
            } else if (cp == '\n') {
                out.append("\\n");
            } else if (cp == '\r') {
                out.append("\\r");
            } else if (cp < 0x20 || cp == 0x7f) {
                out.append(String.format("\\x%02x", cp));
            } else if (cp < 0x7f || isPrintable(cp)) {
                out.appendCodePoint(cp);
            } else if (cp <= 0xff) {
                out.append(String.format("\\x%02x", cp));
            } else if (cp <= 0xffff) {
                out.append(String.format("\\u%04x", cp));
            } else {
                out.append(String.format("\\U%08x", cp));
            }
        }
        out.append(quote);
    }

    /** Python's str.isprintable for one code point (space is printable, other separators not). */
    private static boolean isPrintable(int cp) {
        if (cp == ' ') {
            return true;
        }
        switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                    Character.UNASSIGNED, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                    Character.SPACE_SEPARATOR:
                return false;
            default:
                return true;
        }
    }

    /**
     * Python's float repr: the shortest digits that round-trip, fixed notation for decimal exponents
     * in [-4, 16), otherwise scientific with at least two exponent digits ({@code 1e-05},
     * {@code 1e+16}). Java 17's {@code Double.toString} occasionally gives one digit more than the
     * shortest; such values then print with that extra digit.
     */
    static String floatRepr(double d) {
        if (d == 0.0) {
            return (1.0 / d < 0) ? "-0.0" : "0.0";
        }
        BigDecimal decimal = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
        String digits = decimal.unscaledValue().toString();
        int exponent = digits.length() - 1 - decimal.scale(); // value = 0.digits * 10^(exponent+1)
        StringBuilder out = new StringBuilder(d < 0 ? "-" : "");
        if (exponent >= -4 && exponent < 16) {
            if (exponent >= 0) {
                if (digits.length() <= exponent + 1) {
                    out.append(digits).append("0".repeat(exponent + 1 - digits.length())).append(".0");
                } else {
                    out.append(digits, 0, exponent + 1).append('.').append(digits.substring(exponent + 1));
                }
            } else {
                out.append("0.").append("0".repeat(-exponent - 1)).append(digits);
            }
        } else {
            out.append(digits.charAt(0));
            if (digits.length() > 1) {
                out.append('.').append(digits.substring(1));
            }
            out.append('e').append(exponent < 0 ? '-' : '+');
            int abs = Math.abs(exponent);
            out.append(abs < 10 ? "0" : "").append(abs);
        }
        return out.toString();
    }

    /**
     * {@code json.dumps(value, ensure_ascii=ensureAscii, indent=indent, separators=separators,
     * sort_keys=sortKeys)}: with no indent the separators default to {@code (", ", ": ")}, with an
     * indent to {@code (",", ": ")}; an indent of 0 still breaks lines, a null one keeps one line.
     */
    static String jsonDumps(Object value, boolean ensureAscii, Integer indent, String itemSeparator,
            String keySeparator, boolean sortKeys) {
        String items = itemSeparator != null ? itemSeparator : (indent == null ? ", " : ",");
        String keys = keySeparator != null ? keySeparator : ": ";
        StringBuilder out = new StringBuilder();
        appendJson(out, value, ensureAscii, indent, items, keys, sortKeys, 0);
        return out.toString();
    }

    private static void appendJson(StringBuilder out, Object value, boolean ensureAscii, Integer indent,
            String items, String keys, boolean sortKeys, int level) {
        if (isNone(value)) {
            out.append("null");
            return;
        }
        String s = asString(value);
        if (s != null) {
            appendJsonString(out, s, ensureAscii);
        } else if (value instanceof Boolean b) {
            out.append(b ? "true" : "false");
        } else if (value instanceof Double || value instanceof Float || value instanceof BigDecimal) {
            double d = ((Number) value).doubleValue();
            out.append(Double.isNaN(d) ? "NaN" : Double.isInfinite(d) ? (d > 0 ? "Infinity" : "-Infinity")
                    : floatRepr(d));
        } else if (value instanceof Number n) {
            out.append(n instanceof BigInteger ? n.toString() : Long.toString(n.longValue()));
        } else if (value instanceof Map<?, ?> map) {
            if (map.isEmpty()) {
                out.append("{}");
                return;
            }
            List<Map.Entry<?, ?>> entries = new ArrayList<>(map.entrySet());
            if (sortKeys) {
                entries.sort((a, b) -> jsonKey(a.getKey()).compareTo(jsonKey(b.getKey())));
            }
            out.append('{');
            for (int i = 0; i < entries.size(); i++) {
                if (i > 0) {
                    out.append(items);
                }
                newline(out, indent, level + 1);
                appendJsonString(out, jsonKey(entries.get(i).getKey()), ensureAscii);
                out.append(keys);
                appendJson(out, entries.get(i).getValue(), ensureAscii, indent, items, keys, sortKeys, level + 1);
            }
            newline(out, indent, level);
            out.append('}');
        } else if (isSequence(value)) {
            List<Object> list = asList(value);
            if (list.isEmpty()) {
                out.append("[]");
                return;
            }
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(items);
                }
                newline(out, indent, level + 1);
                appendJson(out, list.get(i), ensureAscii, indent, items, keys, sortKeys, level + 1);
            }
            newline(out, indent, level);
            out.append(']');
        } else {
            throw new IllegalArgumentException(
                    "Object of type " + value.getClass().getSimpleName() + " is not JSON serializable");
        }
    }

    private static void newline(StringBuilder out, Integer indent, int level) {
        if (indent != null) {
            out.append('\n').append(" ".repeat(indent * level));
        }
    }

    /** Dict keys as json.dumps converts them: strings as they are, None/bools/numbers to text. */
    private static String jsonKey(Object key) {
        if (isNone(key)) {
            return "null";
        }
        String s = asString(key);
        if (s != null) {
            return s;
        }
        if (key instanceof Boolean b) {
            return b ? "true" : "false";
        }
        if (key instanceof Double || key instanceof Float) {
            return floatRepr(((Number) key).doubleValue());
        }
        if (key instanceof Number n) {
            return n.toString();
        }
        throw new IllegalArgumentException(
                "keys must be str, int, float, bool or None, not " + key.getClass().getSimpleName());
    }

    private static void appendJsonString(StringBuilder out, String s, boolean ensureAscii) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || (ensureAscii && c > 0x7f)) {
                        out.append(String.format("\\u%04x", (int) c)); // UTF-16 units: surrogate pairs as Python
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    static boolean isSequence(Object value) {
        return value instanceof Collection<?> || value instanceof Iterable<?> || (value != null && value.getClass().isArray());
    }

    /** A list view (copy) of a collection, iterable or array. */
    static List<Object> asList(Object value) {
        List<Object> list = new ArrayList<>();
        if (value instanceof Iterable<?> iterable) {
            Iterator<?> it = iterable.iterator();
            while (it.hasNext()) {
                list.add(it.next());
            }
        } else if (value != null && value.getClass().isArray()) {
            int n = Array.getLength(value);
            for (int i = 0; i < n; i++) {
                list.add(Array.get(value, i));
            }
        }
        return list;
    }

    /** Python's str.isspace for one code point (what strip() and split() without arguments remove). */
    static boolean isPySpace(int cp) {
        if (cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f) || cp == 0x85) {
            return true;
        }
        int type = Character.getType(cp);
        return type == Character.SPACE_SEPARATOR || type == Character.LINE_SEPARATOR
                || type == Character.PARAGRAPH_SEPARATOR;
    }

    /** Python's strip/lstrip/rstrip: chars null means whitespace, otherwise any code point of chars. */
    static String strip(String s, String chars, boolean left, boolean right) {
        int[] cps = s.codePoints().toArray();
        int begin = 0;
        int end = cps.length;
        if (left) {
            while (begin < end && stripped(cps[begin], chars)) {
                begin++;
            }
        }
        if (right) {
            while (end > begin && stripped(cps[end - 1], chars)) {
                end--;
            }
        }
        return new String(cps, begin, end - begin);
    }

    private static boolean stripped(int cp, String chars) {
        return chars == null ? isPySpace(cp) : chars.codePoints().anyMatch(c -> c == cp);
    }
}
