package comlrl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Package dependencies run one way: the trainers stand on the engine (tensor, model, generation, data,
 * rl, distributed, logging, checkpoint, report, ...), never the other way round. Every main source file
 * outside {@code comlrl.trainers} is read, comments removed, and each mention of {@code comlrl.trainers}
 * (an import or a fully-qualified name) is a failure unless its top-level package is one of the
 * exceptions below, and then only for the types the exception names.
 */
class PackageLayeringTest {
    private static final Path MAIN = Path.of("src/main/java/comlrl");

    /**
     * The top-level packages that may use the trainer layer, with what they may use and why.
     * <ul>
     *   <li>{@code cli}: the command line builds and runs the trainers (its {@code train}, {@code bench},
     *       {@code config-keys} commands); it sits above every layer.</li>
     *   <li>{@code env}: the built-in environments implement the trainers' public callback contracts
     *       (a multi-turn {@code ExternalTransition} with its {@code TransitionContext}, an
     *       {@code EvalLogger}); those three user-facing types and nothing else of the trainers.</li>
     * </ul>
     */
    static final Map<String, Pattern> EXCEPTIONS = Map.of(
            "cli", Pattern.compile("comlrl\\.trainers\\b.*"),
            "env", Pattern.compile("comlrl\\.trainers\\.(ExternalTransition|TransitionContext|EvalLogger)\\b"));

    private static final Pattern MENTION = Pattern.compile("\\bcomlrl\\.trainers(\\.[A-Za-z_][\\w.]*)?");

    @Test
    void engineSourcesDoNotUseTheTrainers() throws IOException {
        List<String> violations = new ArrayList<>();
        Set<String> scanned = new TreeSet<>();
        Set<String> exceptionsUsed = new TreeSet<>();
        for (Path file : mainSources()) {
            String top = topPackage(file);
            if (top.equals("trainers")) {
                continue;
            }
            scanned.add(top);
            String code = withoutComments(Files.readString(file));
            Matcher m = MENTION.matcher(code);
            while (m.find()) {
                Pattern allowed = EXCEPTIONS.get(top);
                if (allowed != null && allowed.matcher(m.group()).matches()) {
                    exceptionsUsed.add(top);
                } else {
                    violations.add(MAIN.relativize(file) + ":" + lineOf(code, m.start()) + " uses " + m.group());
                }
            }
        }
        // The scan must have read the engine: a wrong working directory would pass vacuously.
        assertThat(scanned).contains("tensor", "model", "generation", "logging", "distributed", "rl", "data");
        assertThat(violations).as("engine packages that use comlrl.trainers (the dependency runs trainers -> engine; "
                + "move the type down or leave the class in the trainers)").isEmpty();
        // An exception no longer needed is dropped from the list, so the list stays the truth.
        assertThat(exceptionsUsed).as("packages listed as exceptions that no longer use the trainers")
                .containsExactlyInAnyOrderElementsOf(EXCEPTIONS.keySet());
    }

    @Test
    void commentsAndTheirMentionsAreIgnoredButCodeIsNot() {
        String source = """
                package comlrl.logging;
                /** See {@link comlrl.trainers.common.Trainer}. */
                // comlrl.trainers.common.Trainer in a line comment
                import comlrl.trainers.common.Trainer;
                class A { String s = "a // b"; comlrl.trainers.EvalLogger l; }
                class B { String t = \"""
                    /* not a comment */ \""";
                    comlrl.trainers.Devices d; }
                """;
        Matcher m = MENTION.matcher(withoutComments(source));
        List<String> found = new ArrayList<>();
        while (m.find()) {
            found.add(m.group() + "@" + lineOf(withoutComments(source), m.start()));
        }
        assertThat(found).containsExactly("comlrl.trainers.common.Trainer@4", "comlrl.trainers.EvalLogger@5",
                "comlrl.trainers.Devices@8");
    }

    private static List<Path> mainSources() throws IOException {
        try (Stream<Path> files = Files.walk(MAIN)) {
            return files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
    }

    /** The first directory under {@code comlrl} ("(root)" for a file directly in it). */
    private static String topPackage(Path file) {
        Path rel = MAIN.relativize(file);
        return rel.getNameCount() > 1 ? rel.getName(0).toString() : "(root)";
    }

    /**
     * The source with block and line comments blanked (newlines kept, so line numbers hold); string and
     * character literals are skipped over so that a "//" inside one does not start a comment.
     */
    static String withoutComments(String src) {
        StringBuilder out = new StringBuilder(src.length());
        int i = 0;
        while (i < src.length()) {
            char c = src.charAt(i);
            if (c == '/' && i + 1 < src.length() && src.charAt(i + 1) == '*') {
                int end = src.indexOf("*/", i + 2);
                end = end < 0 ? src.length() : end + 2;
                src.substring(i, end).chars().filter(ch -> ch == '\n').forEach(ch -> out.append('\n'));
                i = end;
            } else if (c == '/' && i + 1 < src.length() && src.charAt(i + 1) == '/') {
                while (i < src.length() && src.charAt(i) != '\n') {
                    i++;
                }
            } else if (src.startsWith("\"\"\"", i)) { // a text block, to its closing quotes
                int end = src.indexOf("\"\"\"", i + 3);
                end = end < 0 ? src.length() : end + 3;
                out.append(src, i, end);
                i = end;
            } else if (c == '"' || c == '\'') {
                int end = i + 1;
                while (end < src.length() && src.charAt(end) != c) {
                    end += src.charAt(end) == '\\' ? 2 : 1;
                }
                end = Math.min(end + 1, src.length());
                out.append(src, i, end);
                i = end;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    private static int lineOf(String text, int offset) {
        return (int) text.substring(0, offset).chars().filter(ch -> ch == '\n').count() + 1;
    }
}
