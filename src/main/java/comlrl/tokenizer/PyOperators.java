package comlrl.tokenizer;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Python's binary operators on template values, which chat templates get from Jinja2 and Jinjava
 * evaluates the Java way ({@link PyExpressions} puts these in its place):
 *
 * <ul>
 *   <li>Integers never overflow: {@code 10 ** 20} is {@code 100000000000000000000}, not a wrapped
 *       or saturated long. Results that fit stay {@link Long}, larger ones are {@link BigInteger};
 *       {@code True} and {@code False} count as 1 and 0.</li>
 *   <li>{@code //} floors and {@code %} takes the sign of the divisor ({@code -7 // 2 == -4},
 *       {@code -7 % 3 == 2}, {@code -7.5 % 2 == 0.5}); {@code /} always gives a float; dividing by
 *       zero is Python's ZeroDivisionError.</li>
 *   <li>{@code +} adds numbers, concatenates two strings or two lists, and otherwise raises
 *       Python's TypeError ({@code 'a' + none}: "can only concatenate str (not "NoneType") to
 *       str"), where Jinjava would print "anull" or a Java list; {@code *} also repeats strings
 *       and lists ({@code '-' * 3}).</li>
 *   <li>{@code ~} joins {@code str()} of both sides ({@code 'a' ~ [1, none]} is
 *       {@code "a[1, None]"}); an undefined side is "".</li>
 *   <li>{@code ==} and {@code !=} compare as Python ({@code 1 == 1.0}, {@code '1' != 1}, None
 *       equal only to None); {@code in} finds substrings, list elements and dict keys, and
 *       raises for None ("argument of type 'NoneType' is not iterable").</li>
 * </ul>
 *
 * <p>Errors are {@link PyException}s carrying Python's exception type and message.
 */
