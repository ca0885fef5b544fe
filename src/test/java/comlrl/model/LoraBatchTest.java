package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Several agents' adapters in one batched forward over the shared base equal each agent's own forward. */
class LoraBatchTest {
    static final ModelConfig MODEL = LoraAdapterTest.MODEL;

    /** An adapter with random B, so that it changes the logits. */
    static LoraAdapter trained(LoraConfig c, long seed) {
        LoraAdapter a = LoraAdapter.init(MODEL, c, DType.F32, Device.CPU, seed);
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(seed + 100)) {
            randomB(a, rng, 0.05);
        }
        return a;
    }

    /** Every B of {@code a} (the odd parameters) drawn from N(0, std²), in parameter order. */
    static void randomB(LoraAdapter a, Rng rng, double std) {
        List<Tensor> p = a.parameters();
        for (int k = 1; k < p.size(); k += 2) {
            p.get(k).copy_(Tensor.randn(rng, std, DType.F32, Device.CPU, p.get(k).shape()));
        }
    }

    static Tensor rows(long[][] ids, int from, int count) {
        long[] flat = new long[count * ids[0].length];
        long[] pos = new long[flat.length];
        for (int r = 0; r < count; r++) {
            for (int t = 0; t < ids[0].length; t++) {
                flat[r * ids[0].length + t] = ids[from + r][t];
                pos[r * ids[0].length + t] = t;
            }
        }
        return Tensor.ofLongs(flat, Device.CPU, count, ids[0].length);
    }

    static Tensor logits(DecoderLm m, long[][] ids, int from, int count) {
        Tensor x = rows(ids, from, count);
        long s = ids[0].length;
        long[] pos = new long[(int) (count * s)];
        for (int i = 0; i < pos.length; i++) {
            pos[i] = i % s;
        }
        return m.forward(x, Tensor.ofLongs(pos, Device.CPU, count, s), null, null, 0).logits();
    }

    static final long[][] IDS = {{1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}, {4, 8, 12, 16}, {17, 18, 19, 20},
            {21, 22, 23, 24}};

    /** The batched forward's rows of group g against agent g's own view, for groups of {@code counts} rows. */
    static double worstDifference(DecoderLm base, List<LoraAdapter> adapters, int[] counts) {
        return worstDifference(base, adapters, counts, IDS);
    }

    /** {@link #worstDifference(DecoderLm, List, int[])} over the rows of {@code ids}. */
    static double worstDifference(DecoderLm base, List<LoraAdapter> adapters, int[] counts, long[][] ids) {
        try (DecoderLm team = base.withAdapters(adapters, counts); Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            int total = 0;
            for (int c : counts) {
                total += c;
            }
            assertThat(team.parameters()).isEmpty();
            Tensor together = logits(team, ids, 0, total);
            double worst = 0;
            int start = 0;
            for (int a = 0; a < adapters.size(); a++) {
                try (DecoderLm alone = base.withAdapter(adapters.get(a))) {
                    Tensor own = logits(alone, ids, start, counts[a]);
                    worst = Math.max(worst, together.narrow(0, start, counts[a]).sub(own).abs().max().item());
                    // and the group really is adapted: it differs from the base
                    assertThat(own.sub(logits(base, ids, start, counts[a])).abs().max().item()).isGreaterThan(1e-4);
                }
                start += counts[a];
            }
            return worst;
        }
    }

    @Test
    void aBatchedForwardEqualsEachAgentsForwardStackedAndGroupByGroup() {
        LoraConfig all = new LoraConfig(4, 8, 0, List.of("all-linear"), false);
        try (DecoderLm base = DecoderLm.random(MODEL, DType.F32, Device.CPU, 3);
                LoraAdapter a0 = trained(all, 1); LoraAdapter a1 = trained(all, 2); LoraAdapter a2 = trained(all, 3);
                LoraAdapter q = trained(new LoraConfig(2, 6, 0, List.of("q_proj", "down_proj"), true), 4)) {
            try (LoraBatch b = new LoraBatch(List.of(a0, a1, a2), new int[] {2, 2, 2})) {
                assertThat(b.stacked()).isTrue();
            }
            assertThat(worstDifference(base, List.of(a0, a1, a2), new int[] {2, 2, 2})).isLessThan(1e-5);
            // unequal groups and mixed ranks/targets run group by group
            try (LoraBatch b = new LoraBatch(List.of(a0, q), new int[] {3, 3})) {
                assertThat(b.stacked()).isFalse();
            }
            assertThat(worstDifference(base, List.of(a0, q), new int[] {3, 3})).isLessThan(1e-5);
            assertThat(worstDifference(base, List.of(a2, a0, a1), new int[] {1, 3, 2})).isLessThan(1e-5);
        }
    }

    @Test
    void float32AdaptersOnABf16BaseBatchToo() {
        ModelConfig bf16 = ModelPresets.config("qwen2", "tiny", 64, 1, 2, "bfloat16");
        LoraConfig all = new LoraConfig(4, 8, 0, List.of("all-linear"), false);
        try (DecoderLm base = DecoderLm.random(bf16, DType.BF16, Device.CPU, 3);
                LoraAdapter a0 = LoraAdapter.init(bf16, all, DType.F32, Device.CPU, 1);
                LoraAdapter a1 = LoraAdapter.init(bf16, all, DType.F32, Device.CPU, 2)) {
            for (LoraAdapter a : List.of(a0, a1)) {
                try (Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(a == a0 ? 5 : 6)) {
                    randomB(a, rng, 0.2);
                }
            }
            assertThat(worstDifference(base, List.of(a0, a1), new int[] {3, 3})).isLessThan(2e-2);
            // a prefill-sized pass runs the products in bfloat16 (aBf16PrefillsAdditionsAreWithinTheirRoundingBound):
            // the same agreement with each agent's own float32-adapter forward
            assertThat(worstDifference(base, List.of(a0, a1), new int[] {1, 1}, longIds(2, 40))).isLessThan(2e-2);
            // without the host kernel (a GPU, a JVM without the vector module) the float32 products add as
            // each agent's own forward adds them (y + Δ rounded once): the same logits, bit for bit, stacked
            // and group by group
            boolean host = LoraBatch.hostKernel;
            LoraBatch.hostKernel = false;
            try (LoraAdapter q = LoraAdapter.init(bf16, new LoraConfig(2, 6, 0, List.of("q_proj", "down_proj"), true),
                    DType.F32, Device.CPU, 7)) {
                try (Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(9)) {
                    randomB(q, rng, 0.2);
                }
                assertThat(worstDifference(base, List.of(a0, a1), new int[] {3, 3})).isEqualTo(0.0);
                assertThat(worstDifference(base, List.of(a0, q), new int[] {3, 3})).isEqualTo(0.0);
            } finally {
                LoraBatch.hostKernel = host;
            }
        }
    }

    /** {@code n} rows of {@code s} token ids. */
    static long[][] longIds(int n, int s) {
        long[][] ids = new long[n][s];
        for (int r = 0; r < n; r++) {
            for (int t = 0; t < s; t++) {
                ids[r][t] = 1 + (7L * t + 13L * r) % 60;
            }
        }
        return ids;
    }

    /**
     * A pass of {@link LoraBatch#BF16_PRODUCT_TOKENS} tokens or more per row on a bfloat16 base
     * (a prefill) runs the stacked products in bfloat16, each group's addition within the class
     * comment's bound {@code 4u·M}, {@code M = (|x|·|A|ᵀ)·|s·B|ᵀ}, u = 2⁻⁸, of the exact one (float64,
     * from the same bf16 x and the float32 adapters); second-order terms add at most 8u²·M, and each
     * product's float32 sums K·2⁻²⁴·M (K = 64 and r = 4 terms). A missing or doubled scale, or another
     * group's adapter, is off by about M. Fewer tokens keep the float32 products: their additions
     * differ from the bf16 ones in some bit.
     */
    @Test
    void aBf16PrefillsAdditionsAreWithinTheirRoundingBound() {
        ModelConfig bf16 = ModelPresets.config("qwen2", "tiny", 64, 1, 2, "bfloat16");
        LoraConfig all = new LoraConfig(4, 8, 0, List.of("all-linear"), false); // scale 2
        LoraConfig odd = new LoraConfig(4, 6, 0, List.of("all-linear"), false);  // scale 1.5: not folded exactly
        for (LoraConfig c : List.of(all, odd)) {
            List<LoraAdapter> adapters = List.of(LoraAdapter.init(bf16, c, DType.F32, Device.CPU, 1),
                    LoraAdapter.init(bf16, c, DType.F32, Device.CPU, 2));
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(7)) {
                for (LoraAdapter a : adapters) {
                    randomB(a, rng, 0.2);
                }
                try (LoraBatch fresh = new LoraBatch(adapters, new int[] {1, 1})) {
                    long tokens = LoraBatch.BF16_PRODUCT_TOKENS + 8;
                    Tensor x = Tensor.randn(rng, 1, DType.BF16, Device.CPU, 2, tokens, 64);
                    int[] which = {0, 4, 6}; // q (64 → 64), gate (64 → 128), down (128 → 64)
                    Tensor xDown = Tensor.randn(rng, 1, DType.BF16, Device.CPU, 2, tokens, 128);
                    Tensor[] d = fresh.deltas(x, 0, new int[] {0, 4});
                    Tensor dDown = fresh.deltas(xDown, 1, new int[] {6})[0];
                    double u = Math.scalb(1.0, -8);
                    for (int a = 0; a < 2; a++) {
                        LoraAdapter ad = adapters.get(a);
                        for (int k = 0; k < which.length; k++) {
                            String key = LoraAdapter.key(k == 2 ? 1 : 0, LoraConfig.PROJECTIONS.get(which[k]));
                            Tensor in = (k == 2 ? xDown : x).narrow(0, a, 1).to(DType.F64);
                            Tensor aw = ad.a(key).detach().to(DType.F64);
                            Tensor bw = ad.b(key).detach().to(DType.F64).mul(c.scale());
                            Tensor exact = in.matmul(aw.transpose(0, 1)).matmul(bw.transpose(0, 1));
                            Tensor m = in.abs().matmul(aw.abs().transpose(0, 1)).matmul(bw.abs().transpose(0, 1));
                            long width = in.size(2);
                            Tensor bound = m.mul(4 * u + 8 * u * u + (width + c.r()) * Math.scalb(1.0, -24));
                            Tensor got = (k == 2 ? dDown : d[k]).narrow(0, a, 1).to(DType.F64);
                            assertThat(got.sub(exact).abs().sub(bound).max().item()).as("agent %d, %s", a, key)
                                    .isLessThanOrEqualTo(0.0);
                            // the bound is tight enough to see a wrong factor: M is of the order of |Δ|
                            assertThat(exact.abs().max().item()).isGreaterThan(0.1 * m.max().item());
                        }
                    }
                    // fewer tokens: the float32 products, so not the same bits
                    Tensor shortX = x.narrow(1, 0, LoraBatch.BF16_PRODUCT_TOKENS - 1).contiguous();
                    assertThat(fresh.deltas(shortX, 0, new int[] {4})[0]
                            .bitEquals(d[1].narrow(1, 0, LoraBatch.BF16_PRODUCT_TOKENS - 1))).isFalse();
                }
            } finally {
                adapters.forEach(LoraAdapter::close);
            }
        }
    }

    /**
     * A team's decoding step through the base's packed weights (q, k, v and gate, up each one stacked
     * product, split into views, each plus its rows' adapters' additions) equals each agent's own
     * forward through the plain products, step by step: within the rounding bound of
     * {@code DecoderLmTest}'s packed decoding (oneDNN's sums in another order; the adapters' products
     * sum at most 512 + 4 terms more). The tiny models of the other tests are too small to pack. With
     * some projections not adapted, the others' additions must still land on their own views; an
     * addition on another projection's view, or another group's rows, moves logits by about their
     * own size. q and v adapted around an unadapted k (peft's default kind of targets) land on
     * their own views of the stacked q, k, v product.
     */
    @ParameterizedTest
    @ValueSource(strings = {"all-linear", "k_proj,o_proj,up_proj", "q_proj,v_proj,gate_proj,up_proj"})
    void aTeamsPackedDecodingEqualsEachAgentsOwnForward(String targets) {
        ModelConfig c = TinyConfigs.wide("qwen2", false);
        LoraConfig lc = new LoraConfig(4, 12, 0, List.of(targets.split(",")), false); // scale 3
        boolean before = Engine.oneDnnLinear();
        List<LoraAdapter> adapters = new ArrayList<>();
        try (DecoderLm base = DecoderLm.random(c, DType.F32, Device.CPU, 4); Scope s = Scope.open();
                GradMode g = GradMode.inference()) {
            try (Rng rng = new Rng(3)) {
                base.namedParameters().forEach((name, w) -> {
                    if (name.endsWith(".bias")) {
                        w.copy_(Tensor.randn(rng, 0.5, DType.F32, Device.CPU, w.shape()));
                    }
                });
            }
            for (int a = 0; a < 3; a++) {
                LoraAdapter ad = LoraAdapter.init(c, lc, DType.F32, Device.CPU, 20 + a);
                adapters.add(ad);
                try (Rng rng = new Rng(30 + a)) {
                    randomB(ad, rng, 0.05);
                }
            }
            long[][] prompts = {{5, 17, 3, 42}, {9, 11, 60, 1}, {7, 7, 300, 2}};
            Engine.setOneDnnLinear(true);
            try (DecoderLm team = base.withAdapters(adapters, new int[] {1, 1, 1});
                    KvCache teamCache = KvCache.allocate(c, 3, 16, DType.F32, Device.CPU)) {
                Tensor pos = Tensor.arangeOf(4, Device.CPU).view(1, -1).expand(3, 4).contiguous();
                team.forward(Tensor.ofLongs(java.util.Arrays.stream(prompts).flatMapToLong(java.util.Arrays::stream)
                        .toArray(), Device.CPU, 3, 4), pos, null, teamCache, 3);
                DecoderLm.DecodeWeights packed = team.decodeWeights(3);
                assertThat(packed).isNotNull();
                Tensor[] teamLogits = new Tensor[4];
                for (int t = 0; t < 4; t++) {
                    Tensor next = Tensor.ofLongs(new long[] {t + 1, 2 * t + 7, 3 * t + 100}, Device.CPU, 3, 1);
                    Tensor p = Tensor.fullOf(4 + t, DType.I64, Device.CPU, 3, 1);
                    teamLogits[t] = team.forward(next, p, null, teamCache, 0, packed).logits();
                }
                Engine.setOneDnnLinear(false);
                for (int a = 0; a < 3; a++) {
                    try (DecoderLm alone = base.withAdapter(adapters.get(a));
                            KvCache cache = KvCache.allocate(c, 1, 16, DType.F32, Device.CPU);
                            KvCache baseCache = KvCache.allocate(c, 1, 16, DType.F32, Device.CPU)) {
                        Tensor promptPos = Tensor.arangeOf(4, Device.CPU).view(1, -1).contiguous();
                        alone.forward(Tensor.ofLongs(prompts[a], Device.CPU, 1, 4), promptPos, null, cache, 3);
                        base.forward(Tensor.ofLongs(prompts[a], Device.CPU, 1, 4), promptPos, null, baseCache, 3);
                        for (int t = 0; t < 4; t++) {
                            Tensor token = Tensor.ofLongs(new long[] {new long[] {t + 1, 2 * t + 7, 3 * t + 100}[a]},
                                    Device.CPU, 1, 1);
                            Tensor p = Tensor.fullOf(4 + t, DType.I64, Device.CPU, 1, 1);
                            Tensor own = alone.forward(token, p, null, cache, 0).logits();
                            double bound = comlrl.tensor.Rounding.forwardBound(1024 + 516, 2, own.abs().max().item());
                            assertThat(teamLogits[t].narrow(0, a, 1).maxAbsDiff(own)).as("agent %d, step %d", a, t)
                                    .isLessThan(bound);
                            // and the agent's adapter counts: its logits are not the base's
                            assertThat(own.maxAbsDiff(base.forward(token, p, null, baseCache, 0).logits()))
                                    .isGreaterThan(100 * bound);
                        }
                    }
                }
            }
        } finally {
            Engine.setOneDnnLinear(before);
            adapters.forEach(LoraAdapter::close);
        }
    }

    /**
     * A bf16 decoding step's additions on the host ({@link LoraBatch#addInPlace}): each group's rows
     * of the base's outputs become {@code r(y + s·x·Aᵀ·Bᵀ)} with A and s·B rounded to bf16 and float32
     * sums: against the float64 value from the same bf16 x and y and the float32 adapters, within
     * {@code u·|want| + (1 + u)·((2u + u²)·M + (in + r + 2)·u₃₂·(1 + 3u)·(M + |y|))},
     * {@code M = (|x|·|A|ᵀ)·|s·B|ᵀ}, u = 2⁻⁸ (A's and B's rounding, the float32 sums, the result's
     * rounding). Outputs are views of one stacked product, with a column block between them that no
     * adapter touches; three agents of five rows each (a block of four rows and one more). Another
     * group's adapter, a missing scale or a row off by one is off by about M. A pass the host does
     * not take (float32, a prefill's many tokens) changes nothing and says so.
     */
    @ParameterizedTest
    @ValueSource(doubles = {8, 6}) // scale 2 (folded into B) and 1.5
    void aBf16DecodingStepsAdditionsAreAddedInPlaceWithinTheirRoundingBound(double alpha) {
        HostLoraKernelTest.kernel();
        ModelConfig bf16 = ModelPresets.config("qwen2", "tiny", 64, 1, 2, "bfloat16");
        LoraConfig c = new LoraConfig(4, alpha, 0, List.of("all-linear"), false);
        List<LoraAdapter> adapters = List.of(LoraAdapter.init(bf16, c, DType.F32, Device.CPU, 1),
                LoraAdapter.init(bf16, c, DType.F32, Device.CPU, 2), LoraAdapter.init(bf16, c, DType.F32, Device.CPU, 3));
        double u = 0x1p-8;
        try (Scope s = Scope.open(); GradMode g = GradMode.inference(); Rng rng = new Rng(11)) {
            for (LoraAdapter a : adapters) {
                randomB(a, rng, 0.2);
            }
            try (LoraBatch batch = new LoraBatch(adapters, new int[] {1, 1, 1})) {
                Tensor x = Tensor.randn(rng, 1, DType.BF16, Device.CPU, 15, 1, 64);
                Tensor stacked = Tensor.randn(rng, 0.1, DType.BF16, Device.CPU, 15, 1, 64 + 32 + 128);
                Tensor before = stacked.cloneTensor();
                Tensor q = stacked.narrow(2, 0, 64);
                Tensor gate = stacked.narrow(2, 96, 128);
                assertThat(batch.addInPlace(x, 0, new int[] {0, 4}, new Tensor[] {q, gate})).isTrue();
                assertThat(stacked.narrow(2, 64, 32).bitEquals(before.narrow(2, 64, 32))).isTrue();
                Tensor xDown = Tensor.randn(rng, 1, DType.BF16, Device.CPU, 15, 1, 128);
                Tensor yDown = Tensor.randn(rng, 0.1, DType.BF16, Device.CPU, 15, 1, 64);
                Tensor yDownBefore = yDown.cloneTensor();
                assertThat(batch.addInPlace(xDown, 1, new int[] {6}, new Tensor[] {yDown})).isTrue();

                Object[][] cases = {{x, before.narrow(2, 0, 64), q, 0, 0}, {x, before.narrow(2, 96, 128), gate, 0, 4},
                        {xDown, yDownBefore, yDown, 1, 6}};
                for (Object[] k : cases) {
                    String key = LoraAdapter.key((int) k[3], LoraConfig.PROJECTIONS.get((int) k[4]));
                    for (int a = 0; a < 3; a++) {
                        Tensor in = ((Tensor) k[0]).narrow(0, 5 * a, 5).to(DType.F64);
                        Tensor y = ((Tensor) k[1]).narrow(0, 5 * a, 5).to(DType.F64);
                        Tensor aw = adapters.get(a).a(key).detach().to(DType.F64);
                        Tensor bw = adapters.get(a).b(key).detach().to(DType.F64).mul(c.scale());
                        Tensor want = y.add(in.matmul(aw.transpose(0, 1)).matmul(bw.transpose(0, 1)));
                        Tensor m = in.abs().matmul(aw.abs().transpose(0, 1)).matmul(bw.abs().transpose(0, 1));
                        double sums = (in.size(2) + c.r() + 2) * 0x1p-24 * (1 + 3 * u);
                        Tensor bound = want.abs().mul(u).add(m.mul((2 * u + u * u) * (1 + u)))
                                .add(m.add(y.abs()).mul(sums * (1 + u)));
                        Tensor got = ((Tensor) k[2]).narrow(0, 5 * a, 5).to(DType.F64);
                        assertThat(got.sub(want).abs().sub(bound).max().item()).as("agent %d, %s", a, key)
                                .isLessThanOrEqualTo(0.0);
                        assertThat(want.sub(y).abs().max().item()).isGreaterThan(0.05 * m.max().item());
                    }
                }
                // passes the host does not take: nothing changes
                Tensor y32 = Tensor.randn(rng, 0.1, DType.F32, Device.CPU, 15, 1, 64);
                Tensor y32Before = y32.cloneTensor();
                assertThat(batch.addInPlace(x.to(DType.F32), 0, new int[] {0}, new Tensor[] {y32})).isFalse();
                assertThat(y32.bitEquals(y32Before)).isTrue();
                Tensor xLong = Tensor.randn(rng, 1, DType.BF16, Device.CPU, 3, LoraBatch.BF16_PRODUCT_TOKENS, 64);
                Tensor yLong = Tensor.randn(rng, 0.1, DType.BF16, Device.CPU, 3, LoraBatch.BF16_PRODUCT_TOKENS, 64);
                Tensor yLongBefore = yLong.cloneTensor();
                assertThat(batch.addInPlace(xLong, 0, new int[] {0}, new Tensor[] {yLong})).isFalse();
                assertThat(yLong.bitEquals(yLongBefore)).isTrue();
            }
        } finally {
            adapters.forEach(LoraAdapter::close);
        }
    }

    /**
     * A bf16 team's decoding step adds every adapted projection of every layer on the host, once
     * each, in the layers' order: the wiring of {@link DecoderLm}'s projections to
     * {@link LoraBatch#addInPlace} (the additions' values are the test above's), through the plain
     * products and through the base's packed weights (oneDNN, a real team's path, whose stacked q, k, v
     * and gate, up products come as views). Against the same step through libtorch's adapter products
     * ({@code hostKernel} off) the logits differ only by A's and B's rounding to bf16 (2u of each
     * addition, u = 2⁻⁸) and one rounding of each output fewer: at most {@code 8u·E + 4} ulps of the
     * largest logit, E the adapters' effect on the logits (their distance from the bare base's; 4.5
     * ulps against a bound of 14 unpacked). An addition on another projection's view or another
     * agent's rows moves them by about E, four times the bound or more.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aBf16TeamsDecodingStepAddsEveryAdaptedProjectionOnTheHost(boolean packed) {
        HostLoraKernelTest.kernel();
        ModelConfig c = packed ? TinyConfigs.wide("qwen2", false) : ModelPresets.config("qwen2", "tiny", 64, 1, 2, "bfloat16");
        LoraConfig lc = new LoraConfig(4, 8, 0, List.of("all-linear"), false);
        boolean before = Engine.oneDnnLinear();
        List<LoraAdapter> adapters = new ArrayList<>();
        try (DecoderLm base = DecoderLm.random(c, DType.BF16, Device.CPU, 5); Scope s = Scope.open();
                GradMode g = GradMode.inference(); Rng rng = new Rng(12)) {
            for (int a = 0; a < 3; a++) {
                LoraAdapter ad = LoraAdapter.init(c, lc, DType.F32, Device.CPU, 40 + a);
                randomB(ad, rng, 0.5);
                adapters.add(ad);
            }
            Engine.setOneDnnLinear(packed);
            Tensor[] logits = new Tensor[3];
            List<String> log = new ArrayList<>();
            for (int v = 0; v < 3; v++) { // host, libtorch, bare base
                LoraBatch.hostKernel = v == 0;
                try (DecoderLm team = v == 2 ? null : base.withAdapters(adapters, new int[] {1, 1, 1});
                        KvCache cache = KvCache.allocate(c, 6, 16, DType.BF16, Device.CPU)) {
                    DecoderLm m = v == 2 ? base : team;
                    Tensor pos = Tensor.arangeOf(4, Device.CPU).view(1, -1).expand(6, 4).contiguous();
                    m.forward(rows(longIds(6, 4), 0, 6), pos, null, cache, 3);
                    DecoderLm.DecodeWeights weights = packed ? m.decodeWeights(6) : null;
                    assertThat(weights != null).isEqualTo(packed);
                    if (v == 0) {
                        team.adapterBatch().hostLog = log;
                    }
                    logits[v] = m.forward(Tensor.ofLongs(new long[] {3, 9, 27, 5, 15, 45}, Device.CPU, 6, 1),
                            Tensor.fullOf(4, DType.I64, Device.CPU, 6, 1), null, cache, 0, weights).logits();
                }
            }
            List<String> want = new ArrayList<>();
            for (int layer = 0; layer < c.numLayers(); layer++) {
                for (String p : LoraConfig.PROJECTIONS) {
                    want.add(LoraAdapter.key(layer, p));
                }
            }
            assertThat(log).containsExactlyElementsOf(want);
            double ulp = Math.scalb(1.0, Math.getExponent(logits[1].abs().max().item()) - 7); // of the largest logit
            double effect = logits[2].maxAbsDiff(logits[1]);
            assertThat(logits[0].maxAbsDiff(logits[1])).isLessThanOrEqualTo(8 * 0x1p-8 * effect + 4 * ulp);
            assertThat(effect).isGreaterThan(4 * (8 * 0x1p-8 * effect + 4 * ulp));
        } finally {
            LoraBatch.hostKernel = true;
            Engine.setOneDnnLinear(before);
            adapters.forEach(LoraAdapter::close);
        }
    }

    @Test
    void rowsThatDoNotSplitIntoTheGroupsAreRefused() {
        LoraConfig c = new LoraConfig(2, 4, 0, List.of("q_proj"), false);
        try (DecoderLm base = DecoderLm.random(MODEL, DType.F32, Device.CPU, 3);
                LoraAdapter a0 = trained(c, 1); LoraAdapter a1 = trained(c, 2);
                DecoderLm team = base.withAdapters(List.of(a0, a1), new int[] {1, 2});
                Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            assertThatThrownBy(() -> logits(team, IDS, 0, 4)).hasMessageContaining("multiple of 3 rows");
            assertThat(logits(team, IDS, 0, 6).size(0)).isEqualTo(6); // two rows per share
            assertThatThrownBy(() -> new LoraBatch(List.of(a0), new int[] {1, 1})).hasMessageContaining("row groups");
        }
    }
}
