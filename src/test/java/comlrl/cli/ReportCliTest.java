package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.report.ReportPages;
import comlrl.report.ReportPages.Curve;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportCliTest {

    @Test
    void reportChartsEveryMetricOfARealRunAndComparesTwoRuns(@TempDir Path tmp) throws Exception {
        Path cfg = CliTest.tinyRunConfig(tmp, "run-a", "eval_repeats: 2", "save_model: false");
        CliTest.Result train = CliTest.run("train", cfg.toString());
        assertThat(train.code()).as(train.err()).isZero();
        Path runA = tmp.resolve("run-a");

        CliTest.Result report = CliTest.run("report", runA.toString());
        assertThat(report.code()).as(report.err()).isZero();
        Path html = runA.resolve("report.html"); // the default for one run
        assertThat(report.out()).contains(html.toString());
        // run.json: the run's wall time, at least its training time; the report shows it with the time per step
        comlrl.report.RunTimes times = comlrl.report.RunTimes.read(runA).orElseThrow();
        assertThat(times.wallS()).isGreaterThanOrEqualTo(times.trainS()).isPositive();
        assertThat(times.trainItems()).isPositive();
        assertThat(Files.readString(html)).contains(" s / env step").contains(" items/s");
        Map<String, Integer> logged = ReportPages.loggedSteps(runA.resolve("metrics.jsonl"));
        assertThat(logged).containsKeys("turn_1/reward_mean", "eval/turn_1/reward_mean", "agent_0/turn_1/policy_loss");
        org.w3c.dom.Document page = ReportPages.parse(html);
        Map<String, Integer> shown = ReportPages.shown(page); // each metric once: a curve, or a value
        assertThat(shown.keySet()).containsExactlyInAnyOrderElementsOf(logged.keySet().stream().map(k -> "run-a \u00b7 " + k).toList());
        logged.forEach((key, steps) -> assertThat(shown.get("run-a \u00b7 " + key)).as(key).isEqualTo(steps));
        for (Curve c : ReportPages.curves(page)) {
            assertThat(c.coordinates()).as(c.metric()).isEqualTo(c.dataPoints()).isGreaterThan(2);
        }

        Path runB = tmp.resolve("run-b");
        Files.createDirectories(runB);
        try (Stream<Path> files = Files.list(runA)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Files.copy(f, runB.resolve(f.getFileName()));
            }
        }
        Path both = tmp.resolve("compare/both.html");
        CliTest.Result two = CliTest.run("report", runA.toString(), runB.toString(), "--out", both.toString());
        assertThat(two.code()).as(two.err()).isZero();
        org.w3c.dom.Document bothPage = ReportPages.parse(both);
        Map<String, List<Curve>> byKey = ReportPages.curves(bothPage).stream()
                .collect(Collectors.groupingBy(Curve::metric));
        Map<String, List<ReportPages.Value>> values = ReportPages.values(bothPage).stream()
                .collect(Collectors.groupingBy(ReportPages.Value::metric));
        assertThat(java.util.stream.Stream.concat(byKey.keySet().stream(), values.keySet().stream()).toList())
                .containsExactlyInAnyOrderElementsOf(logged.keySet());
        values.forEach((key, rows) -> assertThat(rows).as(key).extracting(ReportPages.Value::run).containsExactly("run-a", "run-b"));
        byKey.forEach((key, shared) -> {
            assertThat(shared).as(key).extracting(Curve::run).containsExactly("run-a", "run-b");
            assertThat(shared.get(0).figure()).as(key).isSameAs(shared.get(1).figure());
        });

        Path smooth = tmp.resolve("smooth.html");
        CliTest.Result smoothed = CliTest.run("report", runA.toString(), "--smoothing", "0.6", "--out", smooth.toString());
        assertThat(smoothed.code()).as(smoothed.err()).isZero();
        assertThat(Files.readString(smooth)).contains("class=\"smoothed\"").contains("data-smoothing=\"0.6\"");
        CliTest.Result tooSmooth = CliTest.run("report", runA.toString(), "--smoothing", "1", "--out", smooth.toString());
        assertThat(tooSmooth.code()).isEqualTo(1);
        assertThat(tooSmooth.err()).contains("smoothing must be in [0, 1)");

        CliTest.Result notARun = CliTest.run("report", tmp.toString());
        assertThat(notARun.code()).isEqualTo(1);
        assertThat(notARun.err()).contains("not a run directory").contains("metrics.jsonl");
    }
}
