package comlrl.tokenizer;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Rewrites a Jinja2 chat template into a source that Jinjava renders as Jinja2 does. Text outside
 * tags, comments and {@code {% raw %}} blocks are kept byte for byte; inside {@code {{ ... }}} and
 * {@code {% ... %}} (string literals left alone) these rewrites apply:
 *
 * <ol>
 *   <li>Newlines are normalised to {@code \n} and one trailing newline is dropped, as Jinja2's lexer
 *       does ({@code keep_trailing_newline=False}).</li>
 *   <li>Whitespace control is applied here, exactly as Jinja2's lexer does with
 *       {@code trim_blocks=True, lstrip_blocks=True} ({@code -} and {@code +} marks, the newline
 *       after a statement or comment, the indentation before one alone on its line), and the marks
 *       and comments are removed: Jinjava then renders with its own trimming off. (Its lstrip_blocks
 *       also strips spaces before a tag in the middle of a line: {@code , {% endif %}}.)</li>
 *   <li>Tests get parentheses with their operand, {@code not (tools is defined)}: Jinjava would
 *       apply {@code not} to {@code tools} first.</li>
 *   <li>Python slices {@code expr[a:b:c]} (Jinjava cannot parse a step, e.g. {@code messages[::-1]})
 *       become {@code __comlrl_pyslice(expr, a, b, c)}, with omitted parts as {@code none}.</li>
 *   <li>Keyword arguments whose value has an operator, {@code namespace(i=messages|length - 1)},
 *       get parentheses, {@code namespace(i=(messages|length - 1))}: Jinjava binds {@code name=}
 *       tighter than the operators and fails ("Cannot coerce ... NamedParameter to Long").</li>
 *   <li>Loops iterate {@code __comlrl_iter(xs)}: characters of a string, keys of a dict, as in
 *       Python.</li>
 *   <li>Loop filters {@code {% for x in xs if cond %}}, which Jinjava ignores, become a loop that
 *       collects the indices of the passing items and a loop over {@code __comlrl_pick(xs, kept)};
 *       a loop's {@code {% else %}} branch, which Jinjava renders wrongly, becomes an
 *       {@code {% if not items %}} after the loop.</li>
 *   <li>String literals are decoded with Python's escapes and re-encoded with the few escapes
 *       Jinjava knows (backslash-u and backslash-x escapes, {@code '\b'} would fail or differ).</li>
 *   <li>Output expressions {@code {{ e }}} become {@code {{ __comlrl_pystr((e)) }}} so values print
 *       as Python's {@code str()} does ({@code True}, {@code ['a', 'b']}, {@code {'k': 1}}).</li>
 * </ol>
 *
 * It also collects the filter names used, so that an unknown filter fails when the template is
 * compiled, as in Jinja2 (Jinjava would silently print nothing).
 */
final class TemplateSource {
    /** Function the slice rewrite calls (registered by {@link ChatTemplate}). */
    static final String SLICE_FUNCTION = "__comlrl_pyslice";
    /** Function every loop iterates through, for Python's iteration (registered by {@link ChatTemplate}). */
    static final String ITER_FUNCTION = "__comlrl_iter";
    /** Function the loop-filter rewrite calls (registered by {@link ChatTemplate}). */
    static final String PICK_FUNCTION = "__comlrl_pick";
    /** Function the output rewrite calls (registered by {@link ChatTemplate}). */
    static final String STR_FUNCTION = "__comlrl_pystr";

    private static final Set<String> KEYWORDS = Set.of("and", "or", "not", "in", "is", "if", "else", "for",
            "recursive", "with", "without", "context", "import", "as", "from");
    private static final Set<String> LOOSE_BINDING_OPERATORS = Set.of("|", "+", "-", "*", "/", "//", "%", "**",
            "~", "==", "!=", "<", ">", "<=", ">=");
    private static final Set<String> LOOSE_BINDING_WORDS = Set.of("and", "or", "not", "in", "is", "if", "else");
    private static final Pattern END_RAW = Pattern.compile("\\{%([-+]?)\\s*endraw\\s*([-+]?)%}");

    /** The rewritten source and the filter names it uses. */
    record Rewritten(String source, Set<String> filters) {}

    /** A tag of the template: kind '{' (output), '%' (statement) or '#' (comment), marks "", "-" or "+". */
    private record Tag(char kind, String openMark, String body, String closeMark, int line) {}

