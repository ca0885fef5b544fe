package comlrl.model.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Writing under a full disk: clear errors, the previous file kept, nothing left behind. */
class SafetensorsWriteTest {

    private static Map<String, Tensor> weights(long seed, int rows) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        try (Rng rng = new Rng(seed)) {
            m.put("a", Tensor.randn(rng, 1.0, DType.F32, Device.CPU, rows, 64));
            m.put("b", Tensor.randn(rng, 1.0, DType.BF16, Device.CPU, rows));
        }
        return m;
    }

    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aDiskFillingUpMidWriteIsAClearErrorAndThePreviousFileStays(@TempDir Path tmp) throws Exception {
        try (Scope s = Scope.open()) {
            Path f = tmp.resolve("model.safetensors");
            Safetensors.save(weights(1, 8), f);
            byte[] before = Files.readAllBytes(f);
            try (TestDisks.Restore full = TestDisks.fullAfter(3000)) {
                assertThatThrownBy(() -> Safetensors.save(weights(2, 100), f))
                        .isInstanceOf(UncheckedIOException.class)
                        .hasMessageContaining("Cannot write " + f)
                        .hasMessageContaining("No space left on device")
                        .hasMessageContaining("free there")
                        .hasMessageContaining("previous model.safetensors is unchanged");
            }
            assertThat(Files.readAllBytes(f)).isEqualTo(before);
            assertThat(names(tmp)).containsExactly("model.safetensors");
        }
    }

    @Test
    void tooLittleFreeSpaceFailsBeforeAnythingIsWritten(@TempDir Path tmp) throws Exception {
        try (Scope s = Scope.open()) {
            Path f = tmp.resolve("optimizer.safetensors");
            try (TestDisks.Restore little = TestDisks.freeSpace(1000)) {
                assertThatThrownBy(() -> Safetensors.save(weights(2, 100), f))
                        .isInstanceOf(UncheckedIOException.class)
                        .hasMessageContaining("Not enough disk space to write optimizer.safetensors in " + tmp)
                        .hasMessageContaining("only 1000 bytes (1.0 kB) are free")
                        .hasMessageContaining("needs 25");
            }
            assertThat(names(tmp)).isEmpty();
        }
    }

    @Test
    void shardedSavesCheckSpaceForAllShardsAndKeepOldWeightsUntilTheNewAreIn(@TempDir Path tmp) throws Exception {
        try (Scope s = Scope.open()) {
            Safetensors.saveModelDir(weights(1, 8), tmp, 100); // two shards + index
            assertThat(names(tmp)).containsExactly("model-00001-of-00002.safetensors",
                    "model-00002-of-00002.safetensors", "model.safetensors.index.json");
            try (TestDisks.Restore little = TestDisks.freeSpace(3000)) {
                // the first shard (25 kB) alone does not fit: nothing is written at all
                assertThatThrownBy(() -> Safetensors.saveModelDir(weights(2, 100), tmp, 20_000))
                        .hasMessageContaining("Not enough disk space to write the model weights (2 files)");
            }
            try (TestDisks.Restore full = TestDisks.fullAfter(200)) {
                assertThatThrownBy(() -> Safetensors.saveModelDir(weights(2, 100), tmp, 1L << 30))
                        .hasMessageContaining("No space left on device");
            }
            // the old sharded weights are intact and loadable; no temporary file remains
            assertThat(names(tmp)).containsExactly("model-00001-of-00002.safetensors",
                    "model-00002-of-00002.safetensors", "model.safetensors.index.json");
            Map<String, Tensor> back = Safetensors.loadModelDir(tmp);
            weights(1, 8).forEach((k, v) -> assertThat(back.get(k).bitEquals(v)).as(k).isTrue());
            // a successful single-file save replaces the shards
            Safetensors.saveModelDir(weights(2, 8), tmp, 1L << 30);
            assertThat(names(tmp)).containsExactly("model.safetensors");
        }
    }

    @Test
    void writingToTheRealDevFullIsAnIoExceptionNotACrash(@TempDir Path tmp) throws Exception {
        // every byte goes to /dev/full: the kernel's ENOSPC, surfaced as an exception
        try (Scope s = Scope.open(); TestDisks.Restore full = TestDisks.fullAfter(0)) {
            assertThatThrownBy(() -> Safetensors.save(weights(3, 4), tmp.resolve("x.safetensors")))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasMessageContaining("No space left on device");
        }
        assertThat(names(tmp)).isEmpty();
    }
}
