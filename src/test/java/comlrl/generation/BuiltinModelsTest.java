package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.model.ModelConfig;
import comlrl.tensor.DType;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A built-in written by an earlier version (-1 for a missing special id) gets a config transformers
 * accepts; the cache keeps no leftovers of failed or killed writes.
 */
class BuiltinModelsTest {
    private static java.util.List<String> names(Path dir) throws Exception {
        try (java.util.stream.Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aFailedWriteLeavesNothingAndAKilledOnesLeftoversAreRemoved(@TempDir Path home) throws Exception {
        Path builtin = Files.createDirectories(home.resolve("builtin"));
        long dead = comlrl.model.io.TestDisks.deadPid();
        // what writers killed (kill -9) while writing built-ins left: their directories, and a model save's staging
        Files.writeString(Files.createDirectories(builtin.resolve("tiny-qwen2-seed0.tmp-" + dead)).resolve("tokenizer.json"), "{");
        Files.createDirectories(builtin.resolve(".tiny-llama-seed0.tmp-" + dead + ".saving-" + dead + "-r2"));
        try (comlrl.model.io.TestDisks.Restore full = comlrl.model.io.TestDisks.fullAfter(1000)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> BuiltinModels.ensure("builtin:tiny", home))
                    .hasMessageContaining("No space left on device");
        }
        assertThat(names(builtin)).as("no half-written model, no leftovers").isEmpty();
        Path dir = BuiltinModels.ensure("builtin:tiny", home);
        assertThat(names(builtin)).containsExactly("tiny-qwen2-seed0");
        assertThat(dir.resolve("model.safetensors")).isRegularFile();
    }

    @Test
    void anOldBuiltinsConfigIsRewrittenWithNullIdsAndTheSameValues(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("tiny");
        BuiltinModels.write("qwen2", "tiny", 0, DType.F32, dir);
        Path config = dir.resolve("config.json");
        String fresh = Files.readString(config);
        assertThat(fresh).contains("\"bos_token_id\" : null");
        Files.writeString(config, fresh.replace("\"bos_token_id\" : null", "\"bos_token_id\" : -1"));
        ModelConfig before = ModelConfig.load(dir);
        BuiltinModels.refreshConfig(dir);
        assertThat(Files.readString(config)).contains("\"bos_token_id\" : null").doesNotContain(": -1");
        assertThat(ModelConfig.load(dir).toJson()).isEqualTo(before.toJson());
        BuiltinModels.refreshConfig(dir); // nothing to do the second time
        assertThat(Files.readString(config)).isEqualTo(fresh);
    }
}
