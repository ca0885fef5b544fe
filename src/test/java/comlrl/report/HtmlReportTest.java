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
     * A two-turn run: training events at steps 8, 16 and 24 (agents, losses, a KL, a clip fraction
     * constant at 0.25), evaluation repeated three times at step 0 and at step 16, a reward-model event
     * at step 0 only, one NaN logged as null.
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
                "{\"env_step\":24,\"turn_1/reward_mean\":0.7,\"turn_2/reward_mean\":0.75,\"turn_1/policy_loss\":0.3,"
                        + "\"turn_1/reference_kl_mean\":0.03,\"agent_0/turn_1/policy_loss\":0.2,\"agent_1/turn_1/policy_loss\":0.1}",
                "{\"env_step\":8,\"turn_1/clip_fraction\":0.25}", "{\"env_step\":16,\"turn_1/clip_fraction\":0.25}",
                "{\"env_step\":24,\"turn_1/clip_fraction\":0.25}",
                "{\"env_step\":16,\"eval/turn_1/reward_mean\":0.8,\"eval/turn_2/reward_mean\":0.9}",
                "{\"env_step\":16,\"eval/turn_1/reward_mean\":0.9,\"eval/turn_2/reward_mean\":0.9}",
                "{\"env_step\":16,\"eval/turn_1/reward_mean\":0.7,\"eval/turn_2/reward_mean\":0.9}", ""));
        Files.writeString(dir.resolve("config.json"), "{\"algorithm\": \"magrpo\", \"agent_model\": \"builtin:tiny\", "
                + "\"num_agents\": 2, \"args\": {\"num_turns\": 2, \"seed\": 42}" + configExtra
                + ", \"provenance\": {\"git_revision\": \"0123456789abcdef\", \"seed\": 42}}");
        return dir;
    }

    /** Every logged metric shown once, as a curve or as a value, with one point per step it was logged at. */
    private static void assertEachLoggedMetricShownOnce(Path html, Path run) throws Exception {
        Map<String, Integer> logged = ReportPages.loggedSteps(run.resolve("metrics.jsonl"));
        Document page = ReportPages.parse(html);
        Map<String, Integer> shown = ReportPages.shown(page);
        String name = run.getFileName().toString();
        assertThat(shown.keySet()).containsExactlyInAnyOrderElementsOf(logged.keySet().stream().map(k -> name + " \u00b7 " + k).toList());
        logged.forEach((key, steps) -> assertThat(shown.get(name + " \u00b7 " + key)).as(key).isEqualTo(steps));
        for (Curve c : ReportPages.curves(page)) {
            assertThat(c.coordinates()).as(c.metric()).isEqualTo(c.dataPoints());
        }
    }

    @Test
    void everyLoggedMetricIsOneCurveWithOnePointPerStepOrAValue(@TempDir Path tmp) throws Exception {
        Path run = twoTurnRun(tmp.resolve("run-a"), "");
        Path html = tmp.resolve("out/report.html");
        HtmlReport.write(List.of(run), html);
        assertEachLoggedMetricShownOnce(html, run);
        Document page = ReportPages.parse(html);
        Map<String, Curve> byKey = ReportPages.curves(page).stream().collect(Collectors.toMap(Curve::metric, c -> c));
        Map<String, ReportPages.Value> values = ReportPages.values(page).stream()
                .collect(Collectors.toMap(ReportPages.Value::metric, v -> v));
        // three or more points that vary: curves, one point per step
        assertThat(byKey).containsOnlyKeys("turn_1/reward_mean", "turn_2/reward_mean", "turn_1/reference_kl_mean",
                "agent_0/turn_1/policy_loss", "agent_1/turn_1/policy_loss");
        assertThat(byKey.get("turn_1/reward_mean").dataPoints()).isEqualTo(3);
        // constant (three points of 0.25), two points (evaluation: the mean of each step's three events, first
        // then last: (0.25 + 0.35 + 0.30) / 3 = 0.3, (0.8 + 0.9 + 0.7) / 3 = 0.8), one point: values
        assertThat(values.get("turn_1/clip_fraction").text()).isEqualTo("0.25");
        assertThat(values.get("turn_1/clip_fraction").dataPoints()).isEqualTo(3);
        assertThat(values.get("eval/turn_1/reward_mean").text()).isEqualTo("0.3 \u2192 0.8");
        assertThat(values.get("eval/turn_2/reward_mean").text()).isEqualTo("0.5 \u2192 0.9");
        assertThat(values.get("reward_model/loss").text()).isEqualTo("0.69");
        assertThat(values.get("turn_1/policy_loss").text()).as("the null is left out").isEqualTo("-0.2 \u2192 0.3");
        // turns share the headline chart; agents share one chart per key, told apart by dash
        assertThat(byKey.get("turn_1/reward_mean").figure()).isSameAs(byKey.get("turn_2/reward_mean").figure());
        assertThat(byKey.get("agent_0/turn_1/policy_loss").figure()).isSameAs(byKey.get("agent_1/turn_1/policy_loss").figure());
        String text = Files.readString(html);
        assertThat(text).contains("steps 8 \u2192 24; 1 non-finite").contains("steps 0 \u2192 16; mean of 6 events")
                .contains("steps 8\u201324 (3 points)")
                .contains("Training reward").contains("Evaluation reward").contains("Reward model")
                .contains("0.30 \u2192 0.80").contains("git 0123456789").doesNotContain("<script");
        // no chart holds a value: 5 curves on 3 charts (training reward, KL, per-agent policy loss)
        assertThat(page.getElementsByTagName("figure").getLength()).isEqualTo(3);
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
        Document page = ReportPages.parse(html);
        Map<String, List<Curve>> byKey = ReportPages.curves(page).stream().collect(Collectors.groupingBy(Curve::metric));
        Map<String, List<ReportPages.Value>> values = ReportPages.values(page).stream()
                .collect(Collectors.groupingBy(ReportPages.Value::metric));
        assertThat(byKey).hasSize(5);
        for (String key : ReportPages.loggedSteps(a.resolve("metrics.jsonl")).keySet()) {
            if (values.containsKey(key)) {
                assertThat(values.get(key)).as(key).extracting(ReportPages.Value::run).containsExactly("seed-1/run", "seed-2/run");
                assertThat(byKey).doesNotContainKey(key);
                continue;
            }
            List<Curve> shared = byKey.get(key);
            assertThat(shared).as(key).hasSize(2);
            assertThat(shared).extracting(Curve::run).containsExactly("seed-1/run", "seed-2/run");
            assertThat(shared.get(0).figure()).isSameAs(shared.get(1).figure());
            assertThat(shared.get(0).stroke()).isNotEqualTo(shared.get(1).stroke());
        }
        assertThat(values.get("turn_1/value_loss")).singleElement().extracting(ReportPages.Value::run).isEqualTo("seed-2/run");
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
        assertThat(report.metrics().get("turn_1/reward_mean").points()).hasSize(3);
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
    void wallTimeAndThroughputComeFromRunJson(@TempDir Path tmp) throws Exception {
        Path run = twoTurnRun(tmp.resolve("run"), "");
        assertThat(HtmlReport.timing(RunReport.read(run))).as("no run.json: no times").isEmpty();
        // started at 1000 s, finished at 1185.5 s: 185.5 s = 3 min 06 s (rounded); 120 s training over
        // 24 env steps (the last logged step) = 5 s per step; 48 items in 120 s = 0.4 items/s
        new RunTimes(1000.0, 1185.5, 120.0, 48).write(run);
        RunReport report = RunReport.read(run);
        assertThat(report.times()).isEqualTo(new RunTimes(1000.0, 1185.5, 120.0, 48));
        assertThat(HtmlReport.timing(report)).containsExactly("3 min 06 s", "training 2 min 00 s", "5 s / env step", "0.4 items/s");
        assertThat(HtmlReport.render(List.of(report))).contains("3 min 06 s<br/>training 2 min 00 s");
        // an unknown item count gives no items/s
        new RunTimes(0.0, 42.5, 12.0, -1).write(run);
        assertThat(HtmlReport.timing(RunReport.read(run))).containsExactly("42.5 s", "training 12.0 s", "0.5 s / env step");
        assertThat(HtmlReport.duration(2 * 3600 + 7 * 60 + 10)).isEqualTo("2 h 07 min");
    }

    @Test
    void smoothingIsTensorBoardsDebiasedEmaWithTheRawCurveKeptFaintly(@TempDir Path tmp) throws Exception {
        Series.Builder b = new Series.Builder("k");
        b.add(0, 0);
        b.add(1, 1);
        b.add(2, 1);
        // w = 0.5: e = 0, 0.5, 0.75 over debias 1 - 0.5^(i+1) = 0.5, 0.75, 0.875 -> 0, 2/3, 6/7
        assertThat(b.build().ema(0.5)).containsExactly(new double[] {0, 2.0 / 3, 6.0 / 7}, org.assertj.core.api.Assertions.within(1e-15));
        assertThat(b.build().ema(0)).containsExactly(0, 1, 1);
        assertThatThrownBy(() -> b.build().ema(1)).isInstanceOf(IllegalArgumentException.class);

        RunReport run = RunReport.read(twoTurnRun(tmp.resolve("run"), ""));
        String plain = HtmlReport.render(List.of(run));
        assertThat(plain).doesNotContain("class=\"smoothed\"").doesNotContain("stroke-opacity");
        Path html = tmp.resolve("smooth.html");
        HtmlReport.write(List.of(run.dir()), html, 0.5);
        String text = Files.readString(html);
        // turn_1/reward_mean 0.4, 0.6, 0.7: e = 0.2, 0.4, 0.55 over 0.5, 0.75, 0.875 -> 0.4, 0.5333, 0.6286
        assertThat(text).contains("run \u00b7 turn_1/reward_mean, smoothed (EMA weight 0.5): last 0.6286")
                .contains("smoothed: EMA weight 0.5 (faint: raw)");
        Document page = ReportPages.parse(html);
        assertEachLoggedMetricShownOnce(html, run.dir()); // the raw curves are all still there
        NodeList lines = page.getElementsByTagName("polyline");
        int smoothed = 0;
        for (int i = 0; i < lines.getLength(); i++) {
            org.w3c.dom.Element e = (org.w3c.dom.Element) lines.item(i);
            if (e.getAttribute("class").equals("smoothed")) {
                smoothed++;
                assertThat(e.getAttribute("data-smoothing")).isEqualTo("0.5");
                assertThat(e.getAttribute("points").split(" ")).hasSize(3);
            } else {
                assertThat(e.getAttribute("stroke-opacity")).as("raw, faint").isEqualTo("0.3");
            }
        }
        assertThat(smoothed).as("one per curve").isEqualTo(5);
        assertThatThrownBy(() -> HtmlReport.render(List.of(run), 1.0)).hasMessageContaining("[0, 1)");
    }

    @Test
    void iterativeRunsMarkWhereEachIterationAfterTheFirstStarts(@TempDir Path tmp) throws Exception {
        Path run = twoTurnRun(tmp.resolve("run"), "");
        assertThat(RunReport.read(run).iterationStarts()).isEmpty();
        assertThat(HtmlReport.render(List.of(RunReport.read(run)))).doesNotContain("class=\"iteration\"");
        // iterations 1, 2, 3 end at steps 8, 16, 24: iteration 2 starts at 8, iteration 3 at 16
        Files.writeString(run.resolve("metrics.jsonl"), String.join("\n", "{\"env_step\":8,\"iter/current_iteration\":1.0}",
                "{\"env_step\":16,\"iter/current_iteration\":2.0}", "{\"env_step\":24,\"iter/current_iteration\":3.0}", ""),
                java.nio.file.StandardOpenOption.APPEND);
        RunReport report = RunReport.read(run);
        assertThat(report.iterationStarts()).containsExactly(new RunReport.IterationStart(8, 2), new RunReport.IterationStart(16, 3));
        Path html = tmp.resolve("r.html");
        HtmlReport.write(List.of(run), html);
        Document page = ReportPages.parse(html);
        org.w3c.dom.Element figure = ReportPages.curves(page).stream().filter(c -> c.metric().equals("turn_1/reward_mean"))
                .findFirst().orElseThrow().figure();
        NodeList lines = figure.getElementsByTagName("line");
        List<String> markers = new java.util.ArrayList<>();
        for (int i = 0; i < lines.getLength(); i++) {
            org.w3c.dom.Element e = (org.w3c.dom.Element) lines.item(i);
            if (e.getAttribute("class").equals("iteration")) {
                assertThat(e.getAttribute("x1")).isEqualTo(e.getAttribute("x2"));
                markers.add(e.getAttribute("data-iteration") + "@" + e.getAttribute("x1"));
            }
        }
        // the headline chart: x from 56 to 620 - 16 = 604 for steps 0..24: 56 + 8/24 * 548 = 238.7, 56 + 16/24 * 548 = 421.3
        // (where the curve's points at steps 8 and 16 are)
        assertThat(markers).containsExactly("2@238.7", "3@421.3");
        assertThat(Files.readString(html)).contains("run: iteration 2 starts at step 8").contains(">iter 3</text>");
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

    @Test
    void theFirstAndLastEvaluationsSamplesAreShownWithPromptsCompletionsAndRewards(@TempDir Path tmp) throws Exception {
        Path run = twoTurnRun(tmp.resolve("run-s"), "");
        String longPrompt = "x".repeat(SampleTable.PROMPT_CHARS) + " <task & end>";
        Files.writeString(run.resolve("eval_samples.jsonl"), String.join("\n",
                "{\"env_step\":0,\"samples\":[{\"item\":0,\"prompts\":[[\"" + longPrompt + "\",\"p0 t2\"],[\"q0\",\"q0 t2\"]],"
                        + "\"completions\":[[\"early a\",\"early a2\"],[\"early <b>\",\"early b2\"]],\"rewards\":[0.125,0.5]}]}",
                "{\"env_step\":8,\"samples\":[{\"item\":0,\"prompts\":[[\"p\",\"p\"],[\"q\",\"q\"]],"
                        + "\"completions\":[[\"middle\",\"middle\"],[\"middle\",\"middle\"]],\"rewards\":[0.2,0.2]}]}",
                "{\"env_step\":16,\"samples\":[{\"item\":0,\"prompts\":[[\"p\",\"p\"],[\"q\",\"q\"]],"
                        + "\"completions\":[[\"late a\",\"late a2\"],[\"late b\",\"late b2\"]],\"rewards\":[0.875,1.0]}]}",
                "{\"env_step\":24,\"samp", ""));
        Path html = tmp.resolve("out/report.html");
        HtmlReport.write(List.of(run), html);
        Document page = ReportPages.parse(html); // still well-formed XHTML with the texts escaped
        NodeList tables = page.getElementsByTagName("table");
        List<String> steps = new java.util.ArrayList<>();
        for (int k = 0; k < tables.getLength(); k++) {
            org.w3c.dom.Element t = (org.w3c.dom.Element) tables.item(k);
            if (t.getAttribute("class").equals("samples")) {
                steps.add(t.getAttribute("data-env-step"));
            }
        }
        // the first and the last readable evaluation (the half-written line skipped), not the middle one
        assertThat(steps).containsExactly("0", "16");
        String text = Files.readString(html);
        assertThat(text).contains("early &lt;b&gt;").contains("late b2").doesNotContain(">middle<")
                .contains("\u2026" + "x".repeat(SampleTable.PROMPT_CHARS - " <task & end>".length()) + " &lt;task &amp; end&gt;")
                .contains("<td rowspan=\"2\" class=\"reward\">0.1250</td>").contains(">0.8750</td>")
                .contains("<a href=\"#samples\">Samples</a>");
        HtmlReport.write(List.of(twoTurnRun(tmp.resolve("run-t"), "")), tmp.resolve("plain.html"));
        assertThat(Files.readString(tmp.resolve("plain.html"))).doesNotContain("id=\"samples\"");
    }
}
