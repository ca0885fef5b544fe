package comlrl.generation;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The inverse-CDF sampler against the categorical distribution it draws from. */
class SamplerTest {
    private static final float[] LOGITS = {2.0f, 1.0f, 0.0f, -1.0f, 0.5f, -3.0f};

    /** Frequencies of {@code draws} samples of one row (temperature t, top-k / top-p as given). */
    private static double[] frequencies(SamplingConfig config, int draws) {
        double[] counts = new double[LOGITS.length];
        List<Rng> rngs = new ArrayList<>(List.of(new Rng(11)));
        try (Scope s = Scope.open(); Sampler sampler = new Sampler(config, rngs, LOGITS.length)) {
            Tensor logits = Tensor.ofFloats(LOGITS, Device.CPU, 1, LOGITS.length);
            for (int i = 0; i < draws; i++) {
                try (Scope step = Scope.open()) {
                    counts[(int) sampler.choose(logits, i).itemLong()]++;
                }
            }
        } finally {
            rngs.forEach(Rng::close);
        }
        for (int v = 0; v < counts.length; v++) {
            counts[v] /= draws;
        }
        return counts;
    }

    /** softmax(logits / t) with everything outside {@code keep} removed and renormalised. */
    private static double[] expected(double t, boolean[] keep) {
        double[] p = new double[LOGITS.length];
        double z = 0;
        for (int v = 0; v < p.length; v++) {
            p[v] = keep[v] ? Math.exp(LOGITS[v] / t) : 0;
            z += p[v];
        }
        for (int v = 0; v < p.length; v++) {
            p[v] /= z;
        }
        return p;
    }

    private static void assertClose(double[] got, double[] want) {
        // 20000 draws: the standard error of a frequency is at most 0.0036; allow ~4.5 of them
        for (int v = 0; v < got.length; v++) {
            assertThat(got[v]).as("token %d", v).isCloseTo(want[v], org.assertj.core.data.Offset.offset(0.016));
        }
    }

    @Test
    void plainSamplingFollowsTheSoftmaxAtTheTemperature() {
        boolean[] all = {true, true, true, true, true, true};
        assertClose(frequencies(SamplingConfig.sample(1.0, null, null, 1, 1), 20000), expected(1.0, all));
        assertClose(frequencies(SamplingConfig.sample(0.7, null, null, 1, 1), 20000), expected(0.7, all));
    }

    @Test
    void topKAndTopPRemoveExactlyTheTokensHuggingFaceRemoves() {
        // top-k 3 keeps logits 2.0, 1.0, 0.5
        assertClose(frequencies(SamplingConfig.sample(1.0, 3, null, 1, 1), 20000),
                expected(1.0, new boolean[] {true, true, false, false, true, false}));
        // softmax: 0.561, 0.206, 0.076, 0.028, 0.125, 0.004 → with p = 0.8 the ascending cumsum drops
        // tokens whose cumulative mass stays <= 0.2: −3 (0.004), −1 (0.032), 0 (0.108); 0.5 makes 0.233
        assertClose(frequencies(SamplingConfig.sample(1.0, null, 0.8, 1, 1), 20000),
                expected(1.0, new boolean[] {true, true, false, false, true, false}));
    }

    @Test
    void eachRowDrawsFromItsOwnStream() {
        float[] two = new float[LOGITS.length * 2];
        System.arraycopy(LOGITS, 0, two, 0, LOGITS.length);
        System.arraycopy(LOGITS, 0, two, LOGITS.length, LOGITS.length);
        List<Rng> pair = new ArrayList<>(List.of(new Rng(11), new Rng(12)));
        List<Rng> alone = new ArrayList<>(List.of(new Rng(12)));
        SamplingConfig config = SamplingConfig.sample(1.0, null, null, 1, 1);
        try (Scope s = Scope.open(); Sampler both = new Sampler(config, pair, LOGITS.length);
                Sampler single = new Sampler(config, alone, LOGITS.length)) {
            Tensor logitsTwo = Tensor.ofFloats(two, Device.CPU, 2, LOGITS.length);
            Tensor logitsOne = Tensor.ofFloats(LOGITS, Device.CPU, 1, LOGITS.length);
            long differ = 0;
            for (int step = 0; step < 200; step++) {
                long[] a = both.choose(logitsTwo, step).toLongArray();
                long[] b = single.choose(logitsOne, step).toLongArray();
                assertThat(a[1]).as("step %d: row 1 with a neighbour = row alone", step).isEqualTo(b[0]);
                differ += a[0] != a[1] ? 1 : 0;
            }
            assertThat(differ).as("the two rows' streams differ").isGreaterThan(50);
        } finally {
            pair.forEach(Rng::close);
            alone.forEach(Rng::close);
        }
    }