    /** A raw block: its begin and end tags' marks and its verbatim content. */
    private record Raw(Tag begin, String content, Tag end) {}

    private TemplateSource() {}

    static Rewritten rewrite(String template) {
        String src = template.replace("\r\n", "\n").replace('\r', '\n');
        if (src.endsWith("\n")) {
            src = src.substring(0, src.length() - 1);
        }
        List<String> texts = new ArrayList<>();
        List<Object> tags = new ArrayList<>(); // Tag or Raw; texts.size() == tags.size() + 1
        split(src, texts, tags);

        Map<Integer, Integer> loopElse = loopElseTags(tags);
        Set<String> filters = new LinkedHashSet<>();
        StringBuilder out = new StringBuilder(src.length() + 64);
        boolean lineStarting = true;
        for (int t = 0; t <= tags.size(); t++) {
            String text = texts.get(t);
            if (t > 0) {
                Tag previous = lastTag(tags.get(t - 1));
                String before = text;
                text = afterTag(previous, text, true);
                lineStarting = lineStartingAfter(previous, before, text);
            }
            if (t == tags.size()) {
                out.append(text);
                break;
            }
            Object item = tags.get(t);
            Tag tag = item instanceof Raw raw ? raw.begin() : (Tag) item;
            out.append(beforeTag(tag, text, lineStarting));
            if (item instanceof Raw raw) {
                // raw begin: '-' strips what follows, no trim_blocks; raw end: like any block tag
                String content = afterTag(raw.begin(), raw.content(), false);
                boolean contentLineStarting = lineStartingAfter(raw.begin(), raw.content(), content);
                content = beforeTag(raw.end(), content, contentLineStarting);
                out.append("{% raw %}").append(content).append("{% endraw %}");
            } else if (tag.kind() == '%') {
                String name = firstWord(tag.body());
                String rewritten = name.equals("macro") ? tag.body() : rewriteExpression(tag.body(), tag.line());
                collectFilters(rewritten, name.equals("filter"), filters);
                Integer loop = loopElse.get(t);
                if (name.equals("for")) {
                    out.append(loopHeader(rewritten, t, loop != null, tag.line()));
                } else if (loop != null && name.equals("else")) {
                    out.append("{% endfor %}{% if not __comlrl_loop").append(loop).append(" %}");
                } else if (loop != null && name.equals("endfor")) {
                    out.append("{% endif %}");
                } else {
                    out.append("{%").append(rewritten).append("%}");
                }
            } else if (tag.kind() == '{') {
                String rewritten = rewriteExpression(tag.body(), tag.line());
                collectFilters(rewritten, false, filters);
                out.append("{{").append(wrapOutput(rewritten)).append("}}");
            }
            // comments ('#') render as nothing
        }
        return new Rewritten(out.toString(), filters);
    }

    /** Splits the source into texts and tags (comments and raw blocks included), texts first and last. */
    private static void split(String src, List<String> texts, List<Object> tags) {
        int i = 0;
        while (true) {
            int open = nextOpen(src, i);
            if (open < 0) {
                texts.add(src.substring(i));
                return;
            }
            texts.add(src.substring(i, open));
            char kind = src.charAt(open + 1);
            int bodyStart = open + 2;
            String openMark = "";
            if (bodyStart < src.length() && (src.charAt(bodyStart) == '-' || src.charAt(bodyStart) == '+')) {
                openMark = String.valueOf(src.charAt(bodyStart));
                bodyStart++;
            }
            int close = kind == '#' ? src.indexOf("#}", bodyStart) : findClose(src, bodyStart, kind == '{' ? '}' : '%', open);
            if (close < 0) {
                throw new IllegalArgumentException("unclosed comment '{#' at line " + line(src, open));
            }
            int bodyEnd = close;
            String closeMark = "";
            if (bodyEnd > bodyStart && (src.charAt(bodyEnd - 1) == '-' || src.charAt(bodyEnd - 1) == '+')) {
                closeMark = String.valueOf(src.charAt(bodyEnd - 1));
                bodyEnd--;
            }
            Tag tag = new Tag(kind, openMark, src.substring(bodyStart, bodyEnd), closeMark, line(src, open));
            i = close + 2;
            if (kind == '%' && firstWord(tag.body()).equals("raw")) {
                Matcher end = END_RAW.matcher(src);
                if (!end.find(i)) {
                    throw new IllegalArgumentException("{% raw %} without {% endraw %} at line " + tag.line());
                }
                Tag endTag = new Tag('%', end.group(1), "endraw", end.group(2), line(src, end.start()));
                tags.add(new Raw(tag, src.substring(i, end.start()), endTag));
                i = end.end();
            } else {
                tags.add(tag);
            }
        }
    }

