package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.generation.BuiltinModels;
import comlrl.generation.CausalLm;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import java.nio.file.Files;
import java.nio.file.Path;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.model.io.TestDisks;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
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

    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static void assertSameWeights(CausalLm expected, CausalLm actual) {
        expected.model().namedParameters().forEach((k, v) ->
                assertThat(actual.model().namedParameters().get(k).bitEquals(v)).as(k).isTrue());
    }

    @Test
    void aSaveThatFailsMidwayLeavesThePreviousModelWhole(@TempDir Path tmp) throws Exception {
        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");
        BuiltinModels.write("qwen2", "tiny", 5, DType.F32, a);
        BuiltinModels.write("qwen2", "tiny", 6, DType.F32, b);
        Files.writeString(a.resolve("NOTES.md"), "kept");
        try (CausalLm first = CausalLm.load(a.toString(), null, Device.CPU);
                CausalLm other = CausalLm.load(b.toString(), null, Device.CPU)) {
            // config.json fits, the weights do not: the failure comes after part of the save is written
            try (TestDisks.Restore full = TestDisks.fullAfter(20_000)) {
                assertThatThrownBy(() -> other.save(a))
                        .isInstanceOf(UncheckedIOException.class)
                        .hasMessageContaining("Cannot save the model to " + a)
                        .hasMessageContaining("No space left on device")
                        .hasMessageContaining("unchanged");
            }
            assertThat(names(tmp)).containsExactly("a", "b");
            assertThat(names(a)).containsExactly("NOTES.md", "config.json", "generation_config.json",
                    "model.safetensors", "tokenizer.json", "tokenizer_config.json");
            try (CausalLm again = CausalLm.load(a.toString(), null, Device.CPU)) {
                assertSameWeights(first, again);
            }
            // with room, the same save replaces the model and keeps the notes
            other.save(a);
            try (CausalLm replaced = CausalLm.load(a.toString(), null, Device.CPU)) {
                assertSameWeights(other, replaced);
            }
            assertThat(Files.readString(a.resolve("NOTES.md"))).isEqualTo("kept");
            assertThat(names(tmp)).containsExactly("a", "b");
        }
    }

    @Test
    void savingIntoTheDirectoryTheModelWasLoadedFromIsSafe(@TempDir Path tmp) throws Exception {
        Path a = tmp.resolve("a");
        BuiltinModels.write("llama", "tiny", 5, DType.BF16, a);
        byte[] weights = Files.readAllBytes(a.resolve("model.safetensors"));
        try (CausalLm lm = CausalLm.load(a.toString(), null, Device.CPU)) {
            lm.save(a);
            lm.save(a);
            try (CausalLm again = CausalLm.load(a.toString(), null, Device.CPU)) {
                assertSameWeights(lm, again);
            }
        }
        assertThat(Files.readAllBytes(a.resolve("model.safetensors"))).isEqualTo(weights);
        assertThat(names(tmp)).containsExactly("a");
    }

    @Test
    void savedConfigsSayNullForNoBosAndQwen2ClaimsNoAttentionBias(@TempDir Path tmp) throws Exception {
        ObjectMapper json = new ObjectMapper();
        for (String arch : new String[] {"qwen2", "llama", "qwen3", "mistral"}) {
            Path dir = tmp.resolve(arch);
            BuiltinModels.write(arch, "tiny", 1, DType.F32, dir);
            JsonNode config = json.readTree(dir.resolve("config.json").toFile());
            assertThat(config.has("bos_token_id") && config.get("bos_token_id").isNull()).as(arch).isTrue();
            assertThat(config.has("attention_bias")).as(arch).isEqualTo(arch.equals("llama") || arch.equals("qwen3"));
        }
        // a config written by an older version (-1 for none, attention_bias false on qwen2) is cleaned on save
        Path old = tmp.resolve("qwen2");
        com.fasterxml.jackson.databind.node.ObjectNode c = (com.fasterxml.jackson.databind.node.ObjectNode)
                json.readTree(old.resolve("config.json").toFile());
        c.put("bos_token_id", -1);
        c.put("attention_bias", false);
        Files.writeString(old.resolve("config.json"), c.toString());
        try (CausalLm lm = CausalLm.load(old.toString(), null, Device.CPU)) {
            assertThat(lm.model().config().qkvBias()).isTrue();
            lm.save(tmp.resolve("resaved"));
        }
        JsonNode resaved = json.readTree(tmp.resolve("resaved/config.json").toFile());
        assertThat(resaved.get("bos_token_id").isNull()).isTrue();
        assertThat(resaved.has("attention_bias")).isFalse();
    }
}
