package comlrl.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The progress line: items, rewards, evaluation folded in (no line per evaluation), speed and time left. */
class ConsoleProgressTest {
    @Test
    void evaluationsAreFoldedIntoTheBarAndTheRunEndsWithItsTime() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ConsoleProgress bar = new ConsoleProgress(new PrintStream(bytes, true, StandardCharsets.UTF_8), 40);
        for (int i = 0; i < 40; i++) {
            bar.log(i, Map.of("turn_1/reward_mean", 0.25));
            bar.log(i, Map.of("eval/turn_1/reward_mean", 0.5 + i / 100.0, "eval/turn_1/expected_return", 0.5));
            bar.advance(1);
        }
        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines).hasSize(20); // every 1/20 of the run, not once per evaluation
        assertThat(lines[0]).startsWith("[#-").contains("2/40 items").contains("reward 0.2500").contains("eval 0.5100")
                .contains("items/s").contains("ETA ");
        assertThat(lines[19]).contains("40/40 items").contains("eval 0.8900").contains("done in ");
    }

    @Test
    void aStageLineStartsWithItsLabelAndNamesItsRewardOrShowsNone() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        ConsoleProgress learned = new ConsoleProgress(out, 1, "rl", "reward (learned)");
        learned.log(0, Map.of("turn_1/reward_mean", 0.25));
        learned.advance(1);
        ConsoleProgress none = new ConsoleProgress(out, 1, "preferences", null);
        none.log(0, Map.of("turn_1/reward_mean", 0.25));
        none.advance(1);
        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n");
        assertThat(lines[0]).startsWith("rl [").contains("1/1 items | reward (learned) 0.2500 | eval - |");
        assertThat(lines[1]).startsWith("preferences [").contains("1/1 items | ").doesNotContain("reward")
                .doesNotContain("eval");
    }

    @Test
    void clockReadsMinutesAndHours() {
        assertThat(ConsoleProgress.clock(0)).isEqualTo("0:00");
        assertThat(ConsoleProgress.clock(75.4)).isEqualTo("1:15");
        assertThat(ConsoleProgress.clock(3725)).isEqualTo("1:02:05");
    }
}
