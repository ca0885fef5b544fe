package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.model.ValueHead;
import comlrl.model.io.TestDisks;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A saved head and its value_head.json are written together or not at all. */
class ValueHeadsTest {
    private static final List<String> FILES = List.of(ValueHead.SAFETENSORS_FILE, ValueHead.TORCH_FILE,
            ValueHeads.INFO_FILE);

    private static Map<String, byte[]> contents(Path dir) throws Exception {
        Map<String, byte[]> out = new TreeMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                out.put(p.getFileName().toString(), Files.isRegularFile(p) ? Files.readAllBytes(p) : null);
            }
        }
        return out;
    }

    @Test
    void aFullDiskWhileWritingTheRecordLeavesThePreviousHeadAndRecordWhole(@TempDir Path tmp) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("critic"));
        Files.writeString(dir.resolve("config.json"), "{\"the\": \"backbone\"}"); // the backbone's files stay
        try (ValueHead first = ValueHead.create(8, 4, DType.F32, Device.CPU, 1);
                ValueHead second = ValueHead.create(8, 4, DType.F32, Device.CPU, 2)) {
            ValueHeads.save(dir, first, CriticType.V, "IAC");
            Map<String, byte[]> before = contents(dir);
            assertThat(before.keySet()).containsAll(FILES);
            long headBytes = Files.size(dir.resolve(ValueHead.SAFETENSORS_FILE)) + Files.size(dir.resolve(ValueHead.TORCH_FILE));
            // both head files fit; value_head.json does not
            try (TestDisks.Restore full = TestDisks.fullAfter(headBytes + 5)) {
                assertThatThrownBy(() -> ValueHeads.save(dir, second, CriticType.Q, "IAC"))
                        .isInstanceOf(UncheckedIOException.class)
                        .hasMessageContaining("Cannot write " + dir.resolve(ValueHeads.INFO_FILE))
                        .hasMessageContaining("No space left on device")
                        .hasMessageContaining("unchanged");
            }
            Map<String, byte[]> after = contents(dir);
            assertThat(after.keySet()).containsExactlyElementsOf(before.keySet()); // no temporary files either
            before.forEach((name, bytes) -> assertThat(after.get(name)).as(name).isEqualTo(bytes));
            // with room, all three are replaced
            ValueHeads.save(dir, second, CriticType.Q, "IAC");
            assertThat(Files.readString(dir.resolve(ValueHeads.INFO_FILE))).contains("\"critic_type\" : \"q\"");
            assertThat(Files.readAllBytes(dir.resolve(ValueHead.TORCH_FILE))).isNotEqualTo(before.get(ValueHead.TORCH_FILE));
            assertThat(contents(dir).keySet()).containsExactlyElementsOf(before.keySet());
        }
    }
}
