package comlrl.reward;

import comlrl.data.TaskItem;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Text operations on model-written Python that {@link CodeReward} scores with: finding one function in a
 * completion, the imports of a task's prompt, the tests of a task (HumanEval's {@code check(candidate)} or
 * MBPP's {@code test_list}), and the helper-usage checks of the collaboration bonuses. Pure functions on
 * strings; nothing here runs code.
 */
public final class CodePrograms {
    /** The helper function agent 0 writes. */
    public static final String AUX = "aux";

    private static final Pattern FENCE = Pattern.compile("^\\s*```.*$");
    private static final Pattern IMPORT = Pattern.compile("^(from\\s+[\\w.]+\\s+import\\s+.+|import\\s+[\\w.,\\s]+)$");
    private static final Pattern DEF = Pattern.compile("^(\\s*)def\\s+(\\w+)\\s*\\(");
    private static final Pattern RETURN = Pattern.compile("\\breturn\\s");
    private static final Pattern CALL = Pattern.compile("(?<![\\w.])([A-Za-z_]\\w*)\\s*\\(");
    /** {@code assert True, "..."} lines of HumanEval's check bodies: always pass, so they are not counted. */
    private static final Pattern TRIVIAL_ASSERT = Pattern.compile("^\\s*assert\\s+True\\b");
    private static final Set<String> NOT_ENTRY_POINTS = Set.of("set", "sorted", "list", "tuple", "dict", "abs", "round",
            "len", "str", "int", "float", "bool", "sum", "min", "max", "isinstance", "all", "any", "frozenset");

    private CodePrograms() {}

