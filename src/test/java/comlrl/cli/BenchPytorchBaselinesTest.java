package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.model.TransformersCompatibilityTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code bench --compare-pytorch}'s PyTorch sides, run for real on the tiny shape (one measured step):
 * each baseline runs what it says (AdamW's implementation, bf16 as weights or autocast), the output
 * keeps {@code pytorch}/{@code ratios} against the plain baseline, and {@code --lora R} adds
 * transformers + peft with the same adapters (same trainable parameter count as our LoRA agents).
 * Needs bench/.venv (bash bench/setup.sh) or {@code COMLRL_PYTHON} with torch, transformers and peft.
 */
@Tag("python")
class BenchPytorchBaselinesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** bench/.venv's interpreter when it exists, else the python tests' one. */
    private static String python() throws InterruptedException {
        Path venv = Path.of("bench", ".venv", "bin", "python");
        String py = Files.isExecutable(venv) ? venv.toString() : TransformersCompatibilityTest.python();
        boolean ok;
        try {
            Process p = new ProcessBuilder(py, "-c", "import torch, transformers, peft").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            ok = p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            ok = false;
        }
        assumeTrue(ok, py + " cannot import torch, transformers and peft (bash bench/setup.sh)");
        return py;
    }

    /**
     * bench/pytorch_step.py writes transformers' processors out for {@code --sampling}; on random
     * scores and seen ids they must give exactly what transformers' own {@code LogitsProcessorList}
     * gives, and remove something (a check that cannot pass by keeping everything).
     */
    @Test
    void thePytorchSidesProcessorsAreTransformers() throws Exception {
        String script = String.join("\n",
                "import sys; sys.path.insert(0, 'bench')",
                "import torch, pytorch_step as p",
                "from transformers.generation.logits_process import LogitsProcessorList, "
                        + "RepetitionPenaltyLogitsProcessor as R, TemperatureLogitsWarper as T, TopKLogitsWarper as K, "
                        + "TopPLogitsWarper as P",
                "torch.manual_seed(0)",
                "for spec in ['qwen2.5', 'temperature=1.3,top_k=5', 'top_p=0.5,repetition_penalty=0.8']:",
                "    s = p.parse_sampling(spec)",
                "    steps = [R(s['repetition_penalty'])] if 'repetition_penalty' in s else []",
                "    steps += [T(s['temperature'])] if 'temperature' in s else []",
                "    steps += [K(s['top_k'])] if 'top_k' in s else []",
                "    steps += [P(s['top_p'])] if 'top_p' in s else []",
                "    scores, seen = torch.randn(6, 3000) * 3, torch.randint(0, 3000, (6, 40))",
                "    ours = p.warped(scores.clone(), seen, s)",
                "    theirs = LogitsProcessorList(steps)(seen, scores.clone())",
                "    print(spec, 'equal', torch.equal(ours, theirs), 'kept', int(torch.isfinite(ours).sum()))");
        Process p = new ProcessBuilder(python(), "-c", script).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0).as(out).isTrue();
        List<String> lines = out.lines().filter(l -> l.contains(" equal ")).toList();
        assertThat(lines).as(out).hasSize(3);
        for (String line : lines) {
            assertThat(line).as(out).contains("equal True");
            long kept = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
            assertThat(kept).as(line).isBetween(6L, 6L * 3000 - 1);
        }
    }

    @Test
    void bfloat16RunsThePlainFusedAndAutocastBaselinesAndKeepsRatiosAgainstPlain() throws Exception {
        CliTest.Result r = CliTest.run("bench", "--shape", "tiny", "--agents", "1", "--generations", "2", "--prompt-len",
                "8", "--new-tokens", "4", "--warmup", "0", "--steps", "1", "--rounds", "2", "--dtype", "bfloat16",
                "--sampling", "qwen2.5", "--compare-pytorch", "--python", python(), "--json");
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode o = JSON.readTree(r.out().trim());
        JsonNode b = o.get("pytorch_baselines");
        assertThat(b.fieldNames()).toIterable().containsExactly("plain", "fused", "autocast");
        assertThat(b.get("plain").get("adamw").asText()).isEqualTo("for-loop");
        assertThat(b.get("fused").get("adamw").asText()).isEqualTo("fused");
        assertThat(b.get("autocast").get("adamw").asText()).isEqualTo("fused");
        assertThat(b.get("plain").get("bf16").asText()).isEqualTo("weights");
        assertThat(b.get("fused").get("bf16").asText()).isEqualTo("weights");
        assertThat(b.get("autocast").get("bf16").asText()).isEqualTo("autocast");
        assertThat(o.get("pytorch").get("baseline").asText()).isEqualTo("plain");
        // every side draws with Qwen2.5's settings
        assertThat(o.get("sampling").asText()).isEqualTo("temperature=0.7,top_k=20,top_p=0.8,repetition_penalty=1.05");
        for (String name : new String[] {"plain", "fused", "autocast"}) {
            JsonNode s = b.get(name).get("sampling");
            assertThat(List.of(s.get("temperature").asDouble(), s.get("top_k").asDouble(), s.get("top_p").asDouble(),
                    s.get("repetition_penalty").asDouble())).as(name).containsExactly(0.7, 20.0, 0.8, 1.05);
        }
        // our side measured in a JVM of its own, not in the one that ran the PyTorch processes
        assertThat(o.get("pid").asLong()).isNotEqualTo(ProcessHandle.current().pid());
        assertThat(o.get("rounds").asInt()).isEqualTo(2);
        assertThat(b.get("fused").get("rounds").asInt()).isEqualTo(2);
        assertThat(o.get("parameters").asLong()).isPositive();
        assertThat(o.get("ratios")).isEqualTo(o.get("ratios_by_baseline").get("plain"));
        for (String name : new String[] {"plain", "fused", "autocast"}) {
            double ratio = o.get("ratios_by_baseline").get(name).get("step_ms").asDouble();
            assertThat(ratio).as(name).isEqualTo(o.get("step_ms").asDouble() / b.get(name).get("step_ms").asDouble());
        }
        CliTest.Result one = CliTest.run("bench", "--shape", "tiny", "--compare-pytorch", "--pytorch-baselines", "autocast");
        assertThat(one.code()).isEqualTo(1);
        assertThat(one.err()).contains("no baseline \"autocast\" for --dtype float32").contains("[plain, fused]");
    }

    @Test
    void loraAddsPeftWithTheSameAdapters() throws Exception {
        CliTest.Result r = CliTest.run("bench", "--shape", "tiny", "--lora", "4", "--agents", "2", "--generations", "2",
                "--prompt-len", "8", "--new-tokens", "4", "--warmup", "0", "--steps", "1", "--rounds", "2",
                "--sampling", "top_k=5,temperature=0.9", "--compare-pytorch", "--python", python(), "--json");
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode o = JSON.readTree(r.out().trim());
        JsonNode peft = o.get("pytorch_peft");
        assertThat(peft.get("impl").asText()).isEqualTo("pytorch+peft");
        assertThat(peft.get("agents").asInt()).isEqualTo(2);
        assertThat(peft.get("adamw").asText()).isEqualTo("fused");
        assertThat(peft.get("sampling").get("top_k").asInt()).isEqualTo(5);
        assertThat(peft.get("sampling").get("temperature").asDouble()).isEqualTo(0.9);
        assertThat(o.get("sampling").asText()).isEqualTo("temperature=0.9,top_k=5,top_p=1.0,repetition_penalty=1.0");
        for (JsonNode side : new JsonNode[] {peft, o.get("lora"), o.get("full")}) { // alternated, medians of both
            assertThat(side.get("rounds").asInt()).isEqualTo(2);
        }
        assertThat(peft.get("trainable_parameters").asLong()).isEqualTo(o.get("lora").get("trainable_parameters").asLong());
        for (String key : BenchCommand.PEFT_KEYS) {
            assertThat(o.get("ratios_vs_peft").get(key).asDouble()).as(key)
                    .isEqualTo(o.get("lora").get(key).asDouble() / peft.get(key).asDouble());
        }
    }
}
