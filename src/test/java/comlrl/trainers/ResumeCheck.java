package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.checkpoint.Checkpoints;
import comlrl.generation.CausalLm;
import comlrl.tensor.Scope;
import comlrl.trainers.common.Trainer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The resume contract, checked end to end: a run trained straight through with a checkpoint after
 * every epoch (or iteration), and a second run of the same config resumed from one of the straight
 * run's mid-run checkpoints (what a run stopped there wrote) in a fresh output directory, must end
 * <ul>
 *   <li>with the same agents in memory, every parameter bit for bit;</li>
 *   <li>with byte-identical final checkpoints: every tensor file (agents, optimizer moments, critics,
 *       value heads, the reward model and its optimizer), the preference set and replay shards, and
 *       the metadata (progress, seed positions, stateful parts), all but the log's line count;</li>
 *   <li>with the resumed run's {@code metrics.jsonl} rows exactly the straight run's rows after the
 *       checkpoint (wall-clock fields {@code timestamp}/{@code time} left out).</li>
 * </ul>
 */
public final class ResumeCheck {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Fields of a metrics row that record wall-clock time, not the run's state. */
    private static final List<String> CLOCK_FIELDS = List.of("timestamp", "time");

    private ResumeCheck() {
    }

    /** Builds one run's trainer writing its outputs ({@code metrics.jsonl}, ...) into {@code outputDir}. */
    @FunctionalInterface
    public interface Run {
        Trainer build(Path outputDir);
    }

    /**
     * Trains {@code run} straight through in {@code dir/straight}, then resumes it from the straight
     * run's {@code checkpoint-N} in {@code dir/resumed}, and asserts the contract above.
     */
    public static void assertResumeReproduces(Path dir, Run run, int checkpoint) {
        Path straightOut = dir.resolve("straight");
        Path straightCheckpoints = dir.resolve("straight-checkpoints");
        Map<String, byte[]> straightAgents;
        try (Trainer t = run.build(straightOut)) {
            t.train(straightCheckpoints, 1);
            straightAgents = parameters(t.policies());
        }
        Path from = straightCheckpoints.resolve("checkpoint-" + checkpoint);
        assertThat(from).as("the straight run's checkpoint to resume from").isDirectory();
        Path resumedOut = dir.resolve("resumed");
        Path resumedCheckpoints = dir.resolve("resumed-checkpoints");
        Map<String, byte[]> resumedAgents;
        try (Trainer t = run.build(resumedOut)) {
            t.train(resumedCheckpoints, 1, from);
            resumedAgents = parameters(t.policies());
        }
        assertSameParameters(resumedAgents, straightAgents);
        Path straightLast = Checkpoints.latest(straightCheckpoints).orElseThrow();
        Path resumedLast = Checkpoints.latest(resumedCheckpoints).orElseThrow();
        assertThat(resumedLast.getFileName()).isEqualTo(straightLast.getFileName());
        assertSameCheckpoint(resumedLast, straightLast);
        long lines = ((Number) Checkpoints.readMetadata(from).get("metrics_lines")).longValue();
        assertRowsAfter(straightOut.resolve("metrics.jsonl"), lines, resumedOut.resolve("metrics.jsonl"));
    }

    /** Every parameter of {@code agents}' models as bytes, by {@code agent_i/name}. */
    public static Map<String, byte[]> parameters(List<CausalLm> agents) {
        Map<String, byte[]> out = new LinkedHashMap<>();
        try (Scope s = Scope.open()) {
            for (int i = 0; i < agents.size(); i++) {
                String prefix = "agent_" + i + "/";
                agents.get(i).model().namedParameters().forEach((k, v) -> out.put(prefix + k, v.toBytes()));
            }
        }
        return out;
    }

    /** Same names, and each parameter bit for bit. */
    public static void assertSameParameters(Map<String, byte[]> actual, Map<String, byte[]> expected) {
        assertThat(actual.keySet()).isEqualTo(expected.keySet());
        expected.forEach((name, bytes) -> assertThat(java.util.Arrays.mismatch(actual.get(name), bytes))
                .as("first differing byte of parameter %s (-1: none)", name).isEqualTo(-1));
    }

    /**
     * The two checkpoint directories hold the same files with the same bytes; {@code metadata.json}
     * the same values but {@code metrics_lines} (the resumed run's log starts at the checkpoint).
     */
    public static void assertSameCheckpoint(Path actual, Path expected) {
        List<Path> files = files(expected);
        assertThat(files(actual)).as("files of " + actual).isEqualTo(files);
        for (Path f : files) {
            if (f.getFileName().toString().equals(Checkpoints.METADATA)) {
                Map<String, Object> a = new LinkedHashMap<>(Checkpoints.readMetadata(actual));
                Map<String, Object> e = new LinkedHashMap<>(Checkpoints.readMetadata(expected));
                a.remove("metrics_lines");
                e.remove("metrics_lines");
                assertThat(a).as(actual.resolve(f).toString()).isEqualTo(e);
            } else {
                assertThat(java.util.Arrays.mismatch(bytes(actual.resolve(f)), bytes(expected.resolve(f))))
                        .as("first differing byte of %s (-1: none)", actual.resolve(f)).isEqualTo(-1);
            }
        }
    }

    /**
     * The rows of {@code resumed} are exactly the rows of {@code straight} after its first
     * {@code lines} (the checkpoint's log position), and there are some.
     */
    public static void assertRowsAfter(Path straight, long lines, Path resumed) {
        List<JsonNode> all = rows(straight);
        assertThat((long) all.size()).as("rows of the straight run").isGreaterThan(lines);
        assertThat(rows(resumed)).isEqualTo(all.subList((int) lines, all.size()));
    }

    /** The rows of a {@code metrics.jsonl}, without wall-clock fields. */
    public static List<JsonNode> rows(Path metrics) {
        List<JsonNode> out = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(metrics)) {
                ObjectNode row = (ObjectNode) JSON.readTree(line);
                CLOCK_FIELDS.forEach(row::remove);
                out.add(row);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static List<Path> files(Path root) {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(Files::isRegularFile).map(root::relativize).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] bytes(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
