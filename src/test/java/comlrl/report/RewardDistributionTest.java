package comlrl.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

class RewardDistributionTest {
    // Range [0, 1], width 1/16 = 0.0625.
    //   target     0 → bin 0, 0.0625 → 1, 0.5 → 8, 1.0 → 15 (the last bin includes hi)
    //   comparator −3 → clamped to 0 → bin 0, 0.9375 → 15, 2 → clamped to 1 → 15, 0.4375 → 7, 0.93 → floor(14.88) = 14
    private static final double[] TARGET = {0, 0.0625, 0.5, 1.0};
    private static final double[] COMPARATOR = {-3, 0.9375, 2, 0.4375, 0.93};
    private static final RewardDistribution DIST = RewardDistribution.of(3, TARGET, COMPARATOR, 0, 1);

    private static int[] counts(int... bins) {
        int[] counts = new int[16];
        for (int b : bins) {
            counts[b]++;
        }
        return counts;
    }

    @Test
    void binsClampIntoTheRangeAndTheLastBinIncludesHi() {
        assertThat(DIST.targetCounts()).containsExactly(counts(0, 1, 8, 15));
        assertThat(DIST.comparatorCounts()).containsExactly(counts(0, 15, 15, 7, 14));
    }

    @Test
    void edgesAndCentres() {
        double[] edges = new double[17];
        for (int j = 0; j <= 16; j++) {
            edges[j] = j / 16.0;
        }
        assertThat(DIST.edges()).containsExactly(edges);
        assertThat(DIST.centres()[0]).isEqualTo(1 / 32.0);
        assertThat(DIST.centres()[15]).isEqualTo(31 / 32.0);
        assertThat(DIST.centres()).hasSize(16);
        // [−1, 3]: width 0.25; −0.75 → (0.25 / 4) · 16 = 1 → bin 1; 2.9 → 15.6 → 15; 3 → 15
        RewardDistribution wide = RewardDistribution.of(0, new double[] {-0.75, 2.9, 3}, new double[] {}, -1, 3);
        assertThat(wide.edges()[1]).isEqualTo(-0.75);
        assertThat(wide.edges()[16]).isEqualTo(3);
        assertThat(wide.targetCounts()).containsExactly(counts(1, 15, 15));
        assertThat(wide.comparatorCounts()).containsExactly(counts());
    }

    @Test
    void metricsUnderThePrefix() {
        // target mean (0 + 0.0625 + 0.5 + 1) / 4 = 0.390625; comparator (−3 + 0.9375 + 2 + 0.4375 + 0.93) / 5 = 0.261
        Map<String, Double> metrics = DIST.metrics("iter/reward_distribution");
        assertThat(metrics).containsOnlyKeys("iter/reward_distribution/current_iteration",
                "iter/reward_distribution/target_sample_count", "iter/reward_distribution/comparator_sample_count",
                "iter/reward_distribution/target_mean", "iter/reward_distribution/comparator_mean");
        assertThat(metrics.get("iter/reward_distribution/current_iteration")).isEqualTo(3.0);
        assertThat(metrics.get("iter/reward_distribution/target_sample_count")).isEqualTo(4.0);
        assertThat(metrics.get("iter/reward_distribution/comparator_sample_count")).isEqualTo(5.0);
        assertThat(metrics.get("iter/reward_distribution/target_mean")).isEqualTo(0.390625);
        assertThat(metrics.get("iter/reward_distribution/comparator_mean")).isCloseTo(0.261, within(1e-12));
        RewardDistribution empty = RewardDistribution.of(1, new double[] {}, new double[] {}, 0, 1);
        assertThat(empty.metrics("x")).containsEntry("x/target_mean", 0.0).containsEntry("x/comparator_sample_count", 0.0);
    }

