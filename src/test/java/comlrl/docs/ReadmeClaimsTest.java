package comlrl.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import comlrl.utils.RewardProcessors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** What the README promises about the build and the behaviour holds. */
class ReadmeClaimsTest {
    private static String readme() throws IOException {
        return Files.readString(Path.of("README.md"));
    }

    @Test
    void normalizeByLengthIsDocumentedWithTheFormulaTheCodeComputes() throws IOException {
        assertThat(readme()).contains("`r' = r · min(1, L / max_len)` (default `max_len = 1000`)")
                .contains("in Unicode code");
        // L = 250 code points, max_len 1000: r' = 2 · 0.25; beyond max_len the reward is unchanged
        assertThat(RewardProcessors.normalizeByLength().applyWithLength(2.0, 250)).isCloseTo(0.5, within(1e-12));
        assertThat(RewardProcessors.normalizeByLength(100).applyWithLength(2.0, 250)).isCloseTo(2.0, within(1e-12));
    }

    @Test
    void everyTagTheReadmeListsIsExcludedByDefaultAndUsed() throws IOException {
        String pom = Files.readString(Path.of("pom.xml"));
        Matcher m = Pattern.compile("<test.excludedGroups>([^<]*)</test.excludedGroups>").matcher(pom);
        assertThat(m.find()).isTrue();
        List<String> excluded = List.of(m.group(1).split(","));
        assertThat(excluded).containsExactlyInAnyOrder("slow", "gpu", "python", "multiprocess");
        String text = readme();
        List<String> sources;
        try (Stream<Path> files = Files.walk(Path.of("src/test/java"))) {
            sources = files.filter(p -> p.toString().endsWith(".java")).map(p -> {
                try {
                    return Files.readString(p);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toList();
        }
        for (String tag : excluded) {
            assertThat(text).as("README documents the %s tag", tag).contains("| `" + tag + "` |");
            assertThat(sources).as("a test carries @Tag(\"%s\")", tag).anyMatch(s -> s.contains("@Tag(\"" + tag + "\")"));
        }
    }
}
