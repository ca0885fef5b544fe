package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Hand-worked values of every level of {@link WritingReward} (see its class comment for the formulas). */
class WritingRewardTest {
    private static final double EPS = 1e-12; // a few float64 operations on exact inputs
    private static final WritingReward TLDR = WritingReward.forTask("tldr");
    private static final WritingReward ARXIV = WritingReward.forTask("arxiv");

    /** 8 tokens, 35 code points, 8 distinct words; content words (function words removed): 6. */
    private static final String SUMMARY = "cats sleep all day long in warm sun";

    @Test
    void levelOneNeedsBothTextsWithinTheTokenRange() {
        assertThat(TLDR.breakdown("one two three four five six seven", SUMMARY).total()).isZero(); // 7 tokens
        String long257 = String.join(" ", Collections.nCopies(257, "w"));
        assertThat(TLDR.breakdown(SUMMARY, long257).total()).isZero();
        // equal texts: level 1 (0.5), then r = 1 lies below the TL;DR ramp's 1.1: stop
        WritingReward.Breakdown same = TLDR.breakdown(SUMMARY, SUMMARY);
        assertThat(same.total()).isEqualTo(0.5);
        assertThat(same.levelsPassed()).isEqualTo(1);
        assertThat(same.lengthRatio()).isEqualTo(1.0);
    }

    @Test
    void levelThreeStopsWhenTheElaborationRepeatsTheSummarysWords() {
        // c2 = c1 twice: 71 / 35 code points, r = 2.0286 in [1.6, 3.2] → 1.0; u = 8 / 8 = 1 < 1.3 → stop
        WritingReward.Breakdown b = TLDR.breakdown(SUMMARY, SUMMARY + " " + SUMMARY);
        assertThat(b.lengthRatio()).isCloseTo(71.0 / 35, within(EPS));
        assertThat(b.coordination()).isEqualTo(1.0);
        assertThat(b.uniqueWordsRatio()).isEqualTo(1.0);
        assertThat(b.total()).isEqualTo(1.5);
        assertThat(b.levelsPassed()).isEqualTo(2);
    }

    @Test
    void allFourLevelsOfATldrPair() {
        // 13 tokens, 75 code points, 13 distinct words
        String c2 = "however cats also chase mice for example and finally they rest near windows";
        WritingReward.Breakdown b = TLDR.breakdown(SUMMARY, c2);
        // level 2: r = 75 / 35 = 2.142857 in [1.6, 3.2] → 1
        assertThat(b.lengthRatio()).isCloseTo(75.0 / 35, within(EPS));
        assertThat(b.coordination()).isEqualTo(1.0);
        // level 3: u = 13 / 8 = 1.625 in [1.3, 2.0) → 0.5 · (1.625 − 1.3) / 0.7
        assertThat(b.uniqueWordsRatio()).isEqualTo(1.625);
        assertThat(b.vocabulary()).isCloseTo(0.5 * 0.325 / 0.7, within(EPS));
        // level 4: categories contrast (however), addition (also), example (for example), sequence (finally):
        // k = 4, t = 0.4 + 0.05 · 3 = 0.55; content words {cats, sleep, day, long, warm, sun} and
        // {however, cats, chase, mice, example, finally, rest, near, windows}: J = 1 / 14 ≥ 0.03 → 1
        assertThat(b.transitionCategories()).isEqualTo(4);
        assertThat(b.jaccard()).isCloseTo(1.0 / 14, within(EPS));
        assertThat(b.style()).isCloseTo(0.4 * 0.55 + 0.6, within(EPS));
        assertThat(b.total()).isCloseTo(0.5 + 1.0 + 0.5 * 0.325 / 0.7 + 0.82, within(EPS));
        assertThat(TLDR.score(List.of(List.of(SUMMARY), List.of(c2)), List.of()))
                .singleElement().satisfies(r -> assertThat(r).isCloseTo(b.total(), within(0.0)));
    }

