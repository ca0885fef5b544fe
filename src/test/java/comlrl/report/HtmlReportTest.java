package comlrl.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.report.ReportPages.Curve;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;

class HtmlReportTest {

    /**
     * A two-turn run: training events at steps 8 and 16 (agents, losses, a KL), evaluation repeated
     * three times at step 0 and at step 16, a reward-model event at step 0 only, one NaN logged as null.
     */
    private static Path twoTurnRun(Path dir, String configExtra) throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("metrics.jsonl"), String.join("\n",
                "{\"env_step\":0,\"eval/turn_1/reward_mean\":0.25,\"eval/turn_2/reward_mean\":0.5}",
                "{\"env_step\":0,\"eval/turn_1/reward_mean\":0.35,\"eval/turn_2/reward_mean\":0.5}",
                "{\"env_step\":0,\"eval/turn_1/reward_mean\":0.30,\"eval/turn_2/reward_mean\":0.5}",
                "{\"env_step\":0,\"reward_model/loss\":0.69,\"reward_model/accuracy\":0.5}",
                "{\"env_step\":8,\"turn_1/reward_mean\":0.4,\"turn_2/reward_mean\":0.45,\"turn_1/policy_loss\":-0.2,"
                        + "\"turn_1/reference_kl_mean\":0.01,\"agent_0/turn_1/policy_loss\":-0.1,\"agent_1/turn_1/policy_loss\":-0.3}",
                "{\"env_step\":16,\"turn_1/reward_mean\":0.6,\"turn_2/reward_mean\":0.65,\"turn_1/policy_loss\":null,"
                        + "\"turn_1/reference_kl_mean\":0.02,\"agent_0/turn_1/policy_loss\":0.1,\"agent_1/turn_1/policy_loss\":0.2}",
                "{\"env_step\":16,\"eval/turn_1/reward_mean\":0.8,\"eval/turn_2/reward_mean\":0.9}",
                "{\"env_step\":16,\"eval/turn_1/reward_mean\":0.9,\"eval/turn_2/reward_mean\":0.9}",
                "{\"env_step\":16,\"eval/turn_1/reward_mean\":0.7,\"eval/turn_2/reward_mean\":0.9}", ""));
        Files.writeString(dir.resolve("config.json"), "{\"algorithm\": \"magrpo\", \"agent_model\": \"builtin:tiny\", "
                + "\"num_agents\": 2, \"args\": {\"num_turns\": 2, \"seed\": 42}" + configExtra
                + ", \"provenance\": {\"git_revision\": \"0123456789abcdef\", \"seed\": 42}}");
        return dir;
    }

    private static void assertOneCurvePerLoggedMetric(Path html, Path run) throws Exception {
        Map<String, Integer> logged = ReportPages.loggedSteps(run.resolve("metrics.jsonl"));
        List<Curve> curves = ReportPages.curves(ReportPages.parse(html));
        assertThat(curves).extracting(Curve::metric).containsExactlyInAnyOrderElementsOf(logged.keySet());
        for (Curve c : curves) {
            assertThat(c.dataPoints()).as(c.metric()).isEqualTo(logged.get(c.metric()));
            assertThat(c.coordinates()).as(c.metric()).isEqualTo(c.dataPoints());
        }
    }

    @Test
    void everyLoggedMetricIsOneCurveWithOnePointPerStep(@TempDir Path tmp) throws Exception {
        Path run = twoTurnRun(tmp.resolve("run-a"), "");
        Path html = tmp.resolve("out/report.html");
        HtmlReport.write(List.of(run), html);
        assertOneCurvePerLoggedMetric(html, run);
        List<Curve> curves = ReportPages.curves(ReportPages.parse(html));
        Map<String, Curve> byKey = curves.stream().collect(Collectors.toMap(Curve::metric, c -> c));
        // repeated evaluation: one point per step (their mean), and a band for their range
        assertThat(byKey.get("eval/turn_1/reward_mean").dataPoints()).isEqualTo(2);
        assertThat(byKey.get("turn_1/policy_loss").dataPoints()).as("the null is left out").isEqualTo(1);
        // turns share the headline charts; agents share one chart per key, told apart by dash
        assertThat(byKey.get("turn_1/reward_mean").figure()).isSameAs(byKey.get("turn_2/reward_mean").figure());
        assertThat(byKey.get("eval/turn_1/reward_mean").figure()).isSameAs(byKey.get("eval/turn_2/reward_mean").figure());
        assertThat(byKey.get("agent_0/turn_1/policy_loss").figure()).isSameAs(byKey.get("agent_1/turn_1/policy_loss").figure());
        assertThat(byKey.get("turn_1/policy_loss").figure()).isNotSameAs(byKey.get("agent_0/turn_1/policy_loss").figure());
        String text = Files.readString(html);
        assertThat(text).contains("1 non-finite value not drawn").contains("band: their range")
                .contains("Training reward").contains("Evaluation reward").contains("Reward model")
                .contains("0.30 \u2192 0.80").contains("git 0123456789").doesNotContain("<script");
    }

    @Test
    void twoRunsShareEachChartOneColourPerRun(@TempDir Path tmp) throws Exception {
        // two directories of the same name: the report names them by their parents
        Path a = twoTurnRun(tmp.resolve("seed-1/run"), "");
        Path b = twoTurnRun(tmp.resolve("seed-2/run"), ", \"critic_model\": \"builtin:tiny\"");
        Files.writeString(b.resolve("metrics.jsonl"), "{\"env_step\":24,\"turn_1/value_loss\":0.5}\n",
                java.nio.file.StandardOpenOption.APPEND);
        Path html = tmp.resolve("report.html");
        HtmlReport.write(List.of(a, b), html);
        List<Curve> curves = ReportPages.curves(ReportPages.parse(html));
        Map<String, List<Curve>> byKey = curves.stream().collect(Collectors.groupingBy(Curve::metric));
        for (String key : ReportPages.loggedSteps(a.resolve("metrics.jsonl")).keySet()) {
            List<Curve> shared = byKey.get(key);
            assertThat(shared).as(key).hasSize(2);
            assertThat(shared).extracting(Curve::run).containsExactly("seed-1/run", "seed-2/run");
            assertThat(shared.get(0).figure()).isSameAs(shared.get(1).figure());
            assertThat(shared.get(0).stroke()).isNotEqualTo(shared.get(1).stroke());
        }
        assertThat(byKey.get("turn_1/value_loss")).singleElement().extracting(Curve::run).isEqualTo("seed-2/run");
        String text = Files.readString(html);
        assertThat(text).contains("seed-1/run vs seed-2/run").contains("Settings that differ").contains("critics: builtin:tiny");
    }

    @Test
    void textFromConfigAndNamesIsEscaped(@TempDir Path tmp) throws Exception {
        String nasty = "</td></pre><script>alert('x')</script> & \"quoted\" \u0001 \uD800";
        Path run = twoTurnRun(tmp.resolve("a<b>&c"), ", \"formatters\": [\"" + nasty.replace("\\", "\\\\").replace("\"", "\\\"")
                .replace("\u0001", "\\u0001").replace("\uD800", "\\ud800") + "\"], \"<key>\": 1");
        Path html = tmp.resolve("report.html");
        HtmlReport.write(List.of(run), html);
        Document page = ReportPages.parse(html); // well-formed XML whatever the config holds
        assertThat(page.getElementsByTagName("script").getLength()).isZero();
        assertThat(texts(page, "td")).contains("</td></pre><script>alert('x')</script> & \"quoted\" \uFFFD \uFFFD", "<key>");
        assertThat(texts(page, "h1")).containsExactly("a<b>&c");
        assertThat(ReportPages.curves(page)).extracting(Curve::run).containsOnly("a<b>&c");
    }

    private static List<String> texts(Document page, String tag) {
        NodeList nodes = page.getElementsByTagName(tag);
        return java.util.stream.IntStream.range(0, nodes.getLength()).mapToObj(i -> nodes.item(i).getTextContent()).toList();
    }

    @Test
    void aHalfWrittenLineIsSkippedAndADirectoryWithoutMetricsIsRefused(@TempDir Path tmp) throws Exception {
        Path run = twoTurnRun(tmp.resolve("run"), "");
        Files.writeString(run.resolve("metrics.jsonl"), "{\"env_step\":24,\"turn_1/rew", java.nio.file.StandardOpenOption.APPEND);
        RunReport report = RunReport.read(run);
        assertThat(report.unreadableLines()).isEqualTo(1);
        assertThat(report.metrics().get("turn_1/reward_mean").points()).hasSize(2);
        assertThat(HtmlReport.render(List.of(report))).contains("1 unreadable line of metrics.jsonl skipped");
        assertThatThrownBy(() -> HtmlReport.write(List.of(tmp), tmp.resolve("r.html")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(tmp.toString()).hasMessageContaining("metrics.jsonl");
    }

    @Test
    void eventsOfOneStepAverageIntoOnePointThatKeepsTheirRange(@TempDir Path tmp) throws Exception {
        Series eval = RunReport.read(twoTurnRun(tmp.resolve("run"), "")).metrics().get("eval/turn_1/reward_mean");
        // step 0: (0.25 + 0.35 + 0.30) / 3 = 0.30, range 0.25..0.35; step 16: (0.8 + 0.9 + 0.7) / 3 = 0.8
        assertThat(eval.points()).hasSize(2);
        Series.Point first = eval.points().get(0);
        assertThat(first.step()).isZero();
        assertThat(first.mean()).isCloseTo(0.30, org.assertj.core.api.Assertions.within(1e-12));
        assertThat(first.min()).isEqualTo(0.25);
        assertThat(first.max()).isEqualTo(0.35);
        assertThat(first.count()).isEqualTo(3);
        assertThat(eval.points().get(1).mean()).isCloseTo(0.8, org.assertj.core.api.Assertions.within(1e-12));
    }

    @Test
    void ticksAreOneTwoOrFiveTimesAPowerOfTen() {
        // [0.4, 0.97], 5 ticks: range 0.57 -> nice 1; step 1/4 = 0.25 -> 0.2; widened to [0.4, 1.0]
        Ticks y = Ticks.nice(0.4, 0.97, 5, false);
        assertThat(y.values()).containsExactly(0.4, 0.6000000000000001, 0.8, 1.0);
        assertThat(y.values().stream().map(y::label).toList()).containsExactly("0.4", "0.6", "0.8", "1.0");
        // env steps [0, 512], 8 ticks: range 1000, step 1000/7 = 142.9 -> 100; the axis ends at 512
        Ticks x = Ticks.within(0, 512, 8, true);
        assertThat(x.hi()).isEqualTo(512);
        assertThat(x.values()).containsExactly(0.0, 100.0, 200.0, 300.0, 400.0, 500.0);
        // [0, 24000], 5 ticks: range 50000, step 12500 -> 10000; thousands as k
        Ticks big = Ticks.within(0, 24000, 5, true);
        assertThat(big.values().stream().map(big::label).toList()).containsExactly("0", "10k", "20k");
        // one value: a range around it
        assertThat(Ticks.nice(2, 2, 5, false).values()).contains(2.0);
        assertThat(Ticks.format(0.123456)).isEqualTo("0.1235");
        assertThat(Ticks.format(960)).isEqualTo("960");
    }
}
