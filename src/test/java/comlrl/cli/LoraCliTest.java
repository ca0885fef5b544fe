package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.generation.CausalLm;
import comlrl.model.LoraAdapter;
import comlrl.tensor.Device;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code examples/lora.yaml} (shortened): PEFT adapter directories naming a local base directory,
 * {@code --merge} full models, {@code lora_adapters} to continue, and LoRA keys checked first.
 */
class LoraCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Path EXAMPLE = Path.of("examples/lora.yaml");
    static final String[] SHORT = {"--set", "num_train_epochs=1", "--set", "num_generations=2", "--set",
        "max_new_tokens=6", "--set", "eval_repeats=1", "--set", "eval_interval=0"};

    static CliTest.Result train(Path out, String... extra) {
        String[] args = new String[3 + SHORT.length + extra.length];
        args[0] = "train";
        args[1] = EXAMPLE.toString();
        args[2] = "--output-dir=" + out;
        System.arraycopy(SHORT, 0, args, 3, SHORT.length);
        System.arraycopy(extra, 0, args, 3 + SHORT.length, extra.length);
        return CliTest.run(args);
    }

    @Test
    void theLoraExampleSavesPeftAdaptersOnALocalBaseAndMergeSavesFullModels(@TempDir Path tmp) throws Exception {
        CliTest.Result r = train(tmp.resolve("peft"));
        assertThat(r.code()).as(r.err()).isZero();
        Path agent0 = tmp.resolve("peft/agent_0");
        JsonNode cfg = JSON.readTree(agent0.resolve(LoraAdapter.CONFIG_FILE).toFile());
        assertThat(cfg.get("peft_type").asText()).isEqualTo("LORA");
        assertThat(cfg.get("r").asInt()).isEqualTo(8);
        assertThat(cfg.get("lora_alpha").asDouble()).isEqualTo(16.0);
        assertThat(cfg.get("target_modules")).hasSize(7);
        Path baseDir = Path.of(cfg.get("base_model_name_or_path").asText());
        assertThat(baseDir.resolve("config.json")).isRegularFile(); // a local directory peft can load
        assertThat(agent0.resolve("model.safetensors")).doesNotExist();

        CliTest.Result m = train(tmp.resolve("merged"), "--merge");
        assertThat(m.code()).as(m.err()).isZero();
        assertThat(tmp.resolve("merged/agent_0/model.safetensors")).isRegularFile();
        assertThat(tmp.resolve("merged/agent_0/" + LoraAdapter.CONFIG_FILE)).doesNotExist();
        // the same seed trained the same adapters: the merged model is the base with the saved adapter folded in
        try (CausalLm merged = CausalLm.load(tmp.resolve("merged/agent_0").toString(), null, Device.CPU);
                CausalLm base = CausalLm.load(baseDir.toString(), null, Device.CPU);
                LoraAdapter adapter = LoraAdapter.loadPeft(agent0, base.model().config(), base.model().dtype(), Device.CPU);
                CausalLm agent = base.withAdapter(adapter, false);
                comlrl.tensor.Scope s = comlrl.tensor.Scope.open();
                comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
            long[] ids = merged.encode("Write a short response to this task:\nSay hello.");
            long[] p = new long[ids.length];
            for (int i = 0; i < p.length; i++) {
                p[i] = i;
            }
            comlrl.tensor.Tensor x = comlrl.tensor.Tensor.ofLongs(ids, Device.CPU, 1, ids.length);
            comlrl.tensor.Tensor pos = comlrl.tensor.Tensor.ofLongs(p, Device.CPU, 1, ids.length);
            comlrl.tensor.Tensor a = merged.model().forward(x, pos, null, null, 0).logits();
            comlrl.tensor.Tensor b = agent.model().forward(x, pos, null, null, 0).logits();
            assertThat(a.sub(b).abs().max().item()).isLessThan(1e-4);
            assertThat(b.sub(base.model().forward(x, pos, null, null, 0).logits()).abs().max().item())
                    .as("the adapter trained").isGreaterThan(1e-6);
        }

        // continue from the saved adapters
        CliTest.Result c = train(tmp.resolve("continued"), "--set",
                "lora_adapters=[" + agent0 + ", " + tmp.resolve("peft/agent_1") + "]");
        assertThat(c.code()).as(c.err()).isZero();
    }

    @Test
    void loraKeysAreCheckedBeforeAnyModelLoads(@TempDir Path tmp) throws Exception {
        CliTest.Result bad = train(tmp.resolve("x"), "--set", "lora.rank=4");
        assertThat(bad.code()).isNotZero();
        assertThat(bad.err()).contains("lora: unknown key 'rank'");
        CliTest.Result missing = train(tmp.resolve("y"), "--set", "lora_adapters=[" + tmp.resolve("nowhere") + ", null]");
        assertThat(missing.code()).isNotZero();
        assertThat(missing.err()).contains("lora_adapters[0]").contains("adapter_config.json");
        // an adapter with a setting we do not implement: refused by name before any model loads
        Path patterned = tmp.resolve("patterned");
        comlrl.model.ModelConfig shape = comlrl.model.ModelPresets.config("qwen2", "tiny", 64, -1, 2, "float32");
        try (LoraAdapter a = LoraAdapter.init(shape, comlrl.model.LoraConfig.defaults(), comlrl.tensor.DType.F32,
                Device.CPU, 1)) {
            a.savePeft(patterned, "base");
        }
        com.fasterxml.jackson.databind.node.ObjectNode cfg = (com.fasterxml.jackson.databind.node.ObjectNode)
                JSON.readTree(patterned.resolve(LoraAdapter.CONFIG_FILE).toFile());
        cfg.putObject("alpha_pattern").put("q_proj", 32);
        Files.writeString(patterned.resolve(LoraAdapter.CONFIG_FILE), cfg.toString());
        CliTest.Result pattern = train(tmp.resolve("p"), "--set", "lora_adapters=[null, " + patterned + "]");
        assertThat(pattern.code()).isNotZero();
        assertThat(pattern.err()).contains("lora_adapters[1]").contains("alpha_pattern = {\"q_proj\":32}");
        assertThat(tmp.resolve("p")).doesNotExist();
        Path plain = tmp.resolve("plain.yaml");
        Files.writeString(plain, Files.readString(Path.of("examples/length-ratio.yaml")));
        CliTest.Result merge = CliTest.run("train", plain.toString(), "--merge", "--output-dir=" + tmp.resolve("z"));
        assertThat(merge.code()).isNotZero();
        assertThat(merge.err()).contains("save_merged (train --merge) applies to LoRA agents");
        assertThat(tmp.resolve("z")).doesNotExist();
    }

    @Test
    void everyTrainerFamilyTrainsLoraAgentsAndSavesPeftAdapters(@TempDir Path tmp) throws Exception {
        java.util.Map<String, String> small = java.util.Map.of("iac", "num_generations=2", "maac", "num_generations=2",
                "madpo", "preference_num_candidates=4", "marlhf", "preference_num_candidates=4");
        for (String example : java.util.List.of("iac", "maac", "madpo", "marlhf")) {
            Path out = tmp.resolve(example);
            CliTest.Result r = CliTest.run("train", "examples/" + example + ".yaml", "--output-dir=" + out,
                    "--set", "lora={r: 4, alpha: 8, target_modules: [q_proj, v_proj]}", "--set", "num_train_epochs=1",
                    "--set", "eval_repeats=1", "--set", "eval_interval=0", "--set", "max_new_tokens=6",
                    "--set", small.get(example));
            assertThat(r.code()).as(example + ": " + r.err()).isZero();
            JsonNode cfg = JSON.readTree(out.resolve("agent_0/" + LoraAdapter.CONFIG_FILE).toFile());
            assertThat(cfg.get("r").asInt()).as(example).isEqualTo(4);
            assertThat(out.resolve("agent_1/" + LoraAdapter.WEIGHTS_FILE)).as(example).isRegularFile();
        }
    }
}
