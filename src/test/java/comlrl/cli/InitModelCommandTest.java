package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InitModelCommandTest {
    /**
     * A model whose vocabulary the tokenizer covers is reported plainly; one with ids beyond the
     * tokenizer (the Qwen2.5 presets' 151,936-id embedding beside the tiny tokenizer) says which ids
     * decode to nothing, since a random model samples them nearly always.
     */
    @Test
    void theReportNamesIdsTheTokenizerLacks(@TempDir Path dir) {
        CliTest.Result r = CliTest.run("init-model", "--preset", "tiny", "--out", dir.resolve("m").toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("wrote tiny qwen2 model (float32, vocab 515) to").doesNotContain("note");
        String big = InitModelCommand.written("qwen2.5-0.5b qwen2 model (bfloat16", 151936, 515, dir);
        assertThat(big).startsWith("wrote qwen2.5-0.5b qwen2 model (bfloat16, vocab 151936, tokenizer 515) to " + dir)
                .contains("note: ids 515 to 151935 are not in the tokenizer");
    }
}