    private static Tag lastTag(Object item) {
        return item instanceof Raw raw ? raw.end() : (Tag) item;
    }

    /**
     * The text before a tag after the tag's left whitespace control: {@code {%-} strips all
     * whitespace; with lstrip_blocks, a statement or comment tag alone on its line (after only
     * spaces and tabs) takes that indentation away, unless it is written {@code {%+}.
     */
    private static String beforeTag(Tag tag, String text, boolean lineStarting) {
        if (tag.openMark().equals("-")) {
            return PyValues.strip(text, null, false, true);
        }
        if (tag.openMark().equals("+") || tag.kind() == '{') {
            return text;
        }
        int lineStart = text.lastIndexOf('\n') + 1;
        if ((lineStart > 0 || lineStarting) && lineStart < text.length()
                && text.substring(lineStart).codePoints().allMatch(PyValues::isPySpace)) {
            return text.substring(0, lineStart);
        }
        return text;
    }

    /**
     * The text after a tag after the tag's right whitespace control: {@code -%}} strips all
     * whitespace; with trim_blocks the first newline after a statement or comment tag goes, unless
     * it is written {@code +%}}.
     */
    private static String afterTag(Tag tag, String text, boolean trimBlocks) {
        if (tag.closeMark().equals("-")) {
            return PyValues.strip(text, null, true, false);
        }
        if (trimBlocks && tag.kind() != '{' && !tag.closeMark().equals("+") && text.startsWith("\n")) {
            return text.substring(1);
        }
        return text;
    }

    /** Jinja2's line_starting: whether the tag's closing match (with what it consumed) ended a line. */
    private static boolean lineStartingAfter(Tag tag, String before, String after) {
        String consumed = before.substring(0, before.length() - after.length());
        return consumed.endsWith("\n");
    }

    private static int nextOpen(String src, int from) {
        for (int i = src.indexOf('{', from); i >= 0 && i + 1 < src.length(); i = src.indexOf('{', i + 1)) {
            char next = src.charAt(i + 1);
            if (next == '{' || next == '%' || next == '#') {
                return i;
            }
        }
        return -1;
    }

