package comlrl.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's example figures: its cells are what {@code docs/example-figures.json} records (default
 * run), and each algorithm's main example, trained again, stays inside the recorded spread (slow).
 */
class ExampleFiguresTest {
    private static JsonNode recorded() throws Exception {
        return ExampleFigures.JSON.readTree(ExampleFigures.root().resolve(ExampleFigures.JSON_FILE).toFile());
    }

    /** A hand-edited README cell (or a figure no cell quotes) fails here, without training anything. */
    @Test
    void readmeCellsAreTheRecordedFigures() throws Exception {
        String readme = Files.readString(ExampleFigures.root().resolve(ExampleFigures.README));
        JsonNode figures = recorded();
        assertThat(ExampleFigures.regenerate(readme, figures))
                .as("README.md's figure cells differ from docs/example-figures.json: run bin/comlrl figures --readme-only")
                .isEqualTo(readme);
        List<String> ids = new ArrayList<>();
        figures.get("figures").forEach(f -> ids.add(f.get("id").asText()));
        assertThat(ids).containsExactlyElementsOf(ExampleFigures.FIGURES.stream().map(ExampleFigures.Figure::id).toList());
        figures.get("figures").forEach(f -> assertThat(f.get("runs")).as(f.get("id").asText()).hasSize(3));
    }

    @Test
    void aCellIsTheMeanBeforeAndAfterWithTheRangeOfAfter() throws Exception {
        // seeds ending at 0.46, 0.93, 0.83 from 0.39, 0.34, 0.39: means 0.3733 and 0.74
        JsonNode figures = ExampleFigures.JSON.readTree("""
                {"figures": [{"id": "madpo", "before": {"mean": 0.3733, "min": 0.34, "max": 0.39},
                              "after": {"mean": 0.74, "min": 0.46, "max": 0.93}},
                             {"id": "iac", "before": {"mean": 0.3930, "min": 0.393, "max": 0.393},
                              "after": {"mean": 0.9999, "min": 0.9998, "max": 1.0}}]}""");
        String readme = "| a | <!-- fig:madpo -->old<!-- /fig --> |\n| b | <!-- fig:iac -->0.1 → 0.2<!-- /fig --> |\n";
        assertThat(ExampleFigures.regenerate(readme, figures)).isEqualTo(
                "| a | <!-- fig:madpo -->0.37 → 0.74 (after 0.46–0.93)<!-- /fig --> |\n"
                        + "| b | <!-- fig:iac -->0.39 → 1.00 (every seed 1.00)<!-- /fig --> |\n");
        assertThatThrownBy(() -> ExampleFigures.regenerate(readme + "<!-- fig:maac -->x<!-- /fig -->", figures))
                .hasMessageContaining("fig:maac");
        assertThatThrownBy(() -> ExampleFigures.regenerate("| a | <!-- fig:madpo -->old<!-- /fig --> |", figures))
                .hasMessageContaining("[iac]");
    }

    /**
     * Each algorithm's main example (not the variants, to keep this under about 6 minutes on 2 cores)
     * trained once with seed 42, as {@code bin/comlrl figures} trains it (same threads and kernels):
     * the evaluation reward before and after training lies in the recorded range over seeds 42, 1 and 2.
     * The runs repeat bit for bit on one machine and, with the pinned AVX2 kernels, on machines of the
     * same kind; seed 42 being one of the recorded seeds, a result outside the range means the example's
     * behaviour changed and the figures are stale ({@code bin/comlrl figures} records them again).
     */
    @Test
    @Tag("slow")
    void eachMainExampleStaysInsideItsRecordedSpread(@TempDir Path work) throws Exception {
        SoftAssertions softly = new SoftAssertions();
        for (JsonNode figure : recorded().get("figures")) {
            ExampleFigures.Figure f = ExampleFigures.FIGURES.stream()
                    .filter(x -> x.id().equals(figure.get("id").asText())).findFirst().orElseThrow();
            if (!f.main()) {
                continue;
            }
            ExampleFigures.Outcome o = ExampleFigures.train(ExampleFigures.root(), f, 42, work, 1);
            JsonNode before = figure.get("before");
            JsonNode after = figure.get("after");
            softly.assertThat(o.before()).as("%s: eval reward before training (recorded range)", f.id())
                    .isBetween(before.get("min").asDouble(), before.get("max").asDouble());
            softly.assertThat(o.after()).as("%s: eval reward after training (recorded range over seeds %s)", f.id(),
                    figure.get("runs").findValuesAsText("seed"))
                    .isBetween(after.get("min").asDouble(), after.get("max").asDouble());
        }
        softly.assertAll();
    }
}
