package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import comlrl.model.TransformersCompatibilityTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link Dataset#saveToDisk} writes opens in Python with {@code datasets.load_from_disk} and
 * holds identical values. Needs Python with {@code datasets}: {@code $COMLRL_PYTHON}, else
 * {@code /tmp/pyref/bin/python}, else {@code python3}. Run with
 * {@code mvn test -Dtest=DiskDatasetPythonTest -Dtest.excludedGroups=none}.
 */
@Tag("python")
class DiskDatasetPythonTest {
    @BeforeAll
    static void needsDatasets() throws InterruptedException {
        assumeTrue(TransformersCompatibilityTest.pythonCanImport("datasets"), "python with datasets is not available");
    }

    @Test
    void aResavedFixtureOpensInPythonWithTheValuesPythonSavedItWith(@TempDir Path tmp) throws Exception {
        Dataset tasks = Dataset.loadFromDisk(DiskValues.fixture("tasks"));
        tasks.saveToDisk(tmp.resolve("tasks"));
        JsonNode python = loadInPython(tmp.resolve("tasks")).get("dataset");
        DiskValues.assertSameValues(tasks, python);
        // value for value what datasets read from its own save (the types may differ: float32 comes back float64)
        JsonNode recorded = DiskValues.expected("tasks", null);
        assertThat(python.get("columns")).isEqualTo(recorded.get("columns"));
        assertThat(python.get("rows")).isEqualTo(recorded.get("rows"));
    }

    @Test
    void javaValuesOpenInPythonAsTheyLoadInJava(@TempDir Path tmp) throws Exception {
        DiskDatasetTest.javaValues().saveToDisk(tmp.resolve("java"));
        JsonNode python = loadInPython(tmp.resolve("java")).get("dataset");
        DiskValues.assertSameValues(Dataset.loadFromDisk(tmp.resolve("java")), python);
        assertThat(python.get("features").get("float").toString()).contains("float32");
        assertThat(python.get("features").get("big").toString()).contains("uint64");
        assertThat(python.get("features").get("rows").toString())
                .isEqualTo("{\"feature\":{\"k\":{\"dtype\":\"string\",\"_type\":\"Value\"},"
                        + "\"v\":{\"dtype\":\"float64\",\"_type\":\"Value\"}},\"_type\":\"List\"}");
    }

    @Test
    void aTrainSplitOpensInPython(@TempDir Path tmp) throws Exception {
        Dataset train = Dataset.loadFromDisk(DiskValues.fixture("dict"), "train");
        train.saveToDisk(tmp.resolve("train"));
        JsonNode python = loadInPython(tmp.resolve("train")).get("dataset");
        assertThat(python.get("rows")).isEqualTo(DiskValues.expected("dict", "train").get("rows"));
    }

    /** What {@code src/test/python/disk_dataset_values.py} prints for {@code dir}. */
    private static JsonNode loadInPython(Path dir) throws IOException, InterruptedException {
        Path errors = Files.createTempFile(dir.getParent(), "python-", ".stderr");
        Process p = new ProcessBuilder(TransformersCompatibilityTest.python(), "src/test/python/disk_dataset_values.py",
                dir.toString()).redirectError(errors.toFile()).start();
        byte[] stdout = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("python finished").isTrue();
        assertThat(p.exitValue()).as("python failed:\n" + Files.readString(errors)).isZero();
        return JsonValues.MAPPER.readTree(new String(stdout, StandardCharsets.UTF_8));
    }
}
