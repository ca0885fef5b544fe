package comlrl.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import comlrl.logging.EventFileReader.Event;
import comlrl.model.TransformersCompatibilityTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link TensorBoardSink} writes, loaded by TensorBoard's own Python readers
 * ({@code EventAccumulator}, and the server's loader {@code plugin_event_accumulator}): every tag,
 * step, value and wall time, across a resumed run's second file, with and without
 * {@link TensorBoardSink#purgeFrom}. Needs Python with {@code tensorboard}. Run with
 * {@code mvn test -Dtest=TensorBoardPythonTest -Dtest.excludedGroups=none}.
 */
@Tag("python")
class TensorBoardPythonTest {
    /** A point as EventAccumulator gives it. */
    record Point(long step, double value, double wallTime) {
    }

    @ParameterizedTest(name = "purgeFrom called: {0}")
    @ValueSource(booleans = {true, false})
    void pythonReadersGetEveryScalarAndTheResumedRunsPointsAfterItsCheckpoint(boolean purge, @TempDir Path dir)
            throws Exception {
        assumeTrue(TransformersCompatibilityTest.pythonCanImport("tensorboard.backend.event_processing.event_accumulator"),
                "python with tensorboard is not available");
        // The first run logs env_steps 100..500 and an evaluation at 350; it is resumed from its
        // checkpoint at env_step 300 and logs 400..600 again, without that evaluation.
        long resumedFirstStep = 400;
        long keptUpTo = purge ? 300 : resumedFirstStep - 1;
        Map<String, TreeMap<Long, Double>> expected = new TreeMap<>();
        try (TensorBoardSink first = new TensorBoardSink(dir)) {
            for (long step = 1; step <= 5; step++) {
                Map<String, Double> m = new LinkedHashMap<>();
                m.put("turn_1/reward_mean", step / 10.0);
                m.put("loss", step == 2 ? Double.NaN : step == 3 ? Double.POSITIVE_INFINITY : -1.0 / step);
                m.put("grad_norm", step == 4 ? Double.NEGATIVE_INFINITY : step == 5 ? 3.0e38 : 1e-40 * step);
                if (step % 2 == 1) {
                    m.put("eval/turn_1/reward_mean", 0.5 + step);
                }
                first.log(step * 100, m);
                if (step * 100 <= keptUpTo) {
                    record(expected, step * 100, m);
                }
                if (step == 3) {
                    Map<String, Double> eval = Map.of("eval/turn_1/reward_mean", 9.25);
                    first.log(350, eval);
                    if (350 <= keptUpTo) {
                        record(expected, 350, eval);
                    }
                }
            }
        }
        try (TensorBoardSink resumed = new TensorBoardSink(dir)) {
            if (purge) {
                resumed.purgeFrom(301);
            }
            for (long step = resumedFirstStep / 100; step <= 6; step++) {
                Map<String, Double> m = Map.of("turn_1/reward_mean", step / 3.0, "loss", step * 7.0, "grad_norm", 1.0 / step);
                resumed.log(step * 100, m);
                record(expected, step * 100, m);
            }
        }
        JsonNode result = runPython(dir);
        assertThat(result.get("file_version").asDouble()).isEqualTo(2.0);
        Map<String, Map<Long, Double>> wallTimes = ourWallTimes(dir);
        for (String reader : new String[] {"event_accumulator", "plugin_event_accumulator"}) {
            Map<String, List<Point>> theirs = points(result.get(reader));
            assertThat(theirs.keySet()).as(reader).containsExactlyInAnyOrderElementsOf(expected.keySet());
            for (var tag : expected.entrySet()) {
                List<Point> want = new ArrayList<>();
                tag.getValue().forEach((step, v) -> want.add(new Point(step, v.floatValue(),
                        wallTimes.get(tag.getKey()).get(step))));
                assertThat(theirs.get(tag.getKey())).as(reader + " " + tag.getKey()).containsExactlyElementsOf(want);
            }
        }
    }

    private static void record(Map<String, TreeMap<Long, Double>> points, long step, Map<String, Double> metrics) {
        metrics.forEach((tag, v) -> points.computeIfAbsent(tag, t -> new TreeMap<>()).put(step, v));
    }

    /** The wall time of each tag's point at each step, the last written winning (as after a purge). */
    private static Map<String, Map<Long, Double>> ourWallTimes(Path dir) throws IOException {
        Map<String, Map<Long, Double>> out = new TreeMap<>();
        for (Event e : EventFileReader.readDir(dir)) {
            e.scalars().forEach(s -> out.computeIfAbsent(s.tag(), t -> new TreeMap<>()).put(e.step(), e.wallTime()));
        }
        return out;
    }

    private static JsonNode runPython(Path dir) throws IOException, InterruptedException {
        Path errors = Files.createTempFile(dir.getParent(), "python-", ".stderr");
        Process p = new ProcessBuilder(TransformersCompatibilityTest.python(), "src/test/python/tensorboard_scalars.py",
                dir.toString()).redirectError(errors.toFile()).start();
        byte[] stdout = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(errors, StandardCharsets.UTF_8)).isZero();
        return JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build().readTree(stdout);
    }

    /** {tag: [[wall_time, step, value], ...]} as points. */
    private static Map<String, List<Point>> points(JsonNode scalars) {
        Map<String, List<Point>> out = new TreeMap<>();
        scalars.fields().forEachRemaining(tag -> {
            List<Point> points = new ArrayList<>();
            for (JsonNode e : tag.getValue()) {
                points.add(new Point(e.get(1).asLong(), e.get(2).asDouble(), e.get(0).asDouble()));
            }
            out.put(tag.getKey(), points);
        });
        return out;
    }
}