    /**
     * The function {@code name} in a completion, dedented to column 0, or "" when it has none: the first line
     * {@code def name(} (at any indentation; Markdown fence lines are dropped first) and every following line
     * that is blank or indented deeper than it, up to the first that is not.
     */
    public static String function(String completion, String name) {
        List<String> lines = codeLines(completion);
        Pattern start = Pattern.compile("^(\\s*)def\\s+" + Pattern.quote(name) + "\\s*\\(");
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = start.matcher(lines.get(i));
            if (m.find()) {
                return block(lines, i, m.group(1).length());
            }
        }
        return "";
    }

    /** The name of the last function defined in a completion other than {@code exclude}, or null. */
    public static String lastFunctionName(String completion, String exclude) {
        String last = null;
        for (String line : codeLines(completion)) {
            Matcher m = DEF.matcher(line);
            if (m.find() && !m.group(2).equals(exclude)) {
                last = m.group(2);
            }
        }
        return last;
    }

    /** Whether a function's text holds a {@code return} followed by a blank (the reference's "properly defined"). */
    public static boolean hasReturn(String function) {
        return RETURN.matcher(function).find();
    }

    /** The distinct import lines of a prompt ({@code import x}, {@code from x import y}), in order, joined by newlines. */
    public static String imports(String prompt) {
        Set<String> found = new LinkedHashSet<>();
        for (String line : prompt.split("\n", -1)) {
            String t = line.strip();
            if (IMPORT.matcher(t).matches()) {
                found.add(t);
            }
        }
        return String.join("\n", found);
    }

    /** Whether {@code main} calls {@code aux(...)} anywhere (its def line aside). */
    public static boolean usesAux(String main) {
        for (String line : body(main)) {
            if (Pattern.compile("\\b" + AUX + "\\s*\\(").matcher(line).find()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code main} is a mere wrapper of {@code aux}: its body (comments, docstrings and blank lines
     * aside) is empty, is the single line {@code return ...aux...}, or is the two lines
     * {@code v = aux(...)} and {@code return v}.
     */
    public static boolean isWrapper(String main) {
        List<String> body = body(main);
        if (body.isEmpty()) {
            return true;
        }
        if (body.size() == 1) {
            return body.get(0).startsWith("return ") && body.get(0).contains(AUX);
        }
        if (body.size() == 2) {
            Matcher m = Pattern.compile("^(\\w+)\\s*=\\s*" + AUX + "\\s*\\(").matcher(body.get(0));
            return m.find() && body.get(1).equals("return " + m.group(1));
        }
        return false;
    }

    /** Whether {@code main} has a statement that is a bare call {@code aux(...)}, its value thrown away. */
    public static boolean ignoresAux(String main) {
        Pattern bare = Pattern.compile("^" + AUX + "\\s*\\(.*\\)\\s*;?$");
        return body(main).stream().anyMatch(line -> bare.matcher(line).matches());
    }

    /**
     * The assert tests of a task, run after the program in its namespace:
     * <ul>
     *   <li>a {@code test_list} (MBPP): its {@code test_imports} lines, then its asserts, one per line;</li>
     *   <li>a {@code test} holding {@code def check(candidate):} (HumanEval): the whole test module (it
     *       defines {@code check} and whatever it needs), then {@code candidate = ENTRY_POINT} and the body of
     *       {@code check} dedented to the top level (its {@code assert True} lines left out), so that each of its top-level asserts counts as one test;
     *       when the body has no top-level assert (all inside loops), the single test
     *       {@code assert check(ENTRY_POINT) is None};</li>
     *   <li>any other {@code test}: taken as top-level asserts as it is.</li>
     * </ul>
     *
     * @throws IllegalArgumentException when the item has neither {@code test} nor {@code test_list}
     */
    public static String tests(TaskItem item, String entryPoint) {
        if (item.has("test_list") && item.get("test_list") != null) {
            StringBuilder tests = new StringBuilder();
            for (Object line : listOf(item.get("test_imports"))) {
                tests.append(line).append('\n');
            }
            for (Object line : listOf(item.get("test_list"))) {
                tests.append(line).append('\n');
            }
            return tests.toString();
        }
        if (!(item.get("test") instanceof String test)) {
            throw new IllegalArgumentException("reward code needs a 'test' (HumanEval: def check(candidate): ...) or "
                    + "'test_list' (MBPP: a list of asserts) field in each task item; the item has "
                    + item.asMap().keySet());
        }
        List<String> lines = List.of(test.split("\n", -1));
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = Pattern.compile("^(\\s*)def\\s+check\\s*\\(\\s*candidate\\s*\\)\\s*:").matcher(lines.get(i));
            if (m.find()) {
                String body = dedent(block(lines, i, m.group(1).length()).lines().skip(1)
                        .filter(l -> !TRIVIAL_ASSERT.matcher(l).find()).toList());
                boolean topLevelAssert = body.lines().anyMatch(l -> l.startsWith("assert"));
                return test + "\n\n" + (topLevelAssert ? "candidate = " + entryPoint + "\n" + body + "\n"
                        : "assert check(" + entryPoint + ") is None\n");
            }
        }
        return test.endsWith("\n") ? test : test + "\n";
    }

    /**
     * The function a task's tests call: its {@code entry_point} field; without one (MBPP), the first name
     * called in its first test that its reference {@code code} defines, or else the first called name that is
     * not a common builtin ({@code set}, {@code sorted}, {@code abs}, ...).
     */
    public static String entryPoint(TaskItem item) {
        if (item.get("entry_point") instanceof String ep && !ep.isBlank()) {
            return ep.strip();
        }
        List<Object> tests = listOf(item.get("test_list"));
        if (tests.isEmpty()) {
            throw new IllegalArgumentException("reward code needs an 'entry_point' field (the function the tests "
                    + "call) or a 'test_list' to find it in; the item has " + item.asMap().keySet());
        }
        List<String> called = new ArrayList<>();
        Matcher m = CALL.matcher(String.valueOf(tests.get(0)));
        while (m.find()) {
            called.add(m.group(1));
        }
        String code = item.get("code") instanceof String c ? c : "";
        for (String name : called) {
            if (Pattern.compile("\\bdef\\s+" + Pattern.quote(name) + "\\s*\\(").matcher(code).find()) {
                return name;
            }
        }
        return called.stream().filter(n -> !n.equals("assert") && !NOT_ENTRY_POINTS.contains(n)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("reward code: no function call found in the test '"
                        + tests.get(0) + "'; give the item an 'entry_point' field"));
    }

    /**
     * The tests a test-writing agent wrote for {@code entryPoint}, as {@link CoderTesterReward} runs them: of
     * its completion (fence lines dropped, dedented), the top-level statements (a line at column 0 and the blank or
     * indented lines under it) that are import lines or asserts calling {@code entryPoint(...)}; everything
     * else (prose, helper functions, a definition of the entry point itself, example calls) is left out.
     * "" when none is kept.
     */
    public static String writtenTests(String completion, String entryPoint) {
        Pattern calls = Pattern.compile("(?<![\\w.])" + Pattern.quote(entryPoint) + "\\s*\\(");
        List<String> lines = dedent(codeLines(completion)).lines().toList(); // a wholly indented reply counts too
        StringBuilder kept = new StringBuilder();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank() || indentOf(line) > 0) {
                continue;
            }
            int end = i + 1;
            // the lines under it: indented or blank ones, and any line while a bracket it opened is still open
            // (an assert whose closing bracket sits at column 0)
            while (end < lines.size() && (lines.get(end).isBlank() || indentOf(lines.get(end)) > 0
                    || openBrackets(String.join("\n", lines.subList(i, end))) > 0)) {
                end++;
            }
            String statement = String.join("\n", lines.subList(i, end)).stripTrailing();
            boolean test = statement.startsWith("assert") && (statement.length() == 6
                    || !Character.isJavaIdentifierPart(statement.charAt(6))) && calls.matcher(statement).find();
            if (test || IMPORT.matcher(line.strip()).matches()) {
                kept.append(statement).append('\n');
            }
            i = end - 1;
        }
        return kept.toString();
    }

    /**
     * How many brackets ({@code ( [ {}) {@code code} leaves open: opening minus closing ones outside string
     * literals (single, double and triple quotes, with backslash escapes) and comments. Enough to find where a
     * statement spanning several lines ends; a syntax error is left for the interpreter to report.
     */
    static int openBrackets(String code) {
        int depth = 0;
        for (int i = 0; i < code.length(); i++) {
            char c = code.charAt(i);
            if (c == '#') {
                while (i < code.length() && code.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '\'' || c == '"') {
                String quote = code.startsWith(String.valueOf(c).repeat(3), i) ? String.valueOf(c).repeat(3) : String.valueOf(c);
                int j = i + quote.length();
                while (j < code.length() && !code.startsWith(quote, j)) {
                    j += code.charAt(j) == '\\' ? 2 : 1;
                }
                i = j + quote.length() - 1;
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                depth--;
            }
        }
        return depth;
    }

    /**
     * The task's reference solution as a program: its {@code prompt} followed by its
     * {@code canonical_solution} (HumanEval's body of the prompt's function), or its {@code code} (MBPP's
     * whole program); null when it has neither.
     */
    public static String reference(TaskItem item) {
        if (item.get("canonical_solution") instanceof String body && !body.isBlank()) {
            String prompt = item.get("prompt") instanceof String p ? p : "";
            return prompt + body + (body.endsWith("\n") ? "" : "\n");
        }
        if (item.get("code") instanceof String code && !code.isBlank()) {
            return code.endsWith("\n") ? code : code + "\n";
        }
        return null;
    }

    /** A wrong solution that any test of {@code entryPoint}'s value should reject: it returns None for every input. */
    public static String stub(String entryPoint) {
        return "def " + entryPoint + "(*args, **kwargs):\n    return None\n";
    }

    /** A completion without its Markdown fence lines. */
    public static String withoutFences(String completion) {
        return String.join("\n", codeLines(completion));
    }

    /** The lines of a completion without Markdown fence lines. */
    private static List<String> codeLines(String completion) {
        return completion.replace("\r\n", "\n").lines().filter(l -> !FENCE.matcher(l).matches()).toList();
    }

    /** Line {@code start} and every following line that is blank or indented deeper than {@code indent}, dedented. */
    private static String block(List<String> lines, int start, int indent) {
        List<String> block = new ArrayList<>();
        block.add(lines.get(start));
        for (int i = start + 1; i < lines.size(); i++) {
            String line = lines.get(i);
            if (!line.isBlank() && indentOf(line) <= indent && !line.startsWith("\t")) {
                break;
            }
            block.add(line);
        }
        return dedent(block).strip();
    }

    /** The lines with their common leading blanks removed (blank lines kept empty). */
    private static String dedent(List<String> lines) {
        int common = lines.stream().filter(l -> !l.isBlank()).mapToInt(CodePrograms::indentOf).min().orElse(0);
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            out.append(line.isBlank() ? "" : line.substring(common)).append('\n');
        }
        return out.toString();
    }

    private static int indentOf(String line) {
        int n = 0;
        while (n < line.length() && (line.charAt(n) == ' ' || line.charAt(n) == '\t')) {
            n++;
        }
        return n;
    }

    /** A function's statements, stripped: its def line, blank lines, comments and docstrings left out. */
    private static List<String> body(String function) {
        List<String> body = new ArrayList<>();
        String openQuote = null;
        for (String line : function.split("\n", -1)) {
            String t = line.strip();
            if (openQuote != null) {
                if (t.contains(openQuote)) {
                    openQuote = null;
                }
                continue;
            }
            if (t.isEmpty() || t.startsWith("#") || t.startsWith("def ")) {
                continue;
            }
            if (t.startsWith("\"\"\"") || t.startsWith("'''")) {
                String quote = t.substring(0, 3);
                if (!(t.length() > 3 && t.endsWith(quote))) {
                    openQuote = quote;
                }
                continue;
            }
            body.add(t);
        }
        return body;
    }

    private static List<Object> listOf(Object value) {
        if (value == null) {
            return List.of();
        }
        if (value instanceof List<?> list) {
            return new ArrayList<>(list);
        }
        if (value instanceof Object[] array) {
            return List.of(array);
        }
        return List.of(value);
    }
}
