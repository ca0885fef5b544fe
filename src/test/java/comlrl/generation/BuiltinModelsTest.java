package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.model.ModelConfig;
import comlrl.tensor.DType;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A built-in written by an earlier version (-1 for a missing special id) gets a config transformers accepts. */
class BuiltinModelsTest {
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
