package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.model.LoraAdapter;
import comlrl.model.LoraConfig;
import comlrl.tensor.Device;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A LoRA agent keeps how it saves through {@code withTokenizer}, and wrappers close only what they own. */
class CausalLmViewsTest {
    @Test
    void aLoraAgentWithAnotherTokenizerStillSavesAsALoraAgentAndClosesNothingShared(@TempDir Path tmp) {
        try (CausalLm base = CausalLm.load("builtin:tiny", null, Device.CPU);
                LoraAdapter adapter = LoraAdapter.init(base.model().config(),
                        new LoraConfig(2, 4, 0, List.of("q_proj"), false), base.model().dtype(), Device.CPU, 1)) {
            CausalLm merged = base.withAdapter(adapter, true);
            CausalLm peft = base.withAdapter(adapter, false);
            CausalLm mergedOther = merged.withTokenizer(base.tokenizer());
            CausalLm peftOther = peft.withTokenizer(base.tokenizer());
            mergedOther.save(tmp.resolve("merged"));
            peftOther.save(tmp.resolve("peft"));
            assertThat(tmp.resolve("merged/model.safetensors")).isRegularFile();
            assertThat(tmp.resolve("merged/" + LoraAdapter.CONFIG_FILE)).doesNotExist();
            assertThat(tmp.resolve("peft/" + LoraAdapter.CONFIG_FILE)).isRegularFile();
            mergedOther.close();
            peftOther.close();
            merged.close();
            peft.close();
            // the base model and its tokenizer are still open
            assertThat(base.generate(List.of("hello"), SamplingConfig.greedy(3), 1).get(0)).hasSize(1);
        }
    }
}
