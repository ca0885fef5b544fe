package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.generation.PaddedBatch;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class DecoderLmTest {
    private static final long[] IDS = {5, 17, 3, 42, 9, 11, 60, 1};

    @ParameterizedTest
    @CsvSource({"qwen2,false", "qwen2,true", "llama,false", "llama,true", "qwen3,false", "qwen3,true", "mistral,false"})
    void forwardMatchesIndependentReference(String type, boolean tied) {
        ModelConfig c = TinyConfigs.of(type, tied, "float32");
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 7); Scope s = Scope.open();
                GradMode g = GradMode.noGrad()) {
            // perturb norms and biases so that they matter
            m.namedParameters().forEach((name, p) -> {
                if (name.endsWith("norm.weight") || name.endsWith(".bias")) {
                    p.copy_(Tensor.randn(new comlrl.tensor.Rng(name.hashCode()), 0.5, DType.F32, Device.CPU, p.shape()).add(name.endsWith("bias") ? 0 : 1));
                }
            });
            double[][] expected = new ReferenceForward(c, m.namedParameters()).logits(IDS);
            Tensor ids = Tensor.ofLongs(IDS, Device.CPU, 1, IDS.length);
            Tensor pos = Tensor.arangeOf(IDS.length, Device.CPU).view(1, -1);
            float[] got = m.forward(ids, pos, null, null, 0).logits().toFloatArray();
            for (int t = 0; t < IDS.length; t++) {
                for (int v = 0; v < c.vocabSize(); v++) {
                    assertThat((double) got[t * c.vocabSize() + v]).as("%s t=%d v=%d", type, t, v)
                            .isCloseTo(expected[t][v], org.assertj.core.data.Offset.offset(2e-4));
                }
            }
        }
    }

    /**
     * A 16-bit pass on the CPU runs OpenBLAS on one thread, with or without adapters: its attention,
     * computed in float32, runs OpenBLAS products inside libtorch's parallel loops, where OpenBLAS's own
     * threads compete with the spinning OpenMP workers (a bf16 prefill of 512 tokens at the 0.5B shape
     * took 23.1 s on two OpenBLAS threads, 0.51 s on one; 16 positions over a 520-token cache are no
     * better off). Float32 passes of many rows run libtorch on
     * one thread instead ({@link Engine#blasSection()}), unless they run on packed weights (a prefill on
     * the copy decoding packs), whose products are oneDNN's on libtorch's threads: those run OpenBLAS on
     * one thread as 16-bit passes do, and a float32 decoding step of few rows leaves both; float64
     * passes leave both as they are.
     */
    @Test
    void sixteenBitPassesRunOpenBlasOnOneThread() {
        long many = DecoderLm.BLAS_ROWS + 1;
        for (DType dtype : new DType[] {DType.BF16, DType.F16}) {
            ModelConfig c = TinyConfigs.of("qwen2", false, dtype == DType.BF16 ? "bfloat16" : "float16");
            try (DecoderLm m = DecoderLm.random(c, dtype, Device.CPU, 5)) {
                for (long tokens : new long[] {1, 16, 512}) {
                    try (Engine.BlasSection forward = m.passSection(tokens, null)) {
                        assertThat(forward).as("%s forward of %d tokens", dtype, tokens).isNotNull();
                        assertThat(forward.oneBlasThread()).isTrue();
                    }
                }
                try (Engine.BlasSection backward = m.backwardSection()) {
                    assertThat(backward).as("%s backward", dtype).isNotNull();
                    assertThat(backward.oneBlasThread()).isTrue();
                }
            }
        }
        try (DecoderLm m = DecoderLm.random(TinyConfigs.of("qwen2", false, "float32"), DType.F32, Device.CPU, 5);
                Engine.BlasSection forward = m.passSection(many, null);
                Engine.BlasSection backward = m.backwardSection()) {
            assertThat(forward.oneTorchThread()).isTrue();
            assertThat(backward.oneTorchThread()).isTrue();
        }
        if (Engine.oneDnnLinear()) {
            try (DecoderLm m = DecoderLm.random(TinyConfigs.wide("qwen2", false), DType.F32, Device.CPU, 5)) {
                DecoderLm.DecodeWeights packed = m.decodeWeights(4);
                assertThat(packed).as("a model wide enough to pack").isNotNull();
                try (Engine.BlasSection prefill = m.passSection(many, packed)) {
                    assertThat(prefill).as("a float32 prefill on packed weights").isNotNull();
                    assertThat(prefill.oneBlasThread()).isTrue();
                    assertThat(prefill.oneTorchThread()).isFalse();
                }
                assertThat(m.passSection(4, packed)).as("a float32 decoding step of 4 rows").isNull();
            }
        }
        try (DecoderLm m = DecoderLm.random(TinyConfigs.of("qwen2", false, "float64"), DType.F64, Device.CPU, 5)) {
            assertThat(m.passSection(many, null)).isNull();
            assertThat(m.backwardSection()).isNull();
        }
    }

    /**
     * A generation long enough to decode on packed weights packs them before its prefill and prefills
     * on them (one pass of the prompts' tokens); a short one packs nothing. At the 0.5B shape the
     * prefill of one 64-token prompt took 270 against 360 ms in float32 so.
     */
    @Test
    void aGenerationPrefillsOnTheWeightsItDecodesWith() {
        if (!Engine.oneDnnLinear()) {
            return; // nothing is packed without oneDNN
        }
        ModelConfig c = TinyConfigs.wide("qwen2", false);
        long eos = c.vocabSize() - 1;
        List<long[]> prompts = List.of(new long[] {5, 17, 3, 42, 9}, new long[] {11, 60, 1});
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 6)) {
            comlrl.generation.Generator gen = new comlrl.generation.Generator(m, java.util.Set.of(eos), eos, ids -> "");
            gen.generate(prompts, comlrl.generation.SamplingConfig.sample(1.0, null, null, 4, 2), 1);
            assertThat(m.holdsDecodeWeights()).as("4 new tokens: too few to pack").isFalse();
            gen.generate(prompts, comlrl.generation.SamplingConfig.sample(1.0, null, null, 30, 2), 1);
            assertThat(m.holdsDecodeWeights()).isTrue();
            assertThat(m.decodeWeights(4).prefills.get()).as("prefills on the packed set").isEqualTo(1);
        }
    }

    /**
     * A prefill runs on the packed weights only when every projection is packed and serves its row
     * count ({@code DecodeWeights.serves}); here the MLP is too narrow to pack (its projections stay
     * plain, the head and attention pack), so the prefill takes the plain weights, and a float32
     * projection is not left to one OpenBLAS thread.
     */
    @Test
    void aPrefillTakesThePlainWeightsWhereAProjectionIsNotPacked() throws Exception {
        if (!Engine.oneDnnLinear()) {
            return; // nothing is packed without oneDNN
        }
        com.fasterxml.jackson.databind.node.ObjectNode n = (com.fasterxml.jackson.databind.node.ObjectNode)
                new com.fasterxml.jackson.databind.ObjectMapper().readTree(TinyConfigs.wide("qwen2", false).toJson());
        n.put("intermediate_size", 128);
        ModelConfig c = ModelConfig.fromJson(n, "a narrow MLP");
        long eos = c.vocabSize() - 1;
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 6)) {
            comlrl.generation.Generator gen = new comlrl.generation.Generator(m, java.util.Set.of(eos), eos, ids -> "");
            gen.generate(List.of(new long[] {5, 17, 3, 42, 9}), comlrl.generation.SamplingConfig.sample(1.0, null, null, 30, 2), 1);
            assertThat(m.holdsDecodeWeights()).as("the head and attention packed").isTrue();
            assertThat(m.decodeWeights(2).prefills.get()).as("prefills on the packed set").isZero();
        }
    }

    @ParameterizedTest
    @CsvSource({"qwen2", "llama", "qwen3"})
    void kvCacheDecodingEqualsFullRecomputation(String type) {
        ModelConfig c = TinyConfigs.of(type, false, "float32");
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 3); Scope s = Scope.open();
                GradMode g = GradMode.inference(); KvCache cache = KvCache.allocate(c, 1, 16, DType.F32, Device.CPU)) {
            Tensor ids = Tensor.ofLongs(IDS, Device.CPU, 1, IDS.length);
            Tensor pos = Tensor.arangeOf(IDS.length, Device.CPU).view(1, -1);
            Tensor full = m.forward(ids, pos, null, null, 0).logits();
            // prefill 3 tokens, then 2 tokens at once, then one at a time
            Tensor a = m.forward(ids.narrow(1, 0, 3), pos.narrow(1, 0, 3), null, cache, 0).logits();
            Tensor b = m.forward(ids.narrow(1, 3, 2), pos.narrow(1, 3, 2), null, cache, 0).logits();
            assertThat(a.maxAbsDiff(full.narrow(1, 0, 3))).isLessThan(1e-5);
            assertThat(b.maxAbsDiff(full.narrow(1, 3, 2))).isLessThan(1e-5);
            for (int t = 5; t < IDS.length; t++) {
                Tensor step = m.forward(ids.narrow(1, t, 1), pos.narrow(1, t, 1), null, cache, 0).logits();
                assertThat(step.maxAbsDiff(full.narrow(1, t, 1))).isLessThan(1e-5);
            }
            assertThat(cache.length()).isEqualTo(IDS.length);
        }
    }

    /**
     * A 16-bit model's cache on the CPU holds float32 (attention computes in float32 there), and
     * decoding through it gives, bit for bit, the logits of a cache in the model's own dtype: the
     * same values, converted once when written rather than at every step.
     */
    @ParameterizedTest
    @CsvSource({"bfloat16", "float16"})
    void aSixteenBitModelsFloat32CacheDecodesBitForBitAsItsOwnDtype(String dtype) {
        ModelConfig c = TinyConfigs.of("qwen2", false, dtype);
        DType d = DType.fromTorchName(dtype);
        try (DecoderLm m = DecoderLm.random(c, d, Device.CPU, 5); Scope s = Scope.open(); GradMode g = GradMode.inference();
                KvCache wide = KvCache.allocate(c, 2, 16, d, Device.CPU);
                KvCache own = KvCache.allocateAs(c, 2, 16, d, Device.CPU)) {
            assertThat(KvCache.storage(d, Device.CPU)).isEqualTo(DType.F32);
            assertThat(KvCache.storage(DType.F32, Device.CPU)).isEqualTo(DType.F32);
            Tensor ids = Tensor.ofLongs(IDS, Device.CPU, 2, 4);
            Tensor pos = Tensor.arangeOf(4, Device.CPU).view(1, -1).expand(2, 4).contiguous();
            Tensor a = m.forward(ids, pos, null, wide, 0).logits();
            Tensor b = m.forward(ids, pos, null, own, 0).logits();
            assertThat(a.bitEquals(b)).as("prefill").isTrue();
            for (int t = 0; t < 4; t++) {
                Tensor next = Tensor.ofLongs(new long[] {t + 1, 2 * t + 7}, Device.CPU, 2, 1);
                Tensor p = Tensor.fullOf(4 + t, DType.I64, Device.CPU, 2, 1);
                a = m.forward(next, p, null, wide, 0).logits();
                b = m.forward(next, p, null, own, 0).logits();
                assertThat(a.bitEquals(b)).as("step %d", t).isTrue();
                assertThat(a.dtype()).isEqualTo(d);
            }
        }
    }

    /**
     * oneDNN's inner products and OpenBLAS's products are the same sums in other orders. Bound on a
     * logit: each layer's products sum at most K = 1024 float32 terms (intermediate size; hidden
     * 512), each rounding adds at most u = 2^-24 of the magnitude, and the L = 2 layers' errors add:
     * |Δz| ≤ u·K·L·max|z| ≈ 1.2e-4·max|z| (measured: ~1e-6 at max|z| ≈ 1.8, AVX2 and AVX-512 kernels).
     * A wrong oneDNN product (transposed weight, lost bias, another row's input) moves logits by
     * about their own size. The packed weights of decoding ({@link DecoderLm#decodeWeights}: q, k, v
     * and gate, up each stacked into one product, with qwen2's q, k, v biases) are held to the same
     * bound: a stacked product split at the wrong place or a bias shifted moves logits as much.
     */
    @ParameterizedTest
    @CsvSource({"qwen2,false", "llama,true", "qwen3,false"})
    void decodingThroughOneDnnEqualsTheBlasForward(String type, boolean tied) {
        // wide enough for oneDNN to take the few-row projections (weights of at least 2^19 elements)
        ModelConfig c = TinyConfigs.wide(type, tied);
        boolean before = Engine.oneDnnLinear();
        int rounded = 0;
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 4); Scope s = Scope.open();
                GradMode g = GradMode.inference();
                KvCache blas = KvCache.allocate(c, 2, 16, DType.F32, Device.CPU);
                KvCache onednn = KvCache.allocate(c, 2, 16, DType.F32, Device.CPU);
                KvCache packedCache = KvCache.allocate(c, 2, 16, DType.F32, Device.CPU)) {
            // a random model's biases are zeros: make them count
            try (Rng rng = new Rng(3)) {
                m.namedParameters().forEach((name, w) -> {
                    if (name.endsWith(".bias")) {
                        w.copy_(Tensor.randn(rng, 0.5, DType.F32, Device.CPU, w.shape()));
                    }
                });
            }
            Tensor ids = Tensor.ofLongs(new long[] {5, 17, 3, 42, 9, 11, 60, 1}, Device.CPU, 2, 4);
            Tensor pos = Tensor.arangeOf(4, Device.CPU).view(1, -1).expand(2, 4).contiguous();
            Engine.setOneDnnLinear(false);
            m.forward(ids, pos, null, blas, 3);
            Engine.setOneDnnLinear(true);
            m.forward(ids, pos, null, onednn, 3);
            m.forward(ids, pos, null, packedCache, 3);
            // packed for 5 rows, decoding 2: one set serves every row count (PackedWeight.fits)
            DecoderLm.DecodeWeights packed = m.decodeWeights(5);
            assertThat(packed).isNotNull();
            assertThat(m.decodeWeights(2)).as("one packed set for every row count").isSameAs(packed);
            // a prefill (2 rows of 4 tokens) on the packed set: the same bound
            try (KvCache prefilled = KvCache.allocate(c, 2, 16, DType.F32, Device.CPU)) {
                Tensor fromPackedPrefill = m.forward(ids, pos, null, prefilled, 0, packed).logits();
                Engine.setOneDnnLinear(false);
                Tensor plainPrefill = m.forward(ids, pos, null, null, 0).logits();
                Engine.setOneDnnLinear(true);
                assertThat(packed.prefills.get()).as("the prefill ran on the packed set").isEqualTo(1);
                assertThat(fromPackedPrefill.maxAbsDiff(plainPrefill)).as("packed prefill")
                        .isLessThan(comlrl.tensor.Rounding.forwardBound(1024, 2, plainPrefill.abs().max().item()));
            }
            for (int t = 0; t < 4; t++) { // one token per row: the rows oneDNN serves
                Tensor next = Tensor.ofLongs(new long[] {t + 1, 2 * t + 7}, Device.CPU, 2, 1);
                Tensor p = Tensor.fullOf(4 + t, DType.I64, Device.CPU, 2, 1);
                Engine.setOneDnnLinear(false);
                Tensor a = m.forward(next, p, null, blas, 0).logits();
                Engine.setOneDnnLinear(true);
                Tensor b = m.forward(next, p, null, onednn, 0).logits();
                double bound = comlrl.tensor.Rounding.forwardBound(1024, 2, a.abs().max().item());
                assertThat(b.maxAbsDiff(a)).as("step %d", t).isLessThan(bound);
                rounded += b.bitEquals(a) ? 0 : 1;
                Tensor fromPacked = m.forward(next, p, null, packedCache, 0, packed).logits();
                assertThat(fromPacked.maxAbsDiff(a)).as("packed, step %d", t).isLessThan(bound);
            }
        } finally {
            Engine.setOneDnnLinear(before); // as the other tests (one JVM) expect it
        }
        // oneDNN ran: its other summation order shows in the last bits somewhere (in every step here;
        // one identical step on some CPU's kernels would be no failure)
        assertThat(rounded).as("steps whose logits oneDNN rounded otherwise than OpenBLAS").isPositive();
    }

    @Test
    void leftPaddedBatchEqualsUnpaddedRows() {
        ModelConfig c = TinyConfigs.of("qwen2", false, "float32");
        long[] shortRow = {7, 8, 9};
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 5); Scope s = Scope.open();
                GradMode g = GradMode.inference()) {
            PaddedBatch batch = PaddedBatch.leftPadded(List.of(IDS, shortRow), 0, Device.CPU);
            Tensor logits = m.forward(batch.ids(), batch.positions(), batch.mask(), null, 0).logits();
            for (long[] row : List.of(IDS, shortRow)) {
                int idx = row == IDS ? 0 : 1;
                Tensor alone = m.forward(Tensor.ofLongs(row, Device.CPU, 1, row.length),
                        Tensor.arangeOf(row.length, Device.CPU).view(1, -1), null, null, 0).logits();
                Tensor inBatch = logits.narrow(0, idx, 1).narrow(1, IDS.length - row.length, row.length);
                assertThat(inBatch.maxAbsDiff(alone)).isLessThan(1e-5);
            }
            assertThat(logits.isFinite().allTrue()).isTrue();
        }
    }

    @Test
    void bf16ForwardStaysCloseToF32() {
        ModelConfig c = TinyConfigs.of("qwen2", false, "float32");
        try (DecoderLm f32 = DecoderLm.random(c, DType.F32, Device.CPU, 9);
                Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            Map<String, Tensor> weights = new HashMap<>(f32.namedParameters());
            try (DecoderLm bf16 = DecoderLm.fromWeights(c, weights, DType.BF16, Device.CPU, "test")) {
                assertThat(bf16.dtype()).isEqualTo(DType.BF16);
                assertThat(bf16.config().raw().get("torch_dtype").asText()).isEqualTo("bfloat16");
                Tensor ids = Tensor.ofLongs(IDS, Device.CPU, 1, IDS.length);
                Tensor pos = Tensor.arangeOf(IDS.length, Device.CPU).view(1, -1);
                Tensor a = f32.forward(ids, pos, null, null, 0).logits();
                Tensor b = bf16.forward(ids, pos, null, null, 0).logits();
                assertThat(b.dtype()).isEqualTo(DType.BF16);
                // bf16 keeps 8 significant bits (u = 2^-8 ≈ 3.9e-3): weights, activations and each layer's
                // output are rounded, moving the logits (|z| < 0.5 here) by a few u·|z| ≈ 2e-3 (measured);
                // 0.05 allows 25 times that and still fails a bf16 forward that is wrong, not just coarse
                assertThat(b.maxAbsDiff(a)).isLessThan(0.05).isGreaterThan(0.0);
            }
        }
    }

    @Test
    void missingOrMisshapenTensorsAreNamed() {
        ModelConfig c = TinyConfigs.of("qwen2", false, "float32");
        try (DecoderLm m = DecoderLm.random(c, DType.F32, Device.CPU, 1); Scope s = Scope.open()) {
            Map<String, Tensor> w = new HashMap<>(m.namedParameters());
            w.remove("model.layers.1.self_attn.k_proj.bias");
            assertThatThrownBy(() -> DecoderLm.fromWeights(c, w, DType.F32, Device.CPU, "dir/x"))
                    .hasMessageContaining("missing tensor 'model.layers.1.self_attn.k_proj.bias'")
                    .hasMessageContaining("[16]");
            Map<String, Tensor> w2 = new HashMap<>(m.namedParameters());
            w2.put("model.norm.weight", Tensor.zerosOf(DType.F32, Device.CPU, 31));
            assertThatThrownBy(() -> DecoderLm.fromWeights(c, w2, DType.F32, Device.CPU, "dir/x"))
                    .hasMessageContaining("'model.norm.weight' has shape [31]")
                    .hasMessageContaining("[32]");
        }
    }
}
