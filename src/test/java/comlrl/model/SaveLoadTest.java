package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.generation.BuiltinModels;
import comlrl.generation.CausalLm;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;

class SaveLoadTest {
    @ParameterizedTest
    @CsvSource({"qwen2,float32", "llama,bfloat16", "qwen3,float32"})
    void saveThenLoadRoundTripsBitExactly(String arch, String dtype, @TempDir Path tmp) throws Exception {
        Path a = tmp.resolve("a");
        BuiltinModels.write(arch, "tiny", 5, DType.fromTorchName(dtype), a);
        try (CausalLm first = CausalLm.load(a.toString(), null, Device.CPU)) {
            Path b = tmp.resolve("b");
            first.save(b);
            for (String f : new String[] {"config.json", "model.safetensors", "tokenizer.json",
                    "tokenizer_config.json", "generation_config.json"}) {
                assertThat(Files.isRegularFile(b.resolve(f))).as(f).isTrue();
            }
            try (CausalLm second = CausalLm.load(b.toString(), null, Device.CPU)) {
                assertThat(second.model().dtype()).isEqualTo(DType.fromTorchName(dtype));
                first.model().namedParameters().forEach((k, v) ->
                        assertThat(second.model().namedParameters().get(k).bitEquals(v)).as(k).isTrue());
                assertThat(second.encode("hello there")).containsExactly(first.encode("hello there"));
            }
        }
    }
}
