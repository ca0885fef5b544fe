package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Value heads cross over to PyTorch both ways: what we save, {@code torch.load(path,
 * weights_only=True)} opens with the reference's key names and shapes, and the reference's
 * {@code ValueHead.load_state_dict} takes it and computes our values; what the reference saves with
 * {@code torch.save(value_head.state_dict(), path)}, {@link ValueHead#restore} takes. Needs Python
 * with torch and safetensors (found as {@link TransformersCompatibilityTest#python()} finds it;
 * skipped without). Run with {@code mvn test -Dtest=ValueHeadPythonTest -Dtest.excludedGroups=none}.
 */
@Tag("python")
class ValueHeadPythonTest {
    private static final int E = 6;
    private static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest
    @ValueSource(ints = {0, 5})
    void savedHeadsCrossToPyTorchAndBack(int hidden, @TempDir Path tmp) throws Exception {
        assumeTrue(pythonHasTorch(), "python with torch and safetensors is not available");
        Path javaDir = tmp.resolve("java");
        Path pyDir = tmp.resolve("python");
        try (ValueHead head = ValueHead.create(E, hidden, DType.F32, Device.CPU, 77);
                Rng rng = new Rng(5); Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            head.save(javaDir);
            Tensor states = Tensor.randn(rng, 1.0, DType.F32, Device.CPU, 2, 3, E); // [B, S, E]
            Path statesFile = tmp.resolve("hidden.json");
            Files.writeString(statesFile, JSON.writeValueAsString(nested(states.toDoubleArray(), 2, 3, E)));
            double[] ours = head.forward(states).toDoubleArray();

            JsonNode out = runPython(javaDir, pyDir, hidden, statesFile);
            JsonNode loaded = out.get("torch_load");
            List<String> keys = new ArrayList<>(head.namedParameters().keySet());
            assertThat(strings(loaded.get("keys"))).containsExactlyElementsOf(keys);
            assertThat(keys).containsExactlyElementsOf(hidden > 0
                    ? List.of("pre_projection.0.weight", "pre_projection.0.bias", "value_projection.weight",
                            "value_projection.bias")
                    : List.of("value_projection.weight", "value_projection.bias"));
            for (String k : keys) {
                Tensor p = head.namedParameters().get(k);
                assertThat(longs(loaded.get("shapes").get(k))).as(k).containsExactly(p.shape());
                assertThat(doubles(loaded.get("values").get(k))).as(k).containsExactly(p.toDoubleArray());
            }
            assertThat(out.get("mmap_equal").asBoolean()).as("torch.load(mmap=True)").isTrue();
            assertThat(out.get("safetensors_equal").asBoolean()).as("value_head.safetensors").isTrue();
            assertThat(doubles(out.get("values_with_java_weights"))).containsExactly(ours, within(1e-6));

            // the reference's own save, restored into a head of the same shape
            JsonNode theirs = out.get("python_saved");
            try (ValueHead restored = ValueHead.load(pyDir, E, hidden, DType.F32, Device.CPU)) {
                for (String k : keys) {
                    assertThat(restored.namedParameters().get(k).toDoubleArray()).as(k)
                            .containsExactly(doubles(theirs.get("values").get(k)));
                }
                assertThat(restored.forward(states).toDoubleArray())
                        .containsExactly(doubles(out.get("values_with_python_weights")), within(1e-6));
            }
        }
    }

    private static boolean pythonHasTorch() throws InterruptedException {
        return TransformersCompatibilityTest.pythonCanImport("torch, safetensors");
    }

    private static JsonNode runPython(Path javaDir, Path pyDir, int hidden, Path statesFile)
            throws IOException, InterruptedException {
        Path errors = Files.createTempFile(statesFile.getParent(), "python-", ".stderr");
        Process p = new ProcessBuilder(TransformersCompatibilityTest.python(), "src/test/python/value_head_interop.py",
                javaDir.toString(), pyDir.toString(), Integer.toString(E), Integer.toString(hidden),
                statesFile.toString()).redirectError(errors.toFile()).start();
        byte[] stdout = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        String stderr = Files.readString(errors, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(stderr).isZero();
        return JSON.readTree(stdout);
    }

    private static double[][][] nested(double[] flat, int b, int s, int e) {
        double[][][] out = new double[b][s][e];
        for (int i = 0; i < flat.length; i++) {
            out[i / (s * e)][(i / e) % s][i % e] = flat[i];
        }
        return out;
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static long[] longs(JsonNode array) {
        long[] out = new long[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asLong();
        }
        return out;
    }

    private static double[] doubles(JsonNode array) {
        double[] out = new double[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asDouble();
        }
        return out;
    }
}