    /** Index of the closing {@code }}} or {@code %}}: outside string literals and nested brackets. */
    private static int findClose(String src, int from, char closer, int open) {
        int depth = 0;
        for (int i = from; i < src.length(); i++) {
            char c = src.charAt(i);
            if (c == '\'' || c == '"') {
                i = endOfString(src, i, open);
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (depth > 0 && (c == ')' || c == ']' || c == '}')) {
                depth--;
            } else if (depth == 0 && c == closer && i + 1 < src.length() && src.charAt(i + 1) == '}') {
                return i;
            }
        }
        throw new IllegalArgumentException("unclosed '" + src.substring(open, open + 2) + "' at line " + line(src, open));
    }

    private static int endOfString(String src, int quoteAt, int open) {
        char quote = src.charAt(quoteAt);
        for (int j = quoteAt + 1; j < src.length(); j++) {
            char c = src.charAt(j);
            if (c == '\\') {
                j++;
            } else if (c == quote) {
                return j;
            }
        }
        throw new IllegalArgumentException("unterminated string literal at line " + line(src, open));
    }

    private static String firstWord(String body) {
        String t = body.strip();
        int end = 0;
        while (end < t.length() && (Character.isLetterOrDigit(t.charAt(end)) || t.charAt(end) == '_')) {
            end++;
        }
        return t.substring(0, end);
    }

    private static int line(String src, int at) {
        int line = 1;
        for (int i = 0; i < at && i < src.length(); i++) {
            if (src.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }

    /** {@code e} becomes {@code __comlrl_pystr(e)} (no extra parentheses: Jinjava reads "({a, b})" as a tuple). */
    private static String wrapOutput(String body) {
        if (body.isBlank()) {
            return body;
        }
        int begin = 0;
        while (begin < body.length() && Character.isWhitespace(body.charAt(begin))) {
            begin++;
        }
        int end = body.length();
        while (end > begin && Character.isWhitespace(body.charAt(end - 1))) {
            end--;
        }
        return body.substring(0, begin) + STR_FUNCTION + "(" + body.substring(begin, end) + ")" + body.substring(end);
    }

    /** Block tags that have an end tag (and so nest); {@code set} only in its block form. */
    private static final Set<String> BLOCK_TAGS = Set.of("for", "if", "macro", "call", "filter", "with", "block",
            "generation", "autoescape", "set");

    /**
     * Finds the loops that have an {@code else} branch: maps the tag index of such a {@code for},
     * of its {@code else} and of its {@code endfor} to the index of the {@code for}.
     */
    private static Map<Integer, Integer> loopElseTags(List<Object> tags) {
        Map<Integer, Integer> roles = new java.util.HashMap<>();
        java.util.ArrayDeque<int[]> open = new java.util.ArrayDeque<>(); // {tag index, has else, name id}
        List<String> names = new ArrayList<>();
        for (int t = 0; t < tags.size(); t++) {
            if (!(tags.get(t) instanceof Tag tag) || tag.kind() != '%') {
                continue;
            }
            String name = firstWord(tag.body());
            if (BLOCK_TAGS.contains(name) && !(name.equals("set") && hasTopLevelAssignment(tag.body()))) {
                names.add(name);
                open.push(new int[] {t, 0, names.size() - 1});
            } else if (name.equals("else") && !open.isEmpty() && names.get(open.peek()[2]).equals("for")) {
                roles.put(t, open.peek()[0]);
                open.peek()[1] = 1;
            } else if (name.startsWith("end") && !open.isEmpty()) {
                int[] block = open.pop();
                if (name.equals("endfor") && block[1] == 1) {
                    roles.put(block[0], block[0]);
                    roles.put(t, block[0]);
                }
            }
        }
        return roles;
    }

    private static boolean hasTopLevelAssignment(String body) {
        int depth = 0;
        for (Tok t : lex(body)) {
            if (t.isOpener()) {
                depth++;
            } else if (t.isCloser()) {
                depth--;
            } else if (depth == 0 && t.is("=")) {
                return true;
            }
        }
        return false;
    }

    /**
     * A {@code for} tag as Jinjava should see it. The iterable goes through {@code __comlrl_iter},
     * which iterates as Python does (a string gives its characters, a dict its keys; Jinjava gives
     * a string once, and a dict literal's values). Jinja2's loop filter {@code for x in xs if cond}
     * (which Jinjava ignores silently) becomes a first loop that records the indices of the items
     * that pass and the real loop over those items, so that {@code loop.index}, {@code loop.last}
     * and {@code else} count only them, as in Jinja2. A loop with an {@code else} branch (which
     * Jinjava renders wrongly) iterates a variable {@code __comlrl_loopN} that the {@code else} tests
     * for emptiness: {@code {% endfor %}{% if not __comlrl_loopN %}...{% endif %}}.
     */
    private static String loopHeader(String body, int id, boolean hasElse, int line) {
        List<Tok> toks = lex(body);
        int in = -1;
        int condition = -1;
        int depth = 0;
        for (int k = 0; k < toks.size(); k++) {
            Tok t = toks.get(k);
            if (t.isOpener()) {
                depth++;
            } else if (t.isCloser()) {
                depth--;
            } else if (depth == 0 && t.kind() == Kind.NAME) {
                if (in < 0 && t.text().equals("in")) {
                    in = k;
                } else if (in >= 0 && condition < 0 && t.text().equals("if")) {
                    condition = k;
                } else if (t.text().equals("recursive") && (condition >= 0 || hasElse)) {
                    throw new IllegalArgumentException("a recursive loop with a filter or else is not supported"
                            + " (line " + line + ")");
                }
            }
        }
        int last = previous(toks, toks.size());
        if (in < 0 || (last >= 0 && toks.get(last).kind() == Kind.NAME && toks.get(last).text().equals("recursive"))) {
            return "{%" + body + "%}";
        }
        int forWord = next(toks, -1, toks.size());
        String target = body.substring(toks.get(forWord).end(), toks.get(in).start()).strip();
        String iterable = ITER_FUNCTION + "(" + body.substring(toks.get(in).end(),
                condition < 0 ? body.length() : toks.get(condition).start()).strip() + ")";
        StringBuilder out = new StringBuilder();
        if (condition >= 0) {
            String test = body.substring(toks.get(condition).end()).strip();
            String keep = "__comlrl_keep" + id;
            out.append("{% set ").append(keep).append(" = [] %}{% for ").append(target).append(" in ").append(iterable)
                    .append(" %}{% if ").append(test).append(" %}{% do ").append(keep)
                    .append(".append(loop.index0) %}{% endif %}{% endfor %}");
            iterable = PICK_FUNCTION + "(" + iterable + ", " + keep + ")";
        }
        if (hasElse) {
            String items = "__comlrl_loop" + id;
            out.append("{% set ").append(items).append(" = ").append(iterable).append(" %}");
            iterable = items;
        }
        return out.append("{% for ").append(target).append(" in ").append(iterable).append(" %}").toString();
    }

    // ---------------------------------------------------------------- expressions

    enum Kind { SPACE, NAME, NUMBER, STRING, OP }

    record Tok(Kind kind, int start, int end, String text) {
        boolean is(String op) {
            return kind == Kind.OP && text.equals(op);
        }

        boolean isOpener() {
            return kind == Kind.OP && (text.equals("(") || text.equals("[") || text.equals("{"));
        }

        boolean isCloser() {
            return kind == Kind.OP && (text.equals(")") || text.equals("]") || text.equals("}"));
        }
    }

    static List<Tok> lex(String s) {
        List<Tok> toks = new ArrayList<>();
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            int j = i + 1;
            Kind kind;
            if (Character.isWhitespace(c)) {
                while (j < s.length() && Character.isWhitespace(s.charAt(j))) {
                    j++;
                }
                kind = Kind.SPACE;
            } else if (c == '\'' || c == '"') {
                j = endOfString(s, i, i) + 1;
                kind = Kind.STRING;
            } else if (Character.isLetter(c) || c == '_') {
                while (j < s.length() && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) {
                    j++;
                }
                kind = Kind.NAME;
            } else if (Character.isDigit(c)) {
                while (j < s.length() && (Character.isDigit(s.charAt(j)) || s.charAt(j) == '_'
                        || (s.charAt(j) == '.' && j + 1 < s.length() && Character.isDigit(s.charAt(j + 1))))) {
                    j++;
                }
                if (j < s.length() && (s.charAt(j) == 'e' || s.charAt(j) == 'E')) {
                    int k = j + 1;
                    if (k < s.length() && (s.charAt(k) == '+' || s.charAt(k) == '-')) {
                        k++;
                    }
                    if (k < s.length() && Character.isDigit(s.charAt(k))) {
                        j = k;
                        while (j < s.length() && Character.isDigit(s.charAt(j))) {
                            j++;
                        }
                    }
                }
                kind = Kind.NUMBER;
            } else {
                String two = i + 2 <= s.length() ? s.substring(i, i + 2) : "";
                if (Set.of("==", "!=", "<=", ">=", "//", "**").contains(two)) {
                    j = i + 2;
                }
                kind = Kind.OP;
            }
            toks.add(new Tok(kind, i, j, s.substring(i, j)));
            i = j;
        }
        return toks;
    }

    static String rewriteExpression(String body, int line) {
        String current = body;
        for (int guard = 0; guard < 10_000; guard++) {
            String next = rewriteFirstSlice(current, line);
            if (next == null) {
                return jinjavaStringLiterals(wrapKeywordArguments(wrapTests(current, line)));
            }
            current = next;
        }
        throw new IllegalStateException("slice rewrite did not terminate at line " + line);
    }

    /**
     * String literals with Python's escapes (backslash-x, backslash-u, {@code \b}, octal, unknown
     * ones kept as written, ...) rewritten to the few that Jinjava reads the same way: each literal
     * is decoded as Python does and written back with only {@code \\ \' \n \r \t} escaped.
     */
    private static String jinjavaStringLiterals(String body) {
        StringBuilder out = new StringBuilder(body.length());
        for (Tok t : lex(body)) {
            if (t.kind() != Kind.STRING || t.text().indexOf('\\') < 0) {
                out.append(t.text());
                continue;
            }
            String value = pythonStringValue(t.text());
            out.append('\'');
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                switch (c) {
                    case '\\' -> out.append("\\\\");
                    case '\'' -> out.append("\\'");
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    default -> out.append(c);
                }
            }
            out.append('\'');
        }
        return out.toString();
    }

    /** The value of a Python string literal (quotes included in {@code literal}). */
    static String pythonStringValue(String literal) {
        String s = literal.substring(1, literal.length() - 1);
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 >= s.length()) {
                out.append(c);
                continue;
            }
            char e = s.charAt(++i);
            switch (e) {
                case '\n' -> { } // line continuation
                case '\\', '\'', '"' -> out.append(e);
                case 'a' -> out.append((char) 7);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'v' -> out.append((char) 11);
                case 'x', 'u', 'U' -> {
                    int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    if (i + digits < s.length() && s.substring(i + 1, i + 1 + digits).chars().allMatch(
                            ch -> Character.digit(ch, 16) >= 0)) {
                        out.appendCodePoint(Integer.parseInt(s.substring(i + 1, i + 1 + digits), 16));
                        i += digits;
                    } else {
                        throw new IllegalArgumentException("truncated \\" + e + " escape in string literal " + literal);
                    }
                }
                default -> {
                    if (e >= '0' && e <= '7') {
                        int end = i;
                        while (end < s.length() && end < i + 3 && s.charAt(end) >= '0' && s.charAt(end) <= '7') {
                            end++;
                        }
                        out.appendCodePoint(Integer.parseInt(s.substring(i, end), 8));
                        i = end - 1;
                    } else {
                        out.append('\\').append(e); // Python keeps unknown escapes as written
                    }
                }
            }
        }
        return out.toString();
    }

    /**
     * Puts every test in parentheses with its operand, as Jinja2 binds it: {@code not tools is
     * defined} is {@code not (tools is defined)}, {@code a ~ b|f is string} is
     * {@code a ~ (b|f is string)}. Jinjava applies {@code not} first otherwise.
     */
    private static String wrapTests(String body, int line) {
        String current = body;
        for (int n = 0; ; n++) {
            List<Tok> toks = lex(current);
            int k = -1;
            int seen = 0;
            for (int m = 0; m < toks.size(); m++) {
                if (toks.get(m).kind() == Kind.NAME && toks.get(m).text().equals("is") && seen++ == n) {
                    k = m;
                    break;
                }
            }
            if (k < 0) {
                return current;
            }
            int operandLast = previous(toks, k);
            int name = next(toks, k, toks.size());
            if (name >= 0 && toks.get(name).kind() == Kind.NAME && toks.get(name).text().equals("not")) {
                name = next(toks, name, toks.size());
            }
            if (operandLast < 0 || name < 0 || toks.get(name).kind() != Kind.NAME) {
                continue; // not a test Jinja2 would parse; leave it to Jinjava's error
            }
            int end = name;
            for (int dot = next(toks, end, toks.size()); dot >= 0 && toks.get(dot).is(".");
                    dot = next(toks, end, toks.size())) {
                int part = next(toks, dot, toks.size());
                if (part < 0 || toks.get(part).kind() != Kind.NAME) {
                    break;
                }
                end = part;
            }
            int after = next(toks, end, toks.size());
            if (after >= 0 && toks.get(after).is("(")) {
                end = matching(toks, after, line);
            } else if (after >= 0 && startsArgument(toks.get(after))) {
                end = primaryEnd(toks, after, line);
            }
            int start = operandStart(toks, operandLast, line);
            String operand = current.substring(toks.get(start).start(), toks.get(operandLast).end());
            if (hasTopLevelPipe(toks, start, operandLast)) {
                operand = "(" + operand + ")"; // Jinjava cannot parse "x|f is test"
            }
            current = current.substring(0, toks.get(start).start()) + "(" + operand
                    + current.substring(toks.get(operandLast).end(), toks.get(end).end()) + ")"
                    + current.substring(toks.get(end).end());
        }
    }

    private static boolean hasTopLevelPipe(List<Tok> toks, int from, int to) {
        int depth = 0;
        for (int m = from; m <= to; m++) {
            Tok t = toks.get(m);
            if (t.isOpener()) {
                depth++;
            } else if (t.isCloser()) {
                depth--;
            } else if (depth == 0 && t.is("|")) {
                return true;
            }
        }
        return false;
    }

    /** Whether a token after {@code is NAME} starts the test's single argument ({@code is divisibleby 3}). */
    private static boolean startsArgument(Tok t) {
        return (t.kind() == Kind.NAME && !KEYWORDS.contains(t.text())) || t.kind() == Kind.STRING
                || t.kind() == Kind.NUMBER || t.isOpener();
    }

    /** The last token of the primary (with attribute, subscript and call trailers) starting at {@code first}. */
    private static int primaryEnd(List<Tok> toks, int first, int line) {
        int end = toks.get(first).isOpener() ? matching(toks, first, line) : first;
        while (true) {
            int after = next(toks, end, toks.size());
            if (after < 0) {
                return end;
            }
            if (toks.get(after).is(".")) {
                int part = next(toks, after, toks.size());
                if (part < 0 || toks.get(part).kind() != Kind.NAME) {
                    return end;
                }
                end = part;
            } else if (toks.get(after).is("[") || toks.get(after).is("(")) {
                end = matching(toks, after, line);
            } else {
                return end;
            }
        }
    }

    /** Like {@link #primaryStart}, but also over filters applied to the primary ({@code x|f(1)}). */
    private static int operandStart(List<Tok> toks, int last, int line) {
        int i = last;
        while (true) {
            int start = primaryStart(toks, i, line);
            int pipe = previous(toks, start);
            if (pipe >= 0 && toks.get(pipe).is("|")) {
                int base = previous(toks, pipe);
                if (base >= 0) {
                    i = base;
                    continue;
                }
            }
            return start;
        }
    }

    /** Rewrites the first Python slice subscript, or returns null when there is none. */
    private static String rewriteFirstSlice(String body, int line) {
        List<Tok> toks = lex(body);
        for (int k = 0; k < toks.size(); k++) {
            if (!toks.get(k).is("[")) {
                continue;
            }
            int close = matching(toks, k, line);
            List<Integer> colons = new ArrayList<>();
            int depth = 0;
            for (int m = k + 1; m < close; m++) {
                Tok t = toks.get(m);
                if (t.isOpener()) {
                    depth++;
                } else if (t.isCloser()) {
                    depth--;
                } else if (depth == 0 && t.is(":")) {
                    colons.add(m);
                }
            }
            int before = previous(toks, k);
            if (colons.isEmpty() || before < 0 || !endsPrimary(toks.get(before))) {
                continue;
            }
            if (colons.size() > 2) {
                throw new IllegalArgumentException("invalid slice with " + colons.size() + " colons at line " + line);
            }
            int start = primaryStart(toks, before, line);
            String primary = body.substring(toks.get(start).start(), toks.get(before).end());
            String lower = part(body, toks, k, colons.get(0));
            String upper = part(body, toks, colons.get(0), colons.size() > 1 ? colons.get(1) : close);
            String step = colons.size() > 1 ? part(body, toks, colons.get(1), close) : "none";
            String call = SLICE_FUNCTION + "(" + primary + ", " + lower + ", " + upper + ", " + step + ")";
            return body.substring(0, toks.get(start).start()) + call + body.substring(toks.get(close).end());
        }
        return null;
    }

    private static String part(String body, List<Tok> toks, int fromExclusive, int toExclusive) {
        String text = body.substring(toks.get(fromExclusive).end(), toks.get(toExclusive).start()).strip();
        return text.isEmpty() ? "none" : text;
    }

    /** True when a token can end a primary expression that a subscript or call applies to. */
    private static boolean endsPrimary(Tok t) {
        return (t.kind() == Kind.NAME && !KEYWORDS.contains(t.text())) || t.kind() == Kind.STRING
                || t.is(")") || t.is("]") || t.is("}");
    }

    /** Walks back from the last token of a primary over atoms, {@code .name}, calls and subscripts. */
    private static int primaryStart(List<Tok> toks, int last, int line) {
        int i = last;
        while (true) {
            Tok t = toks.get(i);
            if (t.isCloser()) {
                int open = matchingOpen(toks, i, line);
                int prev = previous(toks, open);
                if (!t.is("}") && prev >= 0 && endsPrimary(toks.get(prev))) {
                    i = prev;
                    continue;
                }
                return open;
            }
            int prev = previous(toks, i);
            if (prev >= 0 && toks.get(prev).is(".")) {
                int base = previous(toks, prev);
                if (base >= 0) {
                    i = base;
                    continue;
                }
            }
            return i;
        }
    }

    private static int previous(List<Tok> toks, int index) {
        for (int i = index - 1; i >= 0; i--) {
            if (toks.get(i).kind() != Kind.SPACE) {
                return i;
            }
        }
        return -1;
    }

    private static int next(List<Tok> toks, int index, int limit) {
        for (int i = index + 1; i < limit; i++) {
            if (toks.get(i).kind() != Kind.SPACE) {
                return i;
            }
        }
        return -1;
    }

    private static int matching(List<Tok> toks, int open, int line) {
        int depth = 0;
        for (int i = open; i < toks.size(); i++) {
            if (toks.get(i).isOpener()) {
                depth++;
            } else if (toks.get(i).isCloser() && --depth == 0) {
                return i;
            }
        }
        throw new IllegalArgumentException("unbalanced '" + toks.get(open).text() + "' at line " + line);
    }

    private static int matchingOpen(List<Tok> toks, int close, int line) {
        int depth = 0;
        for (int i = close; i >= 0; i--) {
            if (toks.get(i).isCloser()) {
                depth++;
            } else if (toks.get(i).isOpener() && --depth == 0) {
                return i;
            }
        }
        throw new IllegalArgumentException("unbalanced '" + toks.get(close).text() + "' at line " + line);
    }

    /** {@code f(name=a|b - 1)} becomes {@code f(name=(a|b - 1))} for every call in the body. */
    private static String wrapKeywordArguments(String body) {
        List<Tok> toks = lex(body);
        Map<Integer, String> inserts = new TreeMap<>((a, b) -> Integer.compare(b, a));
        for (int k = 0; k < toks.size(); k++) {
            if (!toks.get(k).is("(")) {
                continue;
            }
            int before = previous(toks, k);
            if (before < 0 || !endsPrimary(toks.get(before))) {
                continue;
            }
            int close = matching(toks, k, 0);
            int argStart = k + 1;
            int depth = 0;
            for (int m = k + 1; m <= close; m++) {
                Tok t = toks.get(m);
                if (m < close && t.isOpener()) {
                    depth++;
                } else if (m < close && t.isCloser()) {
                    depth--;
                } else if (m == close || (depth == 0 && t.is(","))) {
                    wrapIfKeyword(toks, argStart, m, inserts);
                    argStart = m + 1;
                }
            }
        }
        StringBuilder out = new StringBuilder(body);
        for (Map.Entry<Integer, String> e : inserts.entrySet()) {
            out.insert(e.getKey().intValue(), e.getValue());
        }
        return out.toString();
    }

    private static void wrapIfKeyword(List<Tok> toks, int from, int to, Map<Integer, String> inserts) {
        int name = next(toks, from - 1, to);
        if (name < 0 || toks.get(name).kind() != Kind.NAME) {
            return;
        }
        int equals = next(toks, name, to);
        if (equals < 0 || !toks.get(equals).is("=")) {
            return;
        }
        int valueFirst = next(toks, equals, to);
        if (valueFirst < 0) {
            return;
        }
        int valueLast = previous(toks, to);
        boolean loose = false;
        int depth = 0;
        for (int m = valueFirst; m <= valueLast; m++) {
            Tok t = toks.get(m);
            if (t.isOpener()) {
                depth++;
            } else if (t.isCloser()) {
                depth--;
            } else if (depth == 0 && ((t.kind() == Kind.OP && LOOSE_BINDING_OPERATORS.contains(t.text()))
                    || (t.kind() == Kind.NAME && LOOSE_BINDING_WORDS.contains(t.text())))) {
                loose = true;
            }
        }
        if (loose) {
            inserts.merge(toks.get(valueFirst).start(), "(", (a, b) -> a + b);
            inserts.merge(toks.get(valueLast).end(), ")", (a, b) -> a + b);
        }
    }

    private static void collectFilters(String body, boolean filterTag, Set<String> filters) {
        List<Tok> toks = lex(body);
        for (int k = 0; k < toks.size(); k++) {
            boolean filterPosition = toks.get(k).is("|")
                    || (filterTag && toks.get(k).kind() == Kind.NAME && toks.get(k).text().equals("filter")
                    && previous(toks, k) < 0);
            if (filterPosition) {
                int name = next(toks, k, toks.size());
                if (name >= 0 && toks.get(name).kind() == Kind.NAME) {
                    filters.add(toks.get(name).text());
                }
            }
        }
    }
}