    @Test
    void anArxivPairOnTheRisingRamp() {
        // c1: "alpha" × 130 (130 tokens, 779 code points); c2: "alpha" × 150 (899 code points)
        String c1 = String.join(" ", Collections.nCopies(130, "alpha"));
        String c2 = String.join(" ", Collections.nCopies(150, "alpha"));
        WritingReward.Breakdown b = ARXIV.breakdown(c1, c2);
        // r = 899 / 779 in [0.8, 1.3) → (r − 0.8) / 0.5; u = 1 / 1 in [0.7, 1.3] → 0.5;
        // no transition word: t = 0; J = |{alpha}| / |{alpha}| = 1, capped at 0.23 → 1 → style 0.6
        double r = 899.0 / 779;
        assertThat(b.coordination()).isCloseTo((r - 0.8) / 0.5, within(EPS));
        assertThat(b.vocabulary()).isEqualTo(0.5);
        assertThat(b.transitionCategories()).isZero();
        assertThat(b.style()).isCloseTo(0.6, within(EPS));
        assertThat(b.total()).isCloseTo(0.5 + (r - 0.8) / 0.5 + 0.5 + 0.6, within(EPS));
        // 127 tokens miss arXiv's range [128, 256] that TL;DR's [8, 256] accepts
        String c127 = String.join(" ", Collections.nCopies(127, "alpha"));
        assertThat(ARXIV.breakdown(c127, c2).total()).isZero();
    }

    @Test
    void rampsRiseFlatAndFall() {
        WritingReward.Ramp ramp = WritingReward.ARXIV.uniqueWordsRatio(); // (0.5, 0.7, 1.3, 1.7)
        assertThat(ramp.value(0.6)).isCloseTo(0.5, within(EPS));
        assertThat(ramp.value(0.7)).isEqualTo(1.0);
        assertThat(ramp.value(1.3)).isEqualTo(1.0);
        assertThat(ramp.value(1.5)).isCloseTo(0.5, within(EPS));
        assertThat(ramp.value(1.7)).isCloseTo(0.0, within(EPS)); // the edge still passes, with 0
        assertThat(ramp.value(0.5)).isEqualTo(0.0);
        assertThat(ramp.value(0.49)).isNaN();
        assertThat(ramp.value(1.71)).isNaN();
        assertThat(WritingReward.TLDR.uniqueWordsRatio().value(50.0)).isEqualTo(1.0); // no upper limit
        assertThatThrownBy(() -> new WritingReward.Ramp(1, 0.5, 2, 3)).hasMessageContaining("low <= fullFrom");
    }

    @Test
    void transitionsAreWholeWordsOrPhrasesInAnyCase() {
        assertThat(WritingReward.transitionCategories("Thenceforth nothing happened")).isZero(); // "then" inside a word
        assertThat(WritingReward.transitionCategories("Then nothing happened")).isEqualTo(1);
        assertThat(WritingReward.transitionCategories("For\nexample, this")).isEqualTo(1); // a phrase across a line break
        assertThat(WritingReward.transitionCategories("a formula, for examples")).isZero();
        assertThat(WritingReward.tokens("  a\tb \n c  ")).isEqualTo(3);
        assertThat(WritingReward.tokens("   ")).isZero();
        assertThat(WritingReward.jaccard(java.util.Set.of(), java.util.Set.of())).isEqualTo(1.0);
    }

    @Test
    void metricsNameTheLevelsReached() {
        Map<String, Double> m = TLDR.breakdown(SUMMARY, SUMMARY).metrics();
        assertThat(m).containsEntry("writing_reward", 0.5).containsEntry("writing_levels_passed", 1.0)
                .containsEntry("writing_length_ratio", 1.0).doesNotContainKey("writing_jaccard");
    }

    @Test
    void fromConfig() {
        RewardFunction r = RewardFunctions.fromConfig(Map.of("type", "writing", "task", "ArXiv"), Path.of("."));
        assertThat(((WritingReward) r).levels()).isSameAs(WritingReward.ARXIV);
        assertThat(r.rewardRange()).containsExactly(0.0, 3.0);
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("type", "writing"), null))
                .hasMessageContaining("reward writing needs 'task'");
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("type", "writing", "task", "poems"), null))
                .hasMessageContaining("unknown task 'poems'");
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("type", "writing", "task", "tldr", "ratio", 2), null))
                .hasMessageContaining("ratio");
        assertThatThrownBy(() -> TLDR.score(List.of(List.of("a")), List.of())).hasMessageContaining("needs 2 agents");
    }
}