    private static final long V = 4096;

    /**
     * Rows of logits for the candidate tests: random ones, the same rounded to bfloat16 (ties near
     * the k-th score, as a bf16 model's logits have), one with only 5 finite scores (fewer than k:
     * the k-th score is −inf).
     */
    private static Tensor candidateLogits(Rng rng) {
        Tensor random = Tensor.randn(rng, 3, DType.F32, Device.CPU, 3, V);
        Tensor rounded = Tensor.randn(rng, 3, DType.F32, Device.CPU, 2, V).to(DType.BF16).to(DType.F32);
        Tensor few = Tensor.fullOf(Double.NEGATIVE_INFINITY, DType.F32, Device.CPU, 1, V);
        few.narrow(1, 100, 5).copy_(Tensor.randn(rng, 1, DType.F32, Device.CPU, 1, 5));
        return Tensor.cat(List.of(random, rounded, few), 0);
    }

    /** The warpers after a top-k, each with a top-k that the compact path serves. */
    private static List<SamplingConfig> afterTopK() {
        return List.of(
                SamplingConfig.sample(0.7, 20, 0.8, 4, 1),
                SamplingConfig.sample(1.0, 40, null, 4, 1).withProcessing(LogitsProcessing.builder().minP(0.05).build()),
                SamplingConfig.sample(1.3, 30, 0.95, 4, 1).withProcessing(LogitsProcessing.builder().typicalP(0.9).build()),
                SamplingConfig.sample(0.9, 25, null, 4, 1)
                        .withProcessing(LogitsProcessing.builder().epsilonCutoff(0.02).etaCutoff(0.01).build()));
    }

    /** The same settings without the top-k, for logits that went through it already (temperature 1). */
    private static SamplingConfig withoutTopK(SamplingConfig c) {
        return new SamplingConfig(1.0, null, c.topP(), false, c.maxNewTokens(), 1, c.processing());
    }

    /** {@code logits / t} with every score below the row's k-th largest at −inf: top-k over the whole vocabulary. */
    private static Tensor topKOverTheVocabulary(Tensor logits, SamplingConfig c) {
        Tensor s = logits.div(c.temperature());
        Tensor kth = s.topk(c.topK())[0].narrow(-1, c.topK() - 1, 1);
        return s.maskedFill(s.lt(kth), Double.NEGATIVE_INFINITY);
    }

