package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.model.DecoderLm;
import comlrl.model.LoraAdapter;
import comlrl.model.LoraConfig;
import comlrl.model.ModelConfig;
import comlrl.model.TinyConfigs;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Stop strings (transformers' {@code stop_strings}): a sequence ends at the first token after which its
 * decoded completion contains one of them, keeping that token whole; the prompt is never searched; and
 * without stop strings (or with ones that never match) generation is what it was, bit for bit.
 *
 * <p>The decoder is made by hand: token id k reads as two letters, {@code 'a' + k % 26} then
 * {@code 'A' + k / 26} (ids below 64 are all distinct pieces), and the end-of-sequence id as nothing
 * (a skipped special token). A stop string is cut from an unstopped completion's text, so where it first
 * appears is known: the tests check that precondition, then the cut.
 */
class StopStringsTest {
    private static final long EOS = 2;
    private static DecoderLm model;
    private static Generator generator;
    private static final long[] PROMPT = {5, 6, 7, 8, 9};
    /** Sampling that never draws EOS, so the unstopped completion runs its full 12 tokens. */
    private static final SamplingConfig NO_EOS = SamplingConfig.sample(1.0, null, null, 12, 1)
            .withProcessing(LogitsProcessing.builder().suppressTokens(List.of(EOS)).build());

    static String piece(long id) {
        return id == EOS ? "" : "" + (char) ('a' + id % 26) + (char) ('A' + id / 26);
    }

    static String decode(long[] ids) {
        StringBuilder s = new StringBuilder();
        for (long id : ids) {
            s.append(piece(id));
        }
        return s.toString();
    }

    @BeforeAll
    static void setUp() {
        model = DecoderLm.random(TinyConfigs.of("qwen2", false, "float32"), DType.F32, Device.CPU, 11);
        generator = new Generator(model, Set.of(EOS), EOS, StopStringsTest::decode);
    }

    @AfterAll
    static void tearDown() {
        model.close();
    }

    /**
     * Hand-worked: ids 10..14 read "He" "llo" " wor" "ld" "!", so the completion's text grows as
     * "He", "Hello", "Hello wor", "Hello world", "Hello world!". "lo w" first appears at step 2 (it spans
     * "llo" and " wor"), so 3 tokens are kept; "wo" also ends at step 2, inside " wor", which is kept
     * whole; "ld!" at step 4 (5 tokens); "xyz" never (all 5, LENGTH). An EOS at step 1 ends its row with
     * 2 tokens although "ld" would match later. Two blocks that overlap give what one block gives.
     */
    @Test
    void theFirstStepWhoseDecodedCompletionContainsAStopStringEndsTheRowKeepingThatToken() {
        Map<Long, String> pieces = Map.of(10L, "He", 11L, "llo", 12L, " wor", 13L, "ld", 14L, "!", EOS, "");
        java.util.function.Function<long[], String> hello = ids -> {
            StringBuilder s = new StringBuilder();
            for (long id : ids) {
                s.append(pieces.get(id));
            }
            return s.toString();
        };
        List<List<String>> stops = List.of(List.of("lo w"), List.of("wo"), List.of("xyz", "ld!"), List.of("xyz"),
                List.of("ld"), List.of());
        long[] block = {
            10, 11, 12, 13, 14,
            10, 11, 12, 13, 14,
            10, 11, 12, 13, 14,
            10, 11, 12, 13, 14,
            10, EOS, 12, 13, 14,
            10, 11, 12, 13, 14};                       // [6 rows, 5 steps]
        StopStrings whole = new StopStrings(stops, Set.of(EOS), hello, 5);
        assertThat(whole.searchesText()).isTrue();
        assertThat(whole.advance(block, 0, 5)).isFalse(); // rows 3 and 5 run to the length cap
        int[] expectedLength = {3, 3, 5, 5, 2, 5};
        FinishReason[] expectedReason = {FinishReason.STOP, FinishReason.STOP, FinishReason.STOP, FinishReason.LENGTH,
            FinishReason.EOS, FinishReason.LENGTH};
        StopStrings inBlocks = new StopStrings(stops, Set.of(EOS), hello, 5);
        inBlocks.advance(columns(block, 6, 5, 0, 3), 0, 3);
        assertThat(inBlocks.seen()).isEqualTo(3);
        inBlocks.advance(columns(block, 6, 5, 2, 5), 2, 3); // step 2 again: already seen, skipped
        for (int r = 0; r < 6; r++) {
            assertThat(whole.length(r, 5)).as("row %d", r).isEqualTo(expectedLength[r]);
            assertThat(whole.reason(r)).as("row %d", r).isEqualTo(expectedReason[r]);
            assertThat(inBlocks.length(r, 5)).as("row %d in blocks", r).isEqualTo(expectedLength[r]);
            assertThat(inBlocks.reason(r)).isEqualTo(expectedReason[r]);
        }
        assertThat(new StopStrings(List.of(List.of(), List.of()), Set.of(EOS), hello, 5).searchesText()).isFalse();
    }

    /** Columns [from, to) of a row-major [rows, width] block. */
    private static long[] columns(long[] block, int rows, int width, int from, int to) {
        long[] out = new long[rows * (to - from)];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(block, r * width + from, out, r * (to - from), to - from);
        }
        return out;
    }

    @Test
    void aStopStringAcrossTwoTokensOrEndingInsideOneCutsTheCompletionAfterTheTokenThatCompletesIt() {
        Completion full = generator.generate(List.of(PROMPT), NO_EOS, 3).get(0).get(0);
        long[] c = full.tokenIds();
        assertThat(c).hasSize(12);
        assertThat(full.finishReason()).isEqualTo(FinishReason.LENGTH);

        // the second letter of token 2 and all of token 3: spans two tokens, complete after token 3 → 4 kept
        String across = piece(c[2]).substring(1) + piece(c[3]);
        assertThat(decode(Arrays.copyOf(c, 3))).as("precondition: not complete before token 3").doesNotContain(across);
        Completion cut = generator.generate(List.of(PROMPT), NO_EOS.withStopStrings(List.of(across)), 3).get(0).get(0);
        assertThat(cut.tokenIds()).containsExactly(Arrays.copyOf(c, 4));
        assertThat(cut.logprobs()).containsExactly(Arrays.copyOf(full.logprobs(), 4));
        assertThat(cut.finishReason()).isEqualTo(FinishReason.STOP);
        assertThat(cut.text()).isEqualTo(decode(Arrays.copyOf(c, 4))).endsWith(across);
        // one row: every row has ended at the check after step 3 (checks every 4 steps), so decoding stops there
        assertThat(generator.lastStats().steps()).isEqualTo(4);
        assertThat(generator.lastStats().hostSyncs()).isEqualTo(1 + 2); // that check, and the two final copies

        // token 4 and the first letter of token 5: ends inside token 5, which is kept whole → 6 kept
        String inside = piece(c[4]) + piece(c[5]).charAt(0);
        assertThat(decode(Arrays.copyOf(c, 5))).as("precondition").doesNotContain(inside);
        Completion mid = generator.generate(List.of(PROMPT), NO_EOS.withStopStrings(List.of("never", inside)), 3)
                .get(0).get(0);
        assertThat(mid.tokenIds()).containsExactly(Arrays.copyOf(c, 6));
        assertThat(mid.finishReason()).isEqualTo(FinishReason.STOP);
        assertThat(mid.text().indexOf(inside) + inside.length()).isEqualTo(mid.text().length() - 1); // one letter overhangs
        assertThat(generator.lastStats().steps()).isEqualTo(8); // ended at step 5, seen at the check after step 7
    }

    @Test
    void aStopStringInThePromptOrAcrossItsEndDoesNotEndTheCompletion() {
        Completion full = generator.generate(List.of(PROMPT), NO_EOS, 5).get(0).get(0);
        String inPrompt = piece(6) + piece(7);
        String acrossPromptEnd = piece(9) + piece(full.tokenIds()[0]);
        assertThat(decode(PROMPT) + decode(full.tokenIds())).contains(inPrompt, acrossPromptEnd);
        assertThat(full.text()).as("precondition: only the prompt holds them").doesNotContain(inPrompt, acrossPromptEnd);
        Completion same = generator.generate(List.of(PROMPT), NO_EOS.withStopStrings(List.of(inPrompt, acrossPromptEnd)), 5)
                .get(0).get(0);
        assertThat(same.tokenIds()).containsExactly(full.tokenIds());
        assertThat(same.finishReason()).isEqualTo(FinishReason.LENGTH);
    }

    /**
     * Stop strings that never match take the other path through the decode loop (the new ids copied at
     * each check instead of the all-finished flag) and must give what no stop strings give, bit for bit,
     * greedy and sampled, with EOS endings, and with as many host transfers.
     */
    @Test
    void withStopStringsThatNeverMatchGenerationIsBitIdenticalToWithoutAndSyncsAsOften() {
        List<long[]> prompts = List.of(PROMPT, new long[] {10, 11}, new long[] {3});
        for (SamplingConfig cfg : List.of(SamplingConfig.greedy(30), SamplingConfig.sample(1.0, null, null, 30, 3))) {
            List<List<Completion>> plain = generator.generate(prompts, cfg, 7);
            Generator.Stats plainStats = generator.lastStats();
            List<List<Completion>> stopped = generator.generate(prompts, cfg.withStopStrings(List.of("never")), 7);
            Generator.Stats stoppedStats = generator.lastStats();
            for (int i = 0; i < plain.size(); i++) {
                for (int j = 0; j < plain.get(i).size(); j++) {
                    Completion a = plain.get(i).get(j);
                    Completion b = stopped.get(i).get(j);
                    assertThat(b.tokenIds()).containsExactly(a.tokenIds());
                    assertThat(b.logprobs()).containsExactly(a.logprobs()); // exact doubles
                    assertThat(b.text()).isEqualTo(a.text());
                    assertThat(b.finishReason()).isEqualTo(a.finishReason());
                }
            }
            assertThat(stoppedStats.steps()).isEqualTo(plainStats.steps());
            assertThat(stoppedStats.hostSyncs()).isEqualTo(plainStats.hostSyncs());
        }
        // the sampled run ends some sequences with EOS: the stop-string path still ends them there
        assertThat(generator.generate(prompts, SamplingConfig.sample(1.0, null, null, 30, 3)
                .withStopStrings(List.of("never")), 7).stream().flatMap(List::stream).map(Completion::finishReason))
                .contains(FinishReason.EOS);
    }

    /**
     * A team generation with a different stop string per agent: each agent's completions end where its
     * own generation with its own stop strings ends them (same base, adapters, prompts and seeds as
     * {@code TeamGeneratorTest}, whose draws are measured far from token boundaries).
     */
    @Test
    void aTeamGenerationWithPerAgentStopStringsEqualsEachAgentsOwnGeneration() {
        ModelConfig c = TinyConfigs.of("qwen2", false, "float32");
        LoraConfig lora = new LoraConfig(4, 16, 0, List.of("all-linear"), false);
        try (DecoderLm base = DecoderLm.random(c, DType.F32, Device.CPU, 11);
                LoraAdapter a0 = LoraAdapter.init(c, lora, DType.F32, Device.CPU, 1);
                LoraAdapter a1 = LoraAdapter.init(c, lora, DType.F32, Device.CPU, 2);
                LoraAdapter a2 = LoraAdapter.init(c, lora, DType.F32, Device.CPU, 3)) {
            TeamGeneratorTest.randomizeB(a0, a1, a2);
            List<LoraAdapter> adapters = List.of(a0, a1, a2);
            List<List<long[]>> prompts = List.of(List.of(new long[] {5, 6, 7, 8, 9}),
                    List.of(new long[] {10, 11}), List.of(new long[] {3, 4, 12}));
            long[] seeds = {7, 8, 9};
            SamplingConfig cfg = SamplingConfig.sample(1.0, null, null, 10, 3);
            TeamGenerator team = new TeamGenerator(base, Set.of(EOS), EOS, StopStringsTest::decode);
            List<List<List<Completion>>> unstopped = team.generate(adapters, prompts, cfg, seeds);
            // agent 0 stops at the end of its first sample's token 1, agent 1 inside its first sample's token 1
            long[] first0 = unstopped.get(0).get(0).get(0).tokenIds();
            long[] first1 = unstopped.get(1).get(0).get(0).tokenIds();
            assertThat(first0.length).isGreaterThan(2);
            assertThat(first1.length).isGreaterThan(2);
            String stop0 = piece(first0[0]).substring(1) + piece(first0[1]);
            String stop1 = piece(first1[0]) + piece(first1[1]).charAt(0);
            List<SamplingConfig> own = List.of(cfg.withStopStrings(List.of(stop0)), cfg.withStopStrings(List.of(stop1)), cfg);
            List<List<List<Completion>>> together = team.generate(adapters, prompts, own, seeds);
            assertThat(together.get(0).get(0).get(0).tokenIds()).containsExactly(Arrays.copyOf(first0, 2));
            assertThat(together.get(1).get(0).get(0).tokenIds()).containsExactly(Arrays.copyOf(first1, 2));
            List<FinishReason> reasons = new ArrayList<>();
            for (int a = 0; a < 3; a++) {
                try (DecoderLm view = base.withAdapter(adapters.get(a))) {
                    List<Completion> alone = new Generator(view, Set.of(EOS), EOS, StopStringsTest::decode)
                            .generate(prompts.get(a), own.get(a), seeds[a]).get(0);
                    for (int j = 0; j < 3; j++) {
                        Completion mine = together.get(a).get(0).get(j);
                        assertThat(mine.tokenIds()).as("agent %d sample %d", a, j).containsExactly(alone.get(j).tokenIds());
                        assertThat(mine.finishReason()).isEqualTo(alone.get(j).finishReason());
                        reasons.add(mine.finishReason());
                    }
                }
            }
            assertThat(List.of(reasons.get(0), reasons.get(3))).containsOnly(FinishReason.STOP);
            assertThat(reasons.subList(6, 9)).doesNotContain(FinishReason.STOP); // agent 2 has none
            assertThat(together.get(2).get(0).get(0).tokenIds()).containsExactly(unstopped.get(2).get(0).get(0).tokenIds());
            assertThatThrownBy(() -> team.generate(adapters, prompts, List.of(cfg, cfg.withNumReturnSequences(2), cfg), seeds))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only stop strings may differ");
        }
    }
}
