package comlrl.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Python semantics of the helpers, against values CPython gives (written next to each). */
class PyValuesTest {

    @Test
    void floatReprAsPython() {
        assertThat(PyValues.floatRepr(1.0)).isEqualTo("1.0");          // repr(1.0)
        assertThat(PyValues.floatRepr(0.1 + 0.2)).isEqualTo("0.30000000000000004");
        assertThat(PyValues.floatRepr(1e-5)).isEqualTo("1e-05");       // exponent < -4: scientific
        assertThat(PyValues.floatRepr(0.0001)).isEqualTo("0.0001");
        assertThat(PyValues.floatRepr(1e16)).isEqualTo("1e+16");       // exponent >= 16: scientific
        assertThat(PyValues.floatRepr(123456789012345.6)).isEqualTo("123456789012345.6");
        assertThat(PyValues.floatRepr(-2.5e-300)).isEqualTo("-2.5e-300");
        assertThat(PyValues.floatRepr(-0.0)).isEqualTo("-0.0");
        assertThat(PyValues.floatRepr(100.0)).isEqualTo("100.0");
    }

    @Test
    void reprAndStrAsPython() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("a", Arrays.asList(1, 2.5, null, true));
        d.put("b", "it's");
        d.put("c", "say \"hi\"\n");
        assertThat(PyValues.str(d)).isEqualTo("{'a': [1, 2.5, None, True], 'b': \"it's\", 'c': 'say \"hi\"\\n'}");
        assertThat(PyValues.repr("both ' and \"")).isEqualTo("'both \\' and \"'");
        assertThat(PyValues.repr("tab\tbell\u0007é\u00a0")).isEqualTo("'tab\\tbell\\x07é\\xa0'");
        assertThat(PyValues.str(false)).isEqualTo("False");
        assertThat(PyValues.str("plain")).isEqualTo("plain");
    }

    @Test
    void jsonDumpsAsPython() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("z", 1);
        d.put("a", List.of("é", 1.5, false));
        d.put("n", null);
        // json.dumps(d)
        assertThat(PyValues.jsonDumps(d, false, null, null, null, false))
                .isEqualTo("{\"z\": 1, \"a\": [\"é\", 1.5, false], \"n\": null}");
        // json.dumps(d, ensure_ascii=True, sort_keys=True)
        assertThat(PyValues.jsonDumps(d, true, null, null, null, true))
                .isEqualTo("{\"a\": [\"\\u00e9\", 1.5, false], \"n\": null, \"z\": 1}");
        // json.dumps(d, indent=2)
        assertThat(PyValues.jsonDumps(d, false, 2, null, null, false))
                .isEqualTo("{\n  \"z\": 1,\n  \"a\": [\n    \"é\",\n    1.5,\n    false\n  ],\n  \"n\": null\n}");
        // json.dumps("\u0001\"\\/\U0001F600", ensure_ascii=True): surrogate pair escapes
        assertThat(PyValues.jsonDumps("\u0001\"\\/\uD83D\uDE00", true, null, null, null, false))
                .isEqualTo("\"\\u0001\\\"\\\\/\\ud83d\\ude00\"");
        assertThat(PyValues.jsonDumps(Map.of(), false, 4, null, null, false)).isEqualTo("{}");
        assertThat(PyValues.jsonDumps(List.of(1, 2), false, null, ",", ":", false)).isEqualTo("[1,2]");
    }

    @Test
    void splitAndStripAsPython() {
        assertThat(PyMethodResolver.split("a</think>", "</think>", -1)).containsExactly("a", "");
        assertThat(PyMethodResolver.split("  a b  c ", null, -1)).containsExactly("a", "b", "c");
        assertThat(PyMethodResolver.split("  a b  c ", null, 1)).containsExactly("a", "b  c ");  // rest keeps its end
        assertThat(PyMethodResolver.split("a,b,c", ",", 1)).containsExactly("a", "b,c");
        assertThat(PyMethodResolver.rsplit("a,b,c", ",", 1)).containsExactly("a,b", "c");
        assertThat(PyMethodResolver.rsplit("aaa", "aa", -1)).containsExactly("a", "");
        assertThat(PyMethodResolver.rsplit("  a b  c ", null, 1)).containsExactly("  a b", "c");
        assertThat(PyValues.strip("\u3000 x \u00a0\n", null, true, true)).isEqualTo("x"); // Unicode spaces too
        assertThat(PyValues.strip("<<x>>", "<>", true, false)).isEqualTo("x>>");
    }

    @Test
    void sliceIndicesAsPython() {
        // list(range(5))[::-2] == [4, 2, 0]; [1:-1] == [1, 2, 3]; [-10:2] == [0, 1]; [3:1] == []
        assertThat(PyFunctions.pySlice(List.of(0, 1, 2, 3, 4), null, null, -2L)).isEqualTo(List.of(4, 2, 0));
        assertThat(PyFunctions.pySlice(List.of(0, 1, 2, 3, 4), 1L, -1L, null)).isEqualTo(List.of(1, 2, 3));
        assertThat(PyFunctions.pySlice(List.of(0, 1, 2, 3, 4), -10L, 2L, null)).isEqualTo(List.of(0, 1));
        assertThat(PyFunctions.pySlice(List.of(0, 1, 2, 3, 4), 3L, 1L, null)).isEqualTo(List.of());
        // "a😀b"[::-1] reverses code points, not UTF-16 units
        assertThat(PyFunctions.pySlice("a\uD83D\uDE00b", null, null, -1L)).isEqualTo("b\uD83D\uDE00a");
    }
}