    private static List<Rng> rngs(int rows, long seed) {
        List<Rng> out = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            out.add(new Rng(seed + r));
        }
        return out;
    }

    /**
     * A top-k small beside the vocabulary keeps its candidates apart, and top-p, min-p, typical,
     * ε and η then run over them only: they must remove exactly what they remove over the whole
     * vocabulary after a top-k there, leaving the kept scores untouched (bit for bit: warpers only
     * remove). Floating sums over the kept tokens run in another order, which could move a token
     * across a cut only if its cumulative mass lay within a few float32 roundings of the cut.
     */
    @Test
    void candidatesOfATopKKeepWhatTheWholeVocabularyKeeps() {
        assertThat((20 + Sampler.TIE_ROOM) * Sampler.COMPACT_SHARE).isLessThanOrEqualTo(V); // the compact path runs
        try (Scope s = Scope.open(); GradMode g = GradMode.inference(); Rng rng = new Rng(5)) {
            Tensor logits = candidateLogits(rng);
            int rows = (int) logits.size(0);
            for (SamplingConfig c : afterTopK()) {
                List<Rng> a = rngs(rows, 1);
                List<Rng> b = rngs(rows, 1);
                try (Sampler compact = new Sampler(c, a, V); Sampler whole = new Sampler(withoutTopK(c), b, V)) {
                    Tensor got = compact.scores(logits, 0);
                    Tensor want = whole.scores(topKOverTheVocabulary(logits, c), 0);
                    assertThat(got.isFinite().eq(want.isFinite()).allTrue()).as("%s: the same tokens kept", c).isTrue();
                    assertThat(got.maskedFill(got.isFinite().logicalNot(), 0).bitEquals(
                            want.maskedFill(want.isFinite().logicalNot(), 0))).as("%s: the same scores", c).isTrue();
                    long kept = got.isFinite().sum().itemLong();
                    // each row keeps its most likely token; the top-k alone would keep k (5 in the last row)
                    assertThat(kept).as("%s: something removed beyond the top-k", c).isBetween((long) rows,
                            c.topK() * (rows - 1L) + 4);
                } finally {
                    a.forEach(Rng::close);
                    b.forEach(Rng::close);
                }
            }
        }
    }

    /**
     * Ties with the k-th score all stay (transformers: s &lt; k-th is removed): within the tie room
     * and beyond it (a batch where some row's ties outrun the room takes the whole-vocabulary path,
     * so each row is its own batch here). Row 0: the top 12 scores tie at the 10th (k = 10), 2 more
     * than k; row 1: 40 of them tie, more than the tie room; row 2: 3 finite scores, fewer than k.
     */
    @Test
    void everyTieWithTheKthScoreStays() {
        float[][] rows = new float[3][(int) V];
        for (int v = 0; v < V; v++) {
            rows[0][v] = rows[1][v] = (float) Math.sin(v); // at most 1, below the ties
            rows[2][v] = Float.NEGATIVE_INFINITY;
        }
        for (int v = 0; v < 12; v++) {
            rows[0][100 + 7 * v] = 5f;
        }
        for (int v = 0; v < 40; v++) {
            rows[1][50 + 3 * v] = 5f;
        }
        rows[2][7] = 1f;
        rows[2][9] = 2f;
        rows[2][4000] = 3f;
        long[] kept = {12, 40, 3};
        for (int r = 0; r < 3; r++) {
            List<Rng> rs = rngs(1, 7);
            try (Scope s = Scope.open(); GradMode g = GradMode.inference();
                    Sampler sampler = new Sampler(SamplingConfig.sample(1.0, 10, null, 4, 1), rs, V)) {
                Tensor logits = Tensor.ofFloats(rows[r], Device.CPU, 1, V);
                assertThat(sampler.scores(logits, 0).isFinite().sum().itemLong()).as("row %d", r).isEqualTo(kept[r]);
                java.util.Set<Long> drawn = new java.util.HashSet<>();
                for (int t = 0; t < 60; t++) {
                    long y = sampler.choose(logits, t).itemLong();
                    assertThat(rows[r][(int) y]).as("row %d draws a kept token", r).isGreaterThanOrEqualTo(r == 2 ? 1f : 5f);
                    drawn.add(y);
                }
                assertThat(drawn.size()).as("row %d draws among its ties", r).isGreaterThan(2);
            } finally {
                rs.forEach(Rng::close);
            }
        }
    }

    /**
     * A batch whose rows take different top-k paths (rows 0 and 2 tie 40 scores with the k-th, more
     * than the tie room: the whole vocabulary; rows 1 and 3 random: candidates) gives each row the
     * scores and the tokens it gets alone, with its own stream: the parts are put back at their rows.
     */
    @Test
    void rowsOnEitherTopKPathGetWhatTheyGetAlone() {
        float[][] rows = new float[4][(int) V];
        try (Rng rng = new Rng(21)) {
            for (int r = 0; r < 4; r++) {
                rows[r] = Tensor.randn(rng, 2, DType.F32, Device.CPU, V).toFloatArray();
            }
        }
        for (int r : new int[] {0, 2}) {
            for (int j = 0; j < 40; j++) {
                rows[r][11 * j + r] = 9f;
            }
        }
        float[] all = new float[4 * (int) V];
        for (int r = 0; r < 4; r++) {
            System.arraycopy(rows[r], 0, all, r * (int) V, (int) V);
        }
        SamplingConfig c = SamplingConfig.sample(0.8, 10, 0.9, 4, 1);
        List<Rng> batchRngs = rngs(4, 40);
        try (Scope s = Scope.open(); GradMode g = GradMode.inference(); Sampler batch = new Sampler(c, batchRngs, V)) {
            Tensor logits = Tensor.ofFloats(all, Device.CPU, 4, V);
            Tensor batchScores = batch.scores(logits, 0);
            long[][] batchTokens = new long[50][];
            for (int t = 0; t < 50; t++) {
                batchTokens[t] = batch.choose(logits, t).toLongArray();
            }
            for (int r = 0; r < 4; r++) {
                List<Rng> own = List.of(new Rng(40 + r));
                try (Sampler alone = new Sampler(c, own, V)) {
                    Tensor one = Tensor.ofFloats(rows[r], Device.CPU, 1, V);
                    Tensor want = alone.scores(one, 0);
                    Tensor got = batchScores.narrow(0, r, 1);
                    assertThat(got.maskedFill(got.isFinite().logicalNot(), 0).bitEquals(
                            want.maskedFill(want.isFinite().logicalNot(), 0))).as("row %d scores", r).isTrue();
                    assertThat(got.isFinite().eq(want.isFinite()).allTrue()).as("row %d kept", r).isTrue();
                    java.util.Set<Long> drawn = new java.util.HashSet<>();
                    for (int t = 0; t < 50; t++) {
                        long y = alone.choose(one, t).itemLong();
                        assertThat(batchTokens[t][r]).as("row %d, step %d", r, t).isEqualTo(y);
                        drawn.add(y);
                    }
                    assertThat(drawn.size()).as("row %d draws several tokens", r).isGreaterThan(2);
                } finally {
                    own.forEach(Rng::close);
                }
            }
        } finally {
            batchRngs.forEach(Rng::close);
        }
    }

    /**
     * A draw from the candidates takes the token a draw over the whole vocabulary takes with the
     * same uniform: the same cumulative masses up to float sums in another order, so the tokens
     * differ only where u lands within ~1e-7 of a boundary between two tokens' masses; at most one
     * such draw is allowed in 400 (expected: ~1e-4). A wrong mapping from candidates back to
     * vocabulary ids would differ nearly everywhere.
     */
    @Test
    void aDrawFromTheCandidatesTakesTheWholeVocabularysToken() {
        try (Scope s = Scope.open(); GradMode g = GradMode.inference(); Rng rng = new Rng(9)) {
            Tensor logits = candidateLogits(rng);
            int rows = (int) logits.size(0);
            SamplingConfig c = SamplingConfig.sample(0.7, 20, 0.8, 4, 1);
            List<Rng> a = rngs(rows, 3);
            List<Rng> b = rngs(rows, 3);
            int differ = 0;
            java.util.Set<Long> distinct = new java.util.HashSet<>();
            try (Sampler compact = new Sampler(c, a, V); Sampler whole = new Sampler(withoutTopK(c), b, V)) {
                Tensor masked = topKOverTheVocabulary(logits, c);
                for (int t = 0; t < 400 / rows; t++) {
                    long[] x = compact.choose(logits, t).toLongArray();
                    long[] y = whole.choose(masked, t).toLongArray();
                    for (int r = 0; r < rows; r++) {
                        differ += x[r] != y[r] ? 1 : 0;
                        distinct.add(r * V + x[r]);
                    }
                }
            } finally {
                a.forEach(Rng::close);
                b.forEach(Rng::close);
            }
            assertThat(differ).isLessThanOrEqualTo(1);
            assertThat(distinct.size()).as("the rows draw several tokens each").isGreaterThan(2 * rows);
        }
    }

    /**
     * The repetition penalty lowers exactly the tokens seen so far in the row: its prompt tokens in
     * the vocabulary (not its padding, not an id beyond the head) and the tokens it drew. A row with
     * an empty prompt has none until its first token; then that one only.
     */
    @Test
    void theRepetitionPenaltyLowersExactlyTheRowsSeenTokens() {
        long vocab = 16;
        SamplingConfig c = SamplingConfig.greedy(3).withProcessing(LogitsProcessing.builder().repetitionPenalty(2.0).build());
        List<long[]> prompts = List.of(new long[] {3, 5, 3}, new long[] {}, new long[] {20, 7});
        float[] logits = new float[3 * (int) vocab];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (i % 5) - 2f; // negative, zero and positive scores
        }
        long[][] drawn = {{9, 4, 1}, {0, 7, 2}}; // step 0's and step 1's tokens
        List<Rng> rs = rngs(3, 1);
        try (Scope s = Scope.open(); Sampler sampler = new Sampler(c, rs, vocab, Set.of(), prompts, Device.CPU)) {
            List<java.util.Set<Long>> seen = List.of(new java.util.HashSet<>(List.of(3L, 5L)), new java.util.HashSet<>(),
                    new java.util.HashSet<>(List.of(7L)));
            for (int t = 0; t < 3; t++) {
                float[] got = sampler.scores(Tensor.ofFloats(logits, Device.CPU, 3, vocab), t).toFloatArray();
                for (int r = 0; r < 3; r++) {
                    for (int v = 0; v < vocab; v++) {
                        float x = logits[r * (int) vocab + v];
                        float want = seen.get(r).contains((long) v) ? (x < 0 ? x * 2 : x / 2) : x;
                        assertThat(got[r * (int) vocab + v]).as("step %d, row %d, token %d", t, r, v).isEqualTo(want);
                    }
                }
                if (t < 2) {
                    sampler.observe(Tensor.ofLongs(drawn[t], Device.CPU, 3));
                    for (int r = 0; r < 3; r++) {
                        seen.get(r).add(drawn[t][r]);
                    }
                }
            }
        } finally {
            rs.forEach(Rng::close);
        }
    }
}
