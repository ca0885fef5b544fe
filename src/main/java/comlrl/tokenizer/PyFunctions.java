package comlrl.tokenizer;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import java.time.LocalDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The global functions of Hugging Face's chat-template environment, plus the helpers that the
 * template rewrite of {@link TemplateSource} calls. Registered with Jinjava by {@link ChatTemplate};
 * public static because Jinjava calls them by reflection.
 */
final class PyFunctions {
    /** Template variable holding the {@link LocalDateTime} that {@code strftime_now} formats. */
    static final String NOW_VARIABLE = "__comlrl_now";

    private PyFunctions() {}

    /** {@code raise_exception(message)}: aborts rendering; surfaces as a {@link ChatTemplateException}. */
    public static Object raiseException(Object message) {
        throw new RaisedException(PyValues.str(message));
    }

    /** {@code strftime_now(format)}: the render's current local time formatted as Python's strftime. */
    public static String strftimeNow(String format) {
        JinjavaInterpreter interpreter = JinjavaInterpreter.getCurrent();
        Object now = interpreter == null ? null : interpreter.getContext().get(NOW_VARIABLE);
        return strftime(now instanceof LocalDateTime t ? t : LocalDateTime.now(), format);
    }

    /** Python's {@code str(value)} for {@code {{ ... }}} output (see {@link PyValues#str}). */
    public static String pyStr(Object value) {
        return PyValues.str(value);
    }

    /**
     * Python slicing {@code seq[start:stop:step]} of a list or string (null arguments are omitted
     * ones), with negative indices and steps as in Python; strings are sliced by code point.
     */
    public static Object pySlice(Object seq, Object start, Object stop, Object step) {
        if (seq == null) {
            throw new IllegalArgumentException("cannot slice an undefined value");
        }
        if (seq == PyValues.NONE) {
            throw PyOperators.typeError("'NoneType' object is not subscriptable");
        }
        int stepValue = PyValues.isNone(step) ? 1 : toInt(step, "slice step");
        if (stepValue == 0) {
            throw new IllegalArgumentException("slice step cannot be zero");
        }
        String s = PyValues.asString(seq);
        if (s != null) {
            int[] cps = s.codePoints().toArray();
            StringBuilder out = new StringBuilder();
            for (int i : sliceIndices(cps.length, start, stop, stepValue)) {
                out.appendCodePoint(cps[i]);
            }
            return out.toString();
        }
        if (!PyValues.isSequence(seq)) {
            throw new IllegalArgumentException("cannot slice " + PyValues.repr(seq));
        }
        List<Object> items = PyValues.asList(seq);
        List<Object> out = new ArrayList<>();
        for (int i : sliceIndices(items.size(), start, stop, stepValue)) {
            out.add(items.get(i));
        }
        return out;
    }

    /**
     * What a Python for loop iterates over: a string's characters (code points), a dict's keys,
     * nothing for an undefined value (Jinja2's Undefined iterates as empty); other sequences as
     * they are. None, a number or a boolean is Python's TypeError.
     */
    public static Object iter(Object seq) {
        if (seq == null) {
            return List.of();
        }
        if (seq == PyValues.NONE || seq instanceof Number || seq instanceof Boolean) {
            throw PyOperators.typeError("'" + PyOperators.typeName(seq) + "' object is not iterable");
        }
        String s = PyValues.asString(seq);
        if (s != null) {
            List<Object> chars = new ArrayList<>();
            s.codePoints().forEach(cp -> chars.add(new String(Character.toChars(cp))));
            return chars;
        }
        if (seq instanceof java.util.Map<?, ?> map) {
            return new ArrayList<Object>(map.keySet());
        }
        return seq;
    }

    /** The items of {@code seq} (as {@link #iter} gives them) at {@code indices}; for loop filters. */
    public static Object pick(Object seq, Object indices) {
        Object iterable = iter(seq);
        List<Object> items = PyValues.isSequence(iterable) ? PyValues.asList(iterable) : List.of(iterable);
        List<Object> out = new ArrayList<>();
        for (Object index : PyValues.asList(indices)) {
            out.add(items.get(toInt(index, "index")));
        }
        return out;
    }

    /** The indices Python's slice(start, stop, step) selects from a sequence of length n. */
    static List<Integer> sliceIndices(int n, Object start, Object stop, int step) {
        int lower = step > 0 ? 0 : -1;
        int upper = step > 0 ? n : n - 1;
        int from = PyValues.isNone(start) ? (step > 0 ? lower : upper) : clamp(toInt(start, "slice start"), n, lower, upper);
        int to = PyValues.isNone(stop) ? (step > 0 ? upper : lower) : clamp(toInt(stop, "slice stop"), n, lower, upper);
        List<Integer> indices = new ArrayList<>();
        for (int i = from; step > 0 ? i < to : i > to; i += step) {
            indices.add(i);
        }
        return indices;
    }

    private static int clamp(int index, int n, int lower, int upper) {
        if (index < 0) {
            index += n;
            return Math.max(index, lower);
        }
        return Math.min(index, upper);
    }

    private static int toInt(Object value, String what) {
        if (value instanceof Number number) {
            return number.intValue();
        }
        throw new IllegalArgumentException(what + " must be an integer or none, got " + PyValues.repr(value));
    }

    /**
     * Python's {@code datetime.strftime} in the C locale for the directives chat templates use:
     * %a %A %b %B %d %e %m %y %Y %H %I %M %S %p %j %f %Z %z %%, and glibc's {@code %-d} style
     * (no padding).
     */
    static String strftime(LocalDateTime t, String format) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 >= format.length()) {
                out.append(c);
                continue;
            }
            char d = format.charAt(++i);
            boolean noPad = false;
            if (d == '-' && i + 1 < format.length()) {
                noPad = true;
                d = format.charAt(++i);
            }
            switch (d) {
                case 'a' -> out.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> out.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'b', 'h' -> out.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'B' -> out.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'd' -> out.append(pad(t.getDayOfMonth(), 2, noPad));
                case 'e' -> out.append(noPad ? Integer.toString(t.getDayOfMonth())
                        : String.format("%2d", t.getDayOfMonth()));
                case 'm' -> out.append(pad(t.getMonthValue(), 2, noPad));
                case 'y' -> out.append(pad(t.getYear() % 100, 2, noPad));
                case 'Y' -> out.append(t.getYear());
                case 'H' -> out.append(pad(t.getHour(), 2, noPad));
                case 'I' -> out.append(pad(t.getHour() % 12 == 0 ? 12 : t.getHour() % 12, 2, noPad));
                case 'M' -> out.append(pad(t.getMinute(), 2, noPad));
                case 'S' -> out.append(pad(t.getSecond(), 2, noPad));
                case 'p' -> out.append(t.getHour() < 12 ? "AM" : "PM");
                case 'j' -> out.append(pad(t.getDayOfYear(), 3, noPad));
                case 'f' -> out.append(pad(t.getNano() / 1000, 6, false));
                case 'Z', 'z' -> { } // a naive datetime has no zone: Python prints nothing
                case '%' -> out.append('%');
                default -> out.append('%').append(noPad ? "-" : "").append(d);
            }
        }
        return out.toString();
    }

    private static String pad(int value, int width, boolean noPad) {
        String digits = Integer.toString(value);
        return noPad || digits.length() >= width ? digits : "0".repeat(width - digits.length()) + digits;
    }

    /** Thrown by {@code raise_exception}; {@link ChatTemplate} turns it into a ChatTemplateException. */
    static final class RaisedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RaisedException(String message) {
            super(message);
        }
    }
}
