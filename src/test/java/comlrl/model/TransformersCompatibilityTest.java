package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.generation.BuiltinModels;
import comlrl.generation.CausalLm;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * What we save loads in Hugging Face transformers without a single warning and gives our logits.
 * Needs Python with torch and transformers: {@code $COMLRL_PYTHON}, else {@code /tmp/pyref/bin/python},
 * else {@code python3}. Run with {@code mvn test -Dtest=TransformersCompatibilityTest -Dtest.excludedGroups=none}.
 */
@Tag("python")
public class TransformersCompatibilityTest {
    private static final long[] IDS = {1, 5, 9, 200, 3, 77, 42, 8};

    /** The Python the python-tagged tests run. */
    public static String python() {
        String configured = System.getenv("COMLRL_PYTHON");
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        return Files.isExecutable(Path.of("/tmp/pyref/bin/python")) ? "/tmp/pyref/bin/python" : "python3";
    }

    /** Whether {@link #python()} can {@code import modules} (e.g. "torch, transformers"). */
    public static boolean pythonCanImport(String modules) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(python(), "-c", "import " + modules).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"qwen2", "llama", "qwen3", "mistral"})
    void savedModelsLoadInTransformersSilentlyWithOurLogits(String arch, @TempDir Path tmp) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(pythonCanImport("torch, transformers"),
                "python with torch and transformers is not available (" + python() + "; set COMLRL_PYTHON)");
        Path dir = tmp.resolve(arch);
        BuiltinModels.write(arch, "tiny", 11, DType.F32, dir);
        Path resaved = tmp.resolve(arch + "-resaved");
        float[] ours;
        try (CausalLm lm = CausalLm.load(dir.toString(), null, Device.CPU);
                Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            lm.save(resaved); // what a training run writes
            Tensor ids = Tensor.ofLongs(IDS, Device.CPU, 1, IDS.length);
            Tensor pos = Tensor.arangeOf(IDS.length, Device.CPU).view(1, -1);
            ours = lm.model().forward(ids, pos, null, null, 0).logits().toFloatArray();
        }
        for (Path d : new Path[] {dir, resaved}) {
            JsonNode out = runPython(d);
            assertThat(out.get("warnings")).as(d + " warnings").isEmpty();
            JsonNode rows = out.get("logits");
            assertThat(rows.size()).isEqualTo(IDS.length);
            int v = rows.get(0).size();
            double maxDiff = 0;
            for (int t = 0; t < IDS.length; t++) {
                for (int j = 0; j < v; j++) {
                    maxDiff = Math.max(maxDiff, Math.abs(rows.get(t).get(j).asDouble() - ours[t * v + j]));
                }
            }
            assertThat(maxDiff).as(d + " max |logit difference|").isLessThan(1e-4);
        }
    }

    private static JsonNode runPython(Path dir) throws IOException, InterruptedException {
        StringBuilder ids = new StringBuilder();
        for (long id : IDS) {
            ids.append(ids.length() == 0 ? "" : ",").append(id);
        }
        Path errors = Files.createTempFile(dir.getParent(), "python-", ".stderr");
        Process p = new ProcessBuilder(python(), "src/test/python/load_with_transformers.py", dir.toString(),
                ids.toString()).redirectError(errors.toFile()).start();
        byte[] stdout = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        String stderr = Files.readString(errors, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(stderr).isZero();
        return new ObjectMapper().readTree(stdout);
    }
}