    @Test
    void refusesABadRangeAndNonFiniteRewards() {
        for (double[] range : new double[][] {{1, 1}, {1, 0}, {0, Double.NaN}, {Double.NEGATIVE_INFINITY, 0}}) {
            assertThatThrownBy(() -> RewardDistribution.of(0, TARGET, COMPARATOR, range[0], range[1]))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("log_reward_distribution needs a finite reward_range [lo, hi] with hi > lo");
        }
        assertThatThrownBy(() -> RewardDistribution.of(0, TARGET, new double[] {0, Double.NaN}, 0, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the raw reward of comparator sample 1 is NaN");
    }

    @Test
    void writeJsonWritesBinsCountsAndRawRewards(@TempDir Path dir) throws Exception {
        Path file = DIST.writeJson(dir);
        assertThat(file).isEqualTo(dir.resolve("reward_distributions/iteration_0003.json"));
        Map<?, ?> doc = new ObjectMapper().readValue(file.toFile(), Map.class);
        assertThat(doc.get("iteration")).isEqualTo(3);
        assertThat(doc.get("reward_range")).isEqualTo(List.of(0.0, 1.0));
        List<?> edges = (List<?>) doc.get("bin_edges");
        assertThat(edges).hasSize(17);
        assertThat(List.of(edges.get(0), edges.get(1), edges.get(16))).isEqualTo(List.of(0.0, 0.0625, 1.0));
        assertThat((List<?>) doc.get("bin_centres")).hasSize(16).first().isEqualTo(0.03125);
        assertThat((List<?>) doc.get("target_counts")).hasSize(16).element(8).isEqualTo(1);
        assertThat((List<?>) doc.get("comparator_counts")).element(15).isEqualTo(2);
        assertThat(doc.get("target_rewards")).isEqualTo(List.of(0.0, 0.0625, 0.5, 1.0));
        assertThat(doc.get("comparator_rewards")).isEqualTo(List.of(-3.0, 0.9375, 2.0, 0.4375, 0.93));
        assertThat(doc.get("target_mean")).isEqualTo(0.390625);
    }

    private static Document parse(String svg) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new InputSource(new StringReader(svg)));
    }

    private static List<Element> elements(Document doc, String tag) {
        NodeList nodes = doc.getElementsByTagName(tag);
        List<Element> out = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++) {
            out.add((Element) nodes.item(i));
        }
        return out;
    }

    // Plot geometry: bin width 232 / 16 = 14.5, baseline y = 14 + 62 = 76; the tallest count (2, comparator bin 15)
    // is 62 px, so one sample is 31 px.

    @Test
    void lineSvgIsWellFormedWithOnePolylinePerSideAndALegend() throws Exception {
        Document svg = parse(DIST.lineSvg());
        Element root = svg.getDocumentElement();
        assertThat(root.getTagName()).isEqualTo("svg");
        assertThat(root.getAttribute("width")).isEqualTo("240");
        assertThat(root.getAttribute("height")).isEqualTo("80");
        List<Element> lines = elements(svg, "polyline");
        assertThat(lines).extracting(e -> e.getAttribute("stroke")).containsExactly("#1f77b4", "#ff7f0e");
        String[] target = lines.get(0).getAttribute("points").split(" ");
        String[] comparator = lines.get(1).getAttribute("points").split(" ");
        assertThat(target).hasSize(16);
        assertThat(target[0]).isEqualTo("11.25,45.00"); // bin 0 centre 4 + 7.25, count 1 → 76 − 31
        assertThat(target[2]).isEqualTo("40.25,76.00"); // bin 2 empty: on the baseline
        assertThat(comparator[15]).isEqualTo("228.75,14.00"); // count 2: the top of the plot
        assertThat(elements(svg, "text")).extracting(Element::getTextContent).containsExactly("target", "comparator");
    }

    @Test
    void barSvgIsWellFormedWithTwoBarsPerBin() throws Exception {
        Document svg = parse(DIST.barSvg());
        assertThat(svg.getDocumentElement().getAttribute("width")).isEqualTo("240");
        List<Element> bars = elements(svg, "rect").stream().filter(e -> e.getAttribute("class").equals("bar")).toList();
        assertThat(bars).hasSize(32); // bin b: target bar at 2b, comparator bar at 2b + 1
        Element target15 = bars.get(30);
        Element comparator15 = bars.get(31);
        assertThat(target15.getAttribute("x")).isEqualTo("221.50"); // 4 + 15 · 14.5
        assertThat(target15.getAttribute("height")).isEqualTo("31.00");
        assertThat(target15.getAttribute("y")).isEqualTo("45.00");
        assertThat(target15.getAttribute("fill")).isEqualTo("#1f77b4");
        assertThat(comparator15.getAttribute("x")).isEqualTo("228.75"); // + 14.5 / 2
        assertThat(comparator15.getAttribute("height")).isEqualTo("62.00");
        assertThat(comparator15.getAttribute("fill")).isEqualTo("#ff7f0e");
        assertThat(bars.get(4).getAttribute("height")).isEqualTo("0.00"); // target bin 2
        assertThat(elements(svg, "text")).extracting(Element::getTextContent).containsExactly("target", "comparator");
        // with no samples at all the plot is still well-formed (scale by max(1, max count))
        parse(RewardDistribution.of(0, new double[] {}, new double[] {}, 0, 1).barSvg());
    }

    @Test
    void writeSvgsWritesBothPlots(@TempDir Path dir) throws Exception {
        Path[] files = DIST.writeSvgs(dir);
        assertThat(files).containsExactly(dir.resolve("reward_distributions/iteration_0003_line.svg"),
                dir.resolve("reward_distributions/iteration_0003_bar.svg"));
        assertThat(Files.readString(files[0])).isEqualTo(DIST.lineSvg());
        assertThat(Files.readString(files[1])).isEqualTo(DIST.barSvg());
    }
}