final class PyOperators {
    private static final BigInteger LONG_MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);
    /** Largest integer result (in bits) a power may have: Python itself cannot print more than 4300 digits. */
    private static final long MAX_POWER_BITS = 1L << 16;
    /** Longest string or list a repetition may make. */
    private static final long MAX_REPEAT_LENGTH = 1L << 24;

    private PyOperators() {}

    /** A Python error raised while evaluating a template expression ("TypeError: ..."). */
    static final class PyException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PyException(String type, String message) {
            super(type + ": " + message);
        }
    }

    static PyException typeError(String message) {
        return new PyException("TypeError", message);
    }

    /** Python's name for the type of a template value ({@code type(x).__name__}; Jinja2's Undefined for null). */
    static String typeName(Object value) {
        if (value == null) {
            return "Undefined";
        }
        if (value == PyValues.NONE) {
            return "NoneType";
        }
        if (PyValues.asString(value) != null) {
            return "str";
        }
        if (value instanceof Boolean) {
            return "bool";
        }
        if (isInteger(value)) {
            return "int";
        }
        if (value instanceof Number) {
            return "float";
        }
        if (value instanceof Map<?, ?>) {
            return "dict";
        }
        if (PyValues.isSequence(value)) {
            return "list";
        }
        return value.getClass().getSimpleName();
    }

    // ------------------------------------------------------------------ operators

    /** {@code a + b}. */
    static Object add(Object a, Object b) {
        if (isNumber(a) && isNumber(b)) {
            return isInteger(a) && isInteger(b) ? integer(big(a).add(big(b))) : toDouble(a) + toDouble(b);
        }
        String sa = PyValues.asString(a);
        String sb = PyValues.asString(b);
        if (sa != null) {
            if (sb == null) {
                throw typeError("can only concatenate str (not \"" + typeName(b) + "\") to str");
            }
            return sa + sb;
        }
        if (PyValues.isSequence(a)) {
            if (!PyValues.isSequence(b) || sb != null) {
                throw typeError("can only concatenate list (not \"" + typeName(b) + "\") to list");
            }
            List<Object> joined = new ArrayList<>(PyValues.asList(a));
            joined.addAll(PyValues.asList(b));
            return joined;
        }
        throw unsupported("+", a, b);
    }

    /** {@code a - b}. */
    static Object subtract(Object a, Object b) {
        requireNumbers("-", a, b);
        return isInteger(a) && isInteger(b) ? integer(big(a).subtract(big(b))) : toDouble(a) - toDouble(b);
    }

    /** {@code a * b}, including repetition of a string or list by an integer. */
    static Object multiply(Object a, Object b) {
        if (isNumber(a) && isNumber(b)) {
            return isInteger(a) && isInteger(b) ? integer(big(a).multiply(big(b))) : toDouble(a) * toDouble(b);
        }
        if (isSequenceLike(a) || isSequenceLike(b)) {
            Object sequence = isSequenceLike(a) ? a : b;
            Object count = sequence == a ? b : a;
            if (!isInteger(count)) {
                throw typeError("can't multiply sequence by non-int of type '" + typeName(count) + "'");
            }
            BigInteger n = big(count);
            int times = n.signum() <= 0 ? 0 : n.min(BigInteger.valueOf(Integer.MAX_VALUE)).intValue();
            String s = PyValues.asString(sequence);
            long length = (long) times * (s != null ? s.length() : PyValues.asList(sequence).size());
            if (length > MAX_REPEAT_LENGTH) {
                throw new PyException("MemoryError", "repeating a sequence " + n + " times is too large for a chat template");
            }
            if (s != null) {
                return s.repeat(times);
            }
            List<Object> items = PyValues.asList(sequence);
            List<Object> out = new ArrayList<>();
            for (long i = 0; i < times; i++) {
                out.addAll(items);
            }
            return out;
        }
        throw unsupported("*", a, b);
    }

    /** {@code a / b}: true division, always a float. */
    static Object divide(Object a, Object b) {
        requireNumbers("/", a, b);
        if (isInteger(a) && isInteger(b)) {
            BigInteger x = big(a);
            BigInteger y = big(b);
            if (y.signum() == 0) {
                throw new PyException("ZeroDivisionError", "division by zero");
            }
            if (x.bitLength() <= 53 && y.bitLength() <= 53) {
                return x.doubleValue() / y.doubleValue(); // both exact: one correctly rounded division
            }
            return new BigDecimal(x).divide(new BigDecimal(y), MathContext.DECIMAL128).doubleValue();
        }
        double y = toDouble(b);
        if (y == 0) {
            throw new PyException("ZeroDivisionError", "float division by zero");
        }
        return toDouble(a) / y;
    }

    /** {@code a // b}: the floor of the quotient. */
    static Object floorDivide(Object a, Object b) {
        requireNumbers("//", a, b);
        if (isInteger(a) && isInteger(b)) {
            BigInteger[] qr = integerDivMod(big(a), big(b));
            return integer(qr[0]);
        }
        return floatDivMod(toDouble(a), toDouble(b), "float floor division by zero")[0];
    }

    /** {@code a % b}: the remainder with the sign of the divisor. */
    static Object modulo(Object a, Object b) {
        if (PyValues.asString(a) != null) {
            throw typeError("printf-style string formatting ('...' % values) is not supported in chat templates");
        }
        requireNumbers("%", a, b);
        if (isInteger(a) && isInteger(b)) {
            if (big(b).signum() == 0) {
                throw new PyException("ZeroDivisionError", "integer modulo by zero");
            }
            return integer(integerDivMod(big(a), big(b))[1]);
        }
        return floatDivMod(toDouble(a), toDouble(b), "float modulo")[1];
    }

    /** {@code a ** b}. */
    static Object power(Object a, Object b) {
        requireNumbers("**", a, b);
        if (isInteger(a) && isInteger(b)) {
            BigInteger base = big(a);
            BigInteger exponent = big(b);
            if (exponent.signum() >= 0) {
                if (base.abs().compareTo(BigInteger.ONE) <= 0) { // 0, 1, -1: only 0 ** 0 and the exponent's parity matter
                    return integer(base.pow(exponent.signum() == 0 ? 0 : exponent.testBit(0) ? 1 : 2));
                }
                // (bits of |base|) - 1, times the exponent: a lower bound of the bits of the result
                if (exponent.bitLength() > 31 || (long) (base.abs().bitLength() - 1) * exponent.intValue() > MAX_POWER_BITS) {
                    throw new PyException("OverflowError", base + " ** " + exponent + " is too large for a chat template");
                }
                return integer(base.pow(exponent.intValueExact()));
            }
            if (base.signum() == 0) {
                throw new PyException("ZeroDivisionError", "0.0 cannot be raised to a negative power");
            }
        }
        double x = toDouble(a);
        double y = toDouble(b);
        if (x == 0 && y < 0) {
            throw new PyException("ZeroDivisionError", "0.0 cannot be raised to a negative power");
        }
        if (x < 0 && y != Math.rint(y) && Double.isFinite(y)) {
            throw new PyException("ValueError", "a negative number raised to a fractional power is complex");
        }
        double result = Math.pow(x, y);
        if (Double.isInfinite(result) && Double.isFinite(x) && Double.isFinite(y)) {
            throw new PyException("OverflowError", "(34, 'Numerical result out of range')");
        }
        return result;
    }

    /** {@code -a}. */
    static Object negate(Object a) {
        if (isInteger(a)) {
            return integer(big(a).negate());
        }
        if (a instanceof Number n) {
            return -n.doubleValue();
        }
        throw typeError("bad operand type for unary -: '" + typeName(a) + "'");
    }

    /** {@code a ~ b}: Jinja2's string concatenation of {@code str(a)} and {@code str(b)}. */
    static Object concat(Object a, Object b) {
        return PyValues.str(a) + PyValues.str(b);
    }

    /**
     * {@code item in container}: a substring of a string, an element of a list (by {@link #equal}),
     * a key of a dict; nothing is in an undefined value (Jinja2's Undefined iterates as empty).
     */
    static boolean contains(Object container, Object item) {
        if (container == null) {
            return false;
        }
        String s = PyValues.asString(container);
        if (s != null) {
            String part = PyValues.asString(item);
            if (part == null) {
                throw typeError("'in <string>' requires string as left operand, not " + typeName(item));
            }
            return s.contains(part);
        }
        if (container instanceof Map<?, ?> map) {
            for (Object key : map.keySet()) {
                if (equal(key, item)) {
                    return true;
                }
            }
            return false;
        }
        if (PyValues.isSequence(container)) {
            for (Object element : PyValues.asList(container)) {
                if (equal(element, item)) {
                    return true;
                }
            }
            return false;
        }
        throw typeError("argument of type '" + typeName(container) + "' is not iterable");
    }

    /**
     * {@code a == b} as Python compares: None only equals None, an undefined value only an
     * undefined one (as Jinja2's Undefined), numbers by value across types.
     */
    static boolean equal(Object a, Object b) {
        if (a == PyValues.NONE || b == PyValues.NONE || a == null || b == null) {
            return a == b;
        }
        if (isNumber(a) && isNumber(b)) {
            if (isInteger(a) && isInteger(b)) {
                return big(a).equals(big(b));
            }
            if (isInteger(a) || isInteger(b)) {
                BigInteger i = big(isInteger(a) ? a : b);
                double d = toDouble(isInteger(a) ? b : a);
                return Double.isFinite(d) && d == Math.rint(d) && new BigDecimal(d).toBigIntegerExact().equals(i);
            }
            return toDouble(a) == toDouble(b);
        }
        String sa = PyValues.asString(a);
        String sb = PyValues.asString(b);
        if (sa != null || sb != null) {
            return sa != null && sa.equals(sb);
        }
        if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
            if (ma.size() != mb.size()) {
                return false;
            }
            for (Map.Entry<?, ?> e : ma.entrySet()) {
                if (!mb.containsKey(e.getKey()) || !equal(e.getValue(), mb.get(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }
        if (PyValues.isSequence(a) && PyValues.isSequence(b)) {
            List<Object> la = PyValues.asList(a);
            List<Object> lb = PyValues.asList(b);
            if (la.size() != lb.size()) {
                return false;
            }
            for (int i = 0; i < la.size(); i++) {
                if (!equal(la.get(i), lb.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return Objects.equals(a, b);
    }

    // ------------------------------------------------------------------ helpers

    /** Python's int: Java integral numbers and booleans. */
    static boolean isInteger(Object value) {
        return value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte
                || value instanceof BigInteger || value instanceof Boolean;
    }

    private static boolean isNumber(Object value) {
        return value instanceof Number || value instanceof Boolean;
    }

    private static boolean isSequenceLike(Object value) {
        return PyValues.asString(value) != null || (PyValues.isSequence(value) && !(value instanceof Map<?, ?>));
    }

    private static BigInteger big(Object value) {
        if (value instanceof BigInteger b) {
            return b;
        }
        if (value instanceof Boolean b) {
            return b ? BigInteger.ONE : BigInteger.ZERO;
        }
        return BigInteger.valueOf(((Number) value).longValue());
    }

    private static double toDouble(Object value) {
        if (value instanceof Boolean b) {
            return b ? 1 : 0;
        }
        if (value instanceof BigInteger b) {
            double d = b.doubleValue();
            if (Double.isInfinite(d)) {
                throw new PyException("OverflowError", "int too large to convert to float");
            }
            return d;
        }
        return ((Number) value).doubleValue();
    }

    /** An integer result: a Long when it fits, else the BigInteger. */
    static Object integer(BigInteger value) {
        return value.compareTo(LONG_MIN) >= 0 && value.compareTo(LONG_MAX) <= 0 ? (Object) value.longValue() : value;
    }

    /** Floor division and modulo of integers: the quotient rounds down, the remainder has the divisor's sign. */
    private static BigInteger[] integerDivMod(BigInteger x, BigInteger y) {
        if (y.signum() == 0) {
            throw new PyException("ZeroDivisionError", "integer division or modulo by zero");
        }
        BigInteger[] qr = x.divideAndRemainder(y);
        if (qr[1].signum() != 0 && qr[1].signum() != y.signum()) {
            qr[0] = qr[0].subtract(BigInteger.ONE);
            qr[1] = qr[1].add(y);
        }
        return qr;
    }

    /** CPython's float divmod: {floor(x / y), x - floor(x / y) * y} computed without double rounding. */
    private static double[] floatDivMod(double x, double y, String zeroMessage) {
        if (y == 0) {
            throw new PyException("ZeroDivisionError", zeroMessage);
        }
        double mod = x % y; // C fmod
        double div = (x - mod) / y;
        if (mod != 0) {
            if ((y < 0) != (mod < 0)) {
                mod += y;
                div -= 1.0;
            }
        } else {
            mod = Math.copySign(0.0, y);
        }
        double floorDiv;
        if (div != 0) {
            floorDiv = Math.floor(div);
            if (div - floorDiv > 0.5) {
                floorDiv += 1.0;
            }
        } else {
            floorDiv = Math.copySign(0.0, x / y);
        }
        return new double[] {floorDiv, mod};
    }

    private static void requireNumbers(String operator, Object a, Object b) {
        if (!isNumber(a) || !isNumber(b)) {
            throw unsupported(operator, a, b);
        }
    }

    private static PyException unsupported(String operator, Object a, Object b) {
        return typeError("unsupported operand type(s) for " + operator + ": '" + typeName(a) + "' and '"
                + typeName(b) + "'");
    }
}
