package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.model.TinyConfigs;
import comlrl.tensor.AdamW;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.utils.ResidentMemory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class GeneratorTest {
    private static final long EOS = 2;
    private static DecoderLm model;
    private static Generator generator;
    private static final List<long[]> PROMPTS = List.of(new long[] {5, 6, 7, 8, 9}, new long[] {10, 11}, new long[] {3});

    @BeforeAll
    static void setUp() {
        ModelConfig c = TinyConfigs.of("qwen2", false, "float32");
        model = DecoderLm.random(c, DType.F32, Device.CPU, 11);
        generator = new Generator(model, Set.of(EOS), EOS, ids -> Arrays.toString(ids));
    }

    @AfterAll
    static void tearDown() {
        model.close();
    }

    @Test
    void sameSeedSameSamplesDifferentSeedDifferentSamples() {
        SamplingConfig cfg = SamplingConfig.sample(1.0, null, null, 12, 4);
        List<List<Completion>> a = generator.generate(PROMPTS, cfg, 42);
        List<List<Completion>> b = generator.generate(PROMPTS, cfg, 42);
        List<List<Completion>> c = generator.generate(PROMPTS, cfg, 43);
        assertThat(ids(a)).isEqualTo(ids(b));
        assertThat(ids(a)).isNotEqualTo(ids(c));
        // the G samples of a group are not all identical at temperature 1 over a random model
        assertThat(a.get(0).stream().map(x -> Arrays.toString(x.tokenIds())).distinct().count()).isGreaterThan(1);
    }

    /**
     * Bound on the logprobs: the padded batch and the row alone are the same sums in other shapes.
     * A logit sums at most K = 64 float32 products per layer over L = 2 layers, so it moves by at
     * most u·K·L·max|z| (u = 2^-24; max|z| < 1 for this model): ≈ 8e-6; a log-softmax value moves by
     * at most twice that plus a few ulps of |log p| < 8 (4.8e-7 each): below 1e-4 (measured: 5e-7).
     * The tokens are compared exactly: each row draws its own seeded uniforms, and this seed's draws
     * all lie at least 4e-4 of the CDF from a token boundary (top-p cuts at least 4e-3 from 1 − p),
     * while that rounding moves the CDF by ~1e-9 (measured on AVX2 and AVX-512 kernels).
     */
    @Test
    void batchedGroupEqualsSequencesGeneratedOneByOne() {
        SamplingConfig cfg = SamplingConfig.sample(0.8, 20, 0.9, 10, 3);
        long seed = 99;
        List<List<Completion>> batched = generator.generate(PROMPTS, cfg, seed);
        for (int i = 0; i < PROMPTS.size(); i++) {
            for (int j = 0; j < 3; j++) {
                Completion alone = generator.generate(List.of(PROMPTS.get(i)), cfg.withNumReturnSequences(1),
                        new long[] {Generator.rowSeed(seed, i, j)}).get(0).get(0);
                Completion inBatch = batched.get(i).get(j);
                assertThat(inBatch.tokenIds()).as("prompt %d sample %d", i, j).containsExactly(alone.tokenIds());
                for (int t = 0; t < alone.length(); t++) {
                    assertThat(inBatch.logprobs()[t]).isCloseTo(alone.logprobs()[t], org.assertj.core.data.Offset.offset(1e-4));
                }
            }
        }
    }

    @Test
    void topKOneEqualsGreedy() {
        List<List<Completion>> greedy = generator.generate(PROMPTS, SamplingConfig.greedy(10), 1);
        List<List<Completion>> topOne = generator.generate(PROMPTS, SamplingConfig.sample(0.7, 1, null, 10, 1), 5);
        assertThat(ids(topOne)).isEqualTo(ids(greedy));
    }

    @Test
    void greedyMatchesArgmaxOfFullRecomputationAndLogprobsAreTemperatureOne() {
        Completion c = generator.generate(List.of(PROMPTS.get(0)), SamplingConfig.greedy(6), 0).get(0).get(0);
        long[] seq = PROMPTS.get(0);
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            for (int t = 0; t < c.length(); t++) {
                Tensor ids = Tensor.ofLongs(seq, Device.CPU, 1, seq.length);
                Tensor logits = model.forward(ids, Tensor.arangeOf(seq.length, Device.CPU).view(1, -1), null, null,
                        seq.length - 1).logits().view(-1);
                assertThat(c.tokenIds()[t]).isEqualTo(logits.argmax(0).itemLong());
                assertThat(c.logprobs()[t]).isCloseTo(logits.logSoftmax(0).select(0, c.tokenIds()[t]).item(),
                        org.assertj.core.data.Offset.offset(1e-4));
                long[] next = Arrays.copyOf(seq, seq.length + 1);
                next[seq.length] = c.tokenIds()[t];
                seq = next;
            }
        }
    }

    @Test
    void stopsAtEosPerSequenceAndReportsWhy() {
        // force EOS to be very likely for one prompt by a model whose lm_head favours EOS after token 3
        SamplingConfig cfg = SamplingConfig.sample(1.0, null, null, 30, 8);
        List<List<Completion>> out = generator.generate(PROMPTS, cfg, 7);
        for (List<Completion> group : out) {
            for (Completion c : group) {
                boolean endsWithEos = c.length() > 0 && c.tokenIds()[c.length() - 1] == EOS;
                assertThat(c.finishReason()).isEqualTo(endsWithEos ? FinishReason.EOS : FinishReason.LENGTH);
                if (c.finishReason() == FinishReason.LENGTH) {
                    assertThat(c.length()).isEqualTo(30);
                }
                for (int t = 0; t < c.length() - 1; t++) {
                    assertThat(c.tokenIds()[t]).isNotEqualTo(EOS);
                }
                assertThat(c.logprobs()).hasSize(c.length());
            }
        }
    }

    @Test
    void scoringWithGradientsMatchesSamplingLogprobsAndIgnoresPadding() {
        SamplingConfig cfg = SamplingConfig.sample(1.0, null, null, 8, 4);
        List<List<Completion>> out = generator.generate(PROMPTS, cfg, 3);
        List<long[]> prompts = new ArrayList<>();
        List<long[]> completions = new ArrayList<>();
        List<Double> expected = new ArrayList<>();
        for (List<Completion> group : out) {
            for (Completion c : group) {
                prompts.add(c.promptIds());
                completions.add(c.tokenIds());
                expected.add(c.logprobSum());
            }
        }
        try (Scope s = Scope.open()) {
            Scorer.Scores scores = Scorer.score(model, prompts, completions, EOS);
            Tensor seq = scores.sequenceLogprobs();
            assertThat(seq.requiresGrad()).isTrue();
            double[] got = seq.toDoubleArray();
            for (int i = 0; i < got.length; i++) {
                assertThat(got[i]).isCloseTo(expected.get(i), org.assertj.core.data.Offset.offset(1e-3));
            }
            // a different pad id changes nothing
            double[] otherPad = Scorer.score(model, prompts, completions, 63).sequenceLogprobs().toDoubleArray();
            for (int i = 0; i < got.length; i++) {
                assertThat(otherPad[i]).isCloseTo(got[i], org.assertj.core.data.Offset.offset(1e-5));
            }
        }
    }

    @Test
    void nativeMemoryStaysFlatOverGenerateScoreAdamWSteps() {
        // the "tiny" shape of init-model and bench, through the decoding path (transposed weights, KV cache)
        ModelConfig c = comlrl.model.ModelPresets.config("qwen2", "tiny", 515, -1, EOS, "float32");
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 2);
                AdamW opt = new AdamW(m.parameters(), 1e-3, 0.01)) {
            Generator gen = new Generator(m, Set.of(EOS), EOS, ids -> "");
            long after20 = 0;
            for (int step = 1; step <= 200; step++) {
                List<List<Completion>> out = gen.generate(PROMPTS, SamplingConfig.sample(1.0, null, null, 6, 2), step);
                try (Scope s = Scope.open()) {
                    List<long[]> p = new ArrayList<>();
                    List<long[]> y = new ArrayList<>();
                    out.forEach(g -> g.forEach(x -> { p.add(x.promptIds()); y.add(x.tokenIds()); }));
                    opt.zeroGrad();
                    Scorer.score(m, p, y, EOS).sequenceLogprobs().mean().neg().backward();
                    opt.step();
                }
                if (step == 50) {
                    after20 = ResidentMemory.settledBytes();
                }
            }
            long after200 = ResidentMemory.settledBytes();
            System.out.println("RSS step 50 -> 200: " + after20 + " -> " + after200);
            assertThat(after200 - after20).as("RSS growth from step 50 to 200").isLessThan(40L << 20);
        }
    }

    private static List<String> ids(List<List<Completion>> out) {
        List<String> s = new ArrayList<>();
        out.forEach(g -> g.forEach(c -> s.add(Arrays.toString(c.tokenIds()))));
        return s;
    }

    @Test
    void nonFiniteScoresStopGenerationWithAClearMessage() {
        ModelConfig c = TinyConfigs.of("qwen2", false, "float32");
        try (DecoderLm broken = DecoderLm.random(c, DType.F32, Device.CPU, 3)) {
            try (comlrl.tensor.Scope s = comlrl.tensor.Scope.open();
                    comlrl.tensor.GradMode g = comlrl.tensor.GradMode.noGrad()) {
                broken.namedParameters().get("model.norm.weight").fill_(Double.NaN);
            }
            Generator gen = new Generator(broken, Set.of(EOS), EOS, ids -> Arrays.toString(ids));
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> gen.generate(PROMPTS, SamplingConfig.greedy(3), 0))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("next-token scores are not finite")
                    .hasMessageContaining("log-probability NaN");
        }
    }

    @Test
    void aPromptAndMaxNewTokensBeyondTheContextAreRefusedBeforeAllocating() {
        int context = model.config().maxPositionEmbeddings();
        org.assertj.core.api.Assertions.assertThatThrownBy(
                () -> generator.generate(PROMPTS, SamplingConfig.greedy(context), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("A prompt of 5 tokens plus max_new_tokens " + context)
                .hasMessageContaining("max_position_embeddings");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                () -> generator.generate(PROMPTS, SamplingConfig.greedy(Integer.MAX_VALUE), 0))
                .hasMessageContaining("exceeds the model's context");
    }
}
