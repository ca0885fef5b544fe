package comlrl.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/** Python's arithmetic on template values: exact integers, floor division, Python's TypeErrors. */
class PyOperatorsTest {
    private static BigInteger big(long x) {
        return BigInteger.valueOf(x);
    }

    /** The result as a BigInteger (a Long when it fits, as the operators return it). */
    private static BigInteger exact(Object result) {
        assertThat(result).isInstanceOfAny(Long.class, BigInteger.class);
        if (result instanceof BigInteger b) {
            assertThat(b.bitLength()).as("a BigInteger only when a long cannot hold it").isGreaterThan(63);
            return b;
        }
        return big((Long) result);
    }

    @Property(tries = 500)
    void integerArithmeticIsExact(@ForAll long a, @ForAll long b) {
        assertThat(exact(PyOperators.add(a, b))).isEqualTo(big(a).add(big(b)));
        assertThat(exact(PyOperators.subtract(a, b))).isEqualTo(big(a).subtract(big(b)));
        assertThat(exact(PyOperators.multiply(a, b))).isEqualTo(big(a).multiply(big(b)));
        assertThat(exact(PyOperators.negate(a))).isEqualTo(big(a).negate());
    }

    @Property(tries = 500)
    void floorDivisionAndModuloAreFloored(@ForAll long a, @ForAll long b) {
        if (b == 0) {
            return;
        }
        // a == b * q + r with r of b's sign (or 0) and |r| < |b|: q = floor(a / b)
        BigInteger q = exact(PyOperators.floorDivide(a, b));
        BigInteger r = exact(PyOperators.modulo(a, b));
        assertThat(big(b).multiply(q).add(r)).isEqualTo(big(a));
        assertThat(r.signum() == 0 || r.signum() == Long.signum(b)).isTrue();
        assertThat(r.abs()).isLessThan(big(b).abs());
        if (!(a == Long.MIN_VALUE && b == -1)) {
            assertThat(q).isEqualTo(big(Math.floorDiv(a, b)));
        }
        assertThat(r).isEqualTo(big(Math.floorMod(a, b)));
    }

    @Test
    void handWorkedValues() {
        // 10 ** 20 = 100000000000000000000 > Long.MAX_VALUE (9.2e18): a BigInteger, not a saturated long
        assertThat(PyOperators.power(10L, 20L)).isEqualTo(new BigInteger("100000000000000000000"));
        assertThat(PyOperators.power(2L, 10L)).isEqualTo(1024L);
        assertThat(PyOperators.power(2L, -1L)).isEqualTo(0.5);
        assertThat(PyOperators.power(-1L, 7L)).isEqualTo(-1L);
        assertThat(PyOperators.power(0L, 0L)).isEqualTo(1L);
        // floats: -7.5 = 2 * -4 + 0.5; 7.5 = -2 * -4 - 0.5
        assertThat(PyOperators.floorDivide(-7.5, 2L)).isEqualTo(-4.0);
        assertThat(PyOperators.modulo(-7.5, 2L)).isEqualTo(0.5);
        assertThat(PyOperators.modulo(7.5, -2L)).isEqualTo(-0.5);
        assertThat(PyOperators.modulo(6.0, -3L)).isEqualTo(-0.0); // the zero takes the divisor's sign
        assertThat(PyOperators.divide(7L, 2L)).isEqualTo(3.5);
        assertThat(PyOperators.divide(new BigInteger("100000000000000000000"), 4L)).isEqualTo(2.5e19);
        // big results come back to Long when they fit: 10**20 // 10**19 == 10
        assertThat(PyOperators.floorDivide(PyOperators.power(10L, 20L), PyOperators.power(10L, 19L))).isEqualTo(10L);
        assertThat(PyOperators.add(true, 1L)).isEqualTo(2L);
        assertThat(PyOperators.multiply("ab", 3L)).isEqualTo("ababab");
        assertThat(PyOperators.multiply(2L, List.of(1L))).isEqualTo(List.of(1L, 1L));
        assertThat(PyOperators.multiply("ab", -1L)).isEqualTo("");
        assertThat(PyOperators.concat("a", Arrays.asList(1L, PyValues.NONE, "b"))).isEqualTo("a[1, None, 'b']");
        assertThat(PyOperators.concat(null, "a")).isEqualTo("a"); // an undefined side prints as ""
        assertThat(PyOperators.equal(1L, 1.0)).isTrue();
        assertThat(PyOperators.equal("1", 1L)).isFalse();
        assertThat(PyOperators.equal(PyValues.NONE, null)).isFalse(); // None is not undefined
        assertThat(PyOperators.equal(new BigInteger("100000000000000000000"), 1e20)).isTrue();
        assertThat(PyOperators.contains("abc", "b")).isTrue();
        assertThat(PyOperators.contains(List.of(1.0), 1L)).isTrue();
        assertThat(PyOperators.contains(null, "a")).isFalse();
    }

    @Test
    void pythonsErrors() {
        assertThatThrownBy(() -> PyOperators.add("a", PyValues.NONE))
                .hasMessage("TypeError: can only concatenate str (not \"NoneType\") to str");
        assertThatThrownBy(() -> PyOperators.add("a", List.of()))
                .hasMessage("TypeError: can only concatenate str (not \"list\") to str");
        assertThatThrownBy(() -> PyOperators.add(List.of(), "a"))
                .hasMessage("TypeError: can only concatenate list (not \"str\") to list");
        assertThatThrownBy(() -> PyOperators.add(1L, "a"))
                .hasMessage("TypeError: unsupported operand type(s) for +: 'int' and 'str'");
        assertThatThrownBy(() -> PyOperators.add("a", null))
                .hasMessage("TypeError: can only concatenate str (not \"Undefined\") to str");
        assertThatThrownBy(() -> PyOperators.multiply("a", 1.5))
                .hasMessage("TypeError: can't multiply sequence by non-int of type 'float'");
        assertThatThrownBy(() -> PyOperators.floorDivide(1L, 0L))
                .hasMessage("ZeroDivisionError: integer division or modulo by zero");
        assertThatThrownBy(() -> PyOperators.modulo(1L, 0L)).hasMessage("ZeroDivisionError: integer modulo by zero");
        assertThatThrownBy(() -> PyOperators.divide(1L, 0L)).hasMessage("ZeroDivisionError: division by zero");
        assertThatThrownBy(() -> PyOperators.power(0L, -1L))
                .hasMessage("ZeroDivisionError: 0.0 cannot be raised to a negative power");
        assertThatThrownBy(() -> PyOperators.power(10L, 100_000L)).hasMessageStartingWith("OverflowError: ");
        assertThatThrownBy(() -> PyOperators.contains(PyValues.NONE, "a"))
                .hasMessage("TypeError: argument of type 'NoneType' is not iterable");
        assertThatThrownBy(() -> PyOperators.modulo("%s", "x")).hasMessageContaining("not supported");
    }
}
