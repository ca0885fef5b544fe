package comlrl.model;

import comlrl.generation.Scorer;
import comlrl.tensor.AdamW;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Phase breakdown of one scoring pass (forward + backward through {@link DecoderLm}) at the
 * Qwen2.5-0.5B shape, 4 rows × (64 prompt + 32 completion) tokens, logits for the last 32:
 * each layer part timed on its own at the layer's shapes (forward, and backward from a random
 * upstream gradient), the whole pass through {@link Scorer#backwardWeighted}, one AdamW step, and
 * the memory high-water mark (VmHWM) after each. Medians of the repetitions.
 *
 * <pre>
 *   mvn -o -q dependency:build-classpath -Dmdep.outputFile=cp.txt -Dmdep.includeScope=test
 *   COMLRL_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 java -Dorg.bytedeco.javacpp.nopointergc=true \
 *       -cp target/classes:target/test-classes:$(cat cp.txt) comlrl.model.ScoringPhasesProbe \
 *       [bfloat16|float32] [reps] [parts|score|pass|all|mm|head|headpass|attn]
 * </pre>
 * Run it with {@code bin/comlrl}'s glibc settings ({@code MALLOC_MMAP_THRESHOLD_}, {@code MALLOC_TRIM_THRESHOLD_},
 * {@code MALLOC_TOP_PAD_}, {@code GLIBC_TUNABLES=glibc.malloc.hugetlb=1}) to measure what training sees:
 * without them a pass spends much of its time clearing fresh pages (it says so when they are missing).
 * {@code -Dlayers=N} (before {@code -cp}): the 0.5B shape with N layers; {@code -Dbatch=N}: N rows in
 * place of 4 (a team's rows in one pass); {@code -Dshared=true}: the rows
 * continue one prompt (the G samples of a prompt, scored with it computed once); {@code -Dlora=P,...}
 * (or {@code all-linear}): {@code pass} and {@code score} train a rank-16 adapter (α 32) on projections P of
 * the frozen model, in the adapters' training dtype ({@code -DloraBf16=true}: in the model's 16-bit
 * dtype, as under {@code torch.autocast}). {@code headpass}: the
 * scoring head forward and backward, autograd through the float32 log-softmax against {@link TokenHead}.
 * {@code parts}: each layer part forward and backward; {@code score}: whole passes; {@code pass}:
 * whole passes and AdamW steps; {@code mm}, {@code head}, {@code attn}: the products of a linear
 * layer, of the head, and attention at decoding shapes, in several layouts, without autograd.
 */
public final class ScoringPhasesProbe {
    /** Rows (sequences) of a pass: {@code -Dbatch=N}, 4 by default (one agent's G = 4). */
    private static final long B = Long.getLong("batch", 4);
    private static final long PROMPT = 64;
    private static final long NEW = 32;
    private static final long S = PROMPT + NEW;

    private ScoringPhasesProbe() {
    }

    public static void main(String[] args) throws Exception {
        String dtypeName = args.length > 0 ? args[0] : "bfloat16";
        int reps = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        String what = args.length > 2 ? args[2] : "all";
        Engine.init();
        ModelConfig config = ModelPresets.config("qwen2", "qwen2.5-0.5b", 0, -1, 0, dtypeName);
        if (Integer.getInteger("layers") != null) { // same E and V, fewer layers (the head's cost does not depend on them)
            com.fasterxml.jackson.databind.node.ObjectNode n = (com.fasterxml.jackson.databind.node.ObjectNode)
                    new com.fasterxml.jackson.databind.ObjectMapper().readTree(config.toJson());
            n.put("num_hidden_layers", Integer.getInteger("layers"));
            config = ModelConfig.fromJson(n, "probe config");
        }
        DType dtype = config.dtype();
        System.out.printf("dtype %s, threads %d, rows %d, reps %d, VmHWM at start %d MiB%n", dtype, Engine.numThreads(),
                B, reps, hwm());
        if (System.getenv("MALLOC_MMAP_THRESHOLD_") == null || System.getenv("GLIBC_TUNABLES") == null) {
            System.out.println("note: without bin/comlrl's MALLOC_* and GLIBC_TUNABLES settings the passes clear "
                    + "fresh pages that training reuses (see the class comment)");
        }
        if (what.equals("headpass")) {
            headPass(config, dtype, reps);
            return;
        }
        if (what.equals("head")) {
            headProducts(config, dtype, reps);
            return;
        }
        if (what.equals("adamw")) {
            adamw(config, dtype, reps);
            return;
        }
        if (what.equals("attn")) {
            for (long t : new long[] {96, 600}) {
                try (Scope s = Scope.open(); Rng rng = new Rng(1)) {
                    Tensor q = Tensor.randn(rng, 1, DType.F32, Device.CPU, 8, 14, 1, 64).to(dtype);
                    Tensor k = Tensor.randn(rng, 1, DType.F32, Device.CPU, 8, 2, t, 64).to(dtype);
                    Tensor v = Tensor.randn(rng, 1, DType.F32, Device.CPU, 8, 2, t, 64).to(dtype);
                    System.out.printf("decode T=%d sdpa %s %.3f ms, via float32 %.3f ms%n", t, dtype,
                            timed(reps, () -> Tensor.attention(q, k, v, null, false, 0.125, true)),
                            timed(reps, () -> Tensor.attention(q.toFloat(), k.toFloat(), v.toFloat(), null, false,
                                    0.125, true).to(dtype)));
                }
            }
            return;
        }
        if (what.equals("mm")) {
            products(dtype, reps);
            return;
        }
        if (!what.equals("pass")) {
            parts(config, dtype, reps);
        }
        if (!what.equals("parts")) {
            pass(config, dtype, reps, !what.equals("score"));
        }
    }

    /** One row of the table: medians of forward and backward over the repetitions. */
    private static void report(String name, List<Double> fwd, List<Double> bwd, int perPass) {
        double f = median(fwd);
        double b = median(bwd);
        double fMin = fwd.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        double bMin = bwd.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        System.out.printf("%-34s fwd %8.2f (min %7.2f) ms  bwd %8.2f (min %7.2f) ms  x%-3d per pass: %8.1f ms"
                + "  (HWM %d MiB)%n", name, f, fMin, b, bMin, perPass, (f + b) * perPass, hwm());
    }

    /** Times {@code fwd} and the backward of its result against a fixed random gradient. */
    private static void part(String name, int reps, int perPass, List<Tensor> leaves, Supplier<Tensor> fwd) {
        List<Double> tf = new ArrayList<>();
        List<Double> tb = new ArrayList<>();
        for (int r = 0; r < reps + 1; r++) {
            leaves.forEach(Tensor::zeroGrad);
            try (Scope s = Scope.open()) {
                long t0 = System.nanoTime();
                Tensor y = fwd.get();
                long t1 = System.nanoTime();
                Tensor g;
                try (Rng rng = new Rng(r)) {
                    g = Tensor.randn(rng, 1.0, DType.F32, Device.CPU, y.shape()).to(y.dtype());
                }
                long t2 = System.nanoTime();
                y.backward(g);
                long t3 = System.nanoTime();
                if (r > 0) { // the first is a warm-up
                    tf.add((t1 - t0) / 1e6);
                    tb.add((t3 - t2) / 1e6);
                }
            }
        }
        report(name, tf, tb, perPass);
    }

    private static Tensor leaf(Rng rng, double std, DType dtype, long... shape) {
        try (Scope s = Scope.open()) {
            return Tensor.randn(rng, std, DType.F32, Device.CPU, shape).to(dtype).keep().requiresGrad(true);
        }
    }

    private static void parts(ModelConfig c, DType dt, int reps) {
        long e = c.hiddenSize();
        long h = c.numHeads();
        long kvh = c.numKvHeads();
        long d = c.headDim();
        long inter = c.intermediateSize();
        long v = c.vocabSize();
        long layers = c.numLayers();
        int l = (int) layers;
        try (Rng rng = new Rng(7)) {
            Tensor x = leaf(rng, 1, dt, B, S, e);
            Tensor norm = leaf(rng, 0.1, dt, e);
            Tensor wq = leaf(rng, 0.02, dt, e, e);
            Tensor bq = leaf(rng, 0.02, dt, e);
            Tensor wk = leaf(rng, 0.02, dt, kvh * d, e);
            Tensor bk = leaf(rng, 0.02, dt, kvh * d);
            Tensor wo = leaf(rng, 0.02, dt, e, e);
            Tensor wg = leaf(rng, 0.02, dt, inter, e);
            Tensor wu = leaf(rng, 0.02, dt, inter, e);
            Tensor wd = leaf(rng, 0.02, dt, e, inter);
            Tensor xi = leaf(rng, 1, dt, B, S, inter);
            Tensor q = leaf(rng, 1, dt, B, S, h, d);
            Tensor k = leaf(rng, 1, dt, B, S, kvh, d);
            Tensor vv = leaf(rng, 1, dt, B, S, kvh, d);
            Tensor head = leaf(rng, 0.02, dt, v, e);
            Tensor cos;
            Tensor sin;
            Tensor rot;
            Tensor mask;
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                Tensor pos = Tensor.arangeOf(S, Device.CPU).toFloat().view(1, 1, S, 1);
                Tensor freqs = pos.mul(Tensor.arangeOf(d, Device.CPU).toFloat().view(1, 1, 1, d).mul(0.01));
                cos = freqs.cos().to(dt).keep();
                sin = freqs.sin().to(dt).keep();
                float[] r = new float[(int) (d * d)];
                for (int j = 0; j < d / 2; j++) {
                    r[(int) ((j + d / 2) * d + j)] = -1f;
                    r[(int) (j * d + j + d / 2)] = 1f;
                }
                rot = Tensor.ofFloats(r, Device.CPU, d, d).to(dt).keep();
                long[] lens = {96, 80, 70, 90};
                long[] valid = new long[(int) (B * S)];
                for (int b = 0; b < B; b++) {
                    for (long j = S - lens[b % lens.length]; j < S; j++) {
                        valid[(int) (b * S + j)] = 1;
                    }
                }
                Tensor am = Tensor.ofLongs(valid, Device.CPU, B, S);
                Tensor idx = Tensor.arangeOf(S, Device.CPU);
                Tensor causal = idx.view(1, S).lt(idx.view(S, 1).add(1)).unsqueeze(0).unsqueeze(0);
                Tensor self = idx.view(1, S).eq(idx.view(S, 1)).unsqueeze(0).unsqueeze(0);
                mask = causal.logicalAnd(am.ne(0).unsqueeze(1).unsqueeze(1)).logicalOr(self).keep();
            }
            Tensor targets;
            try (Scope s = Scope.open(); Rng r2 = new Rng(3)) {
                targets = Tensor.randn(r2, 1, DType.F32, Device.CPU, B, NEW, 1).abs().mul(1000).to(DType.I64).keep();
            }
            part("rmsNorm [B,S,E]", reps, 2 * l + 1, List.of(x, norm), () -> x.rmsNorm(norm, 1e-6));
            part("q proj E->E +bias", reps, l, List.of(x, wq, bq), () -> x.linear(wq, bq));
            part("k/v proj E->128 +bias", reps, 2 * l, List.of(x, wk, bk), () -> x.linear(wk, bk));
            part("o proj E->E", reps, l, List.of(x, wo), () -> x.linear(wo, null));
            part("gate/up proj E->I", reps, 2 * l, List.of(x, wg), () -> x.linear(wg, null));
            part("gate/up proj E->I (2-D input)", reps, 2 * l, List.of(x, wg), () -> x.view(B * S, e).linear(wg, null));
            part("gate/up proj E->I (matmul W^T)", reps, 2 * l, List.of(x, wg), () -> x.matmul(wg.transpose(0, 1)));
            part("down proj I->E", reps, l, List.of(xi, wd), () -> xi.linear(wd, null));
            part("silu(g)*u [B,S,I]", reps, l, List.of(xi), () -> xi.silu().mul(xi));
            part("rope q (x@R)", reps, l, List.of(q),
                    () -> { Tensor t = q.transpose(1, 2); return t.mul(cos).add(t.matmul(rot).mul(sin)); });
            part("rope k (x@R)", reps, l, List.of(k),
                    () -> { Tensor t = k.transpose(1, 2); return t.mul(cos).add(t.matmul(rot).mul(sin)); });
            part("rope q (cat halves)", reps, l, List.of(q), () -> {
                Tensor t = q.transpose(1, 2);
                Tensor rh = Tensor.cat(List.of(t.narrow(3, d / 2, d / 2).neg(), t.narrow(3, 0, d / 2)), 3);
                return t.mul(cos).add(rh.mul(sin));
            });
            part("attention (bool mask, gqa)", reps, l, List.of(q, k, vv), () -> Tensor.attention(q.transpose(1, 2),
                    k.transpose(1, 2), vv.transpose(1, 2), mask, false, 0.125, true).transpose(1, 2).reshape(B, S, e));
            part("attention (bool mask, kv repeated)", reps, l, List.of(q, k, vv), () -> Tensor.attention(
                    q.transpose(1, 2), k.transpose(1, 2).repeatInterleave(h / kvh, 1),
                    vv.transpose(1, 2).repeatInterleave(h / kvh, 1), mask, false, 0.125, false)
                    .transpose(1, 2).reshape(B, S, e));
            part("attention (causal, no mask, gqa)", reps, l, List.of(q, k, vv), () -> Tensor.attention(
                    q.transpose(1, 2), k.transpose(1, 2), vv.transpose(1, 2), null, true, 0.125, true)
                    .transpose(1, 2).reshape(B, S, e));
            part("attention f32 (converted q,k,v)", reps, l, List.of(q, k, vv), () -> Tensor.attention(
                    q.transpose(1, 2).toFloat(), k.transpose(1, 2).toFloat(), vv.transpose(1, 2).toFloat(), mask,
                    false, 0.125, true).to(dt).transpose(1, 2).reshape(B, S, e));
            part("attention math (bf16 products)", reps, l, List.of(q, k, vv), () -> {
                Tensor kr = k.transpose(1, 2).repeatInterleave(h / kvh, 1);
                Tensor vr = vv.transpose(1, 2).repeatInterleave(h / kvh, 1);
                Tensor sc = q.transpose(1, 2).matmul(kr.transpose(2, 3)).mul(0.125).maskedFill(mask.logicalNot(),
                        Double.NEGATIVE_INFINITY);
                return sc.softmax(-1).matmul(vr).transpose(1, 2).reshape(B, S, e);
            });
            part("residual add [B,S,E]", reps, 2 * l, List.of(x), () -> x.add(x));
            part("head linear [B,32,E]x[V,E]", reps, 1, List.of(x, head),
                    () -> x.narrow(1, PROMPT - 1, NEW).linear(head, null));
            part("head + f32 logSoftmax + gather", reps, 1, List.of(x, head), () -> x.narrow(1, PROMPT - 1, NEW)
                    .linear(head, null).toFloat().logSoftmax(-1).gather(2, targets).sum());
            part("embedding lookup (leaf)", reps, 1, List.of(head), () -> Tensor.embedding(head, targets.squeeze(2)));
        }
    }

    /** Times {@code f} without autograd: median of {@code reps} after one warm-up. */
    private static double timed(int reps, Supplier<Tensor> f) {
        List<Double> t = new ArrayList<>();
        for (int r = 0; r < reps + 1; r++) {
            try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
                long a = System.nanoTime();
                f.get();
                long b = System.nanoTime();
                if (r > 0) {
                    t.add((b - a) / 1e6);
                }
            }
        }
        return median(t);
    }

    /** AdamW steps over the tied embedding's shape and eight MLP weights' shapes, gradients random. */
    private static void adamw(ModelConfig c, DType dt, int reps) {
        List<Tensor> ps = new ArrayList<>();
        try (Rng rng = new Rng(2)) {
            List<long[]> shapes = new ArrayList<>(List.of(new long[] {c.vocabSize(), c.hiddenSize()}));
            for (int i = 0; i < 8; i++) {
                shapes.add(new long[] {c.intermediateSize(), c.hiddenSize()});
            }
            for (long[] shape : shapes) {
                ps.add(leaf(rng, 0.02, dt, shape));
            }
        }
        long n = ps.stream().mapToLong(Tensor::numel).sum();
        try (AdamW opt = new AdamW(ps, 1e-5, 0.01)) {
            List<Double> t = new ArrayList<>();
            for (int r = 0; r < reps + 1; r++) {
                try (Scope s = Scope.open(); Rng rng = new Rng(r)) {
                    for (Tensor p : ps) {
                        p.mul(Tensor.randn(rng, 1e-3, DType.F32, Device.CPU, p.shape()).to(dt)).sum().backward();
                    }
                }
                long a = System.nanoTime();
                opt.step();
                long b = System.nanoTime();
                opt.zeroGrad();
                if (r > 0) {
                    t.add((b - a) / 1e6);
                }
                System.out.printf("  AdamW step %.0f ms (HWM %d MiB)%n", (b - a) / 1e6, hwm());
            }
            double ms = median(t);
            System.out.printf("AdamW %d parameters: median %.0f ms, %.1f GB/s at 40 B per parameter%n", n, ms,
                    40.0 * n / ms / 1e6);
        }
    }

    /**
     * The scoring head at B × NEW rows, forward and backward, the old and the new way, alternating
     * within each repetition: autograd through {@code float(x Wᵀ).logSoftmax().gather(y)} (product and
     * log-softmax/gather timed apart) against {@link TokenHead} (16-bit models' path), W's gradient
     * dropped after each repetition as a step's zeroGrad does.
     */
    private static void headPass(ModelConfig c, DType dt, int reps) {
        long e = c.hiddenSize();
        long v = c.vocabSize();
        long m = B * NEW;
        String side = System.getProperty("side", "both"); // -Dside=old|new: one side only (its own VmHWM)
        try (Rng rng = new Rng(1)) {
            Tensor w = leaf(rng, 0.02, dt, v, e);
            Tensor x = leaf(rng, 1, dt, B, NEW, e);
            Tensor y;
            Tensor g;
            Tensor buffer;
            try (Scope s = Scope.open()) {
                y = Tensor.randn(rng, 1, DType.F32, Device.CPU, B, NEW, 1).abs().mul(1000).to(DType.I64).keep();
                g = Tensor.randn(rng, 1, DType.F32, Device.CPU, B, NEW).keep();
                buffer = Tensor.emptyOf(dt, Device.CPU, v, e).keep();
            }
            List<Double> oldProduct = new ArrayList<>();
            List<Double> oldSoftmax = new ArrayList<>();
            List<Double> oldBackward = new ArrayList<>();
            List<Double> newForward = new ArrayList<>();
            List<Double> newBackward = new ArrayList<>();
            for (int r = 0; r < reps + 1; r++) {
                w.zeroGrad();
                x.zeroGrad();
                long t0 = 0;
                long t1 = 0;
                long t2 = 0;
                long t3 = 0;
                do try (Scope s = Scope.open()) {
                    if (side.equals("new")) {
                        break;
                    }
                    t0 = System.nanoTime();
                    Tensor logits = x.linear(w, null);
                    t1 = System.nanoTime();
                    Tensor loss = logits.toFloat().logSoftmax(-1).gather(2, y).squeeze(2).mul(g).sum();
                    t2 = System.nanoTime();
                    loss.backward();
                    t3 = System.nanoTime();
                } while (false);
                long oldHwm = hwm();
                w.zeroGrad();
                x.zeroGrad();
                long n0 = 0;
                long n1 = 0;
                long n2 = 0;
                do try (Scope s = Scope.open(); GradMode off = GradMode.noGrad()) {
                    if (side.equals("old")) {
                        break;
                    }
                    n0 = System.nanoTime();
                    TokenHead head = TokenHead.of(w, x.detach(), y);
                    n1 = System.nanoTime();
                    head.backward(g, () -> buffer);
                    n2 = System.nanoTime();
                } while (false);
                System.out.printf("  old: product %.0f, logSoftmax+gather %.0f, backward %.0f ms (HWM %d MiB); "
                        + "new: forward %.0f, backward %.0f ms (HWM %d MiB)%n", (t1 - t0) / 1e6, (t2 - t1) / 1e6,
                        (t3 - t2) / 1e6, oldHwm, (n1 - n0) / 1e6, (n2 - n1) / 1e6, hwm());
                if (r > 0) {
                    oldProduct.add((t1 - t0) / 1e6);
                    oldSoftmax.add((t2 - t1) / 1e6);
                    oldBackward.add((t3 - t2) / 1e6);
                    newForward.add((n1 - n0) / 1e6);
                    newBackward.add((n2 - n1) / 1e6);
                }
            }
            System.out.printf("head %d rows x [%d, %d]: old product %.0f + logSoftmax/gather %.0f + backward %.0f ms;"
                    + " new forward %.0f + backward %.0f ms (medians)%n", m, v, e, median(oldProduct),
                    median(oldSoftmax), median(oldBackward), median(newForward), median(newBackward));
        }
    }

    /** The head's products and conversions without autograd. */
    private static void headProducts(ModelConfig c, DType dt, int reps) {
        long e = c.hiddenSize();
        long vocab = c.vocabSize();
        try (Scope s = Scope.open(); Rng rng = new Rng(1)) {
            Tensor hidden = Tensor.randn(rng, 1, DType.F32, Device.CPU, B, S, e).to(dt);
            Tensor w = Tensor.randn(rng, 0.02, DType.F32, Device.CPU, vocab, e).to(dt);
            Tensor tail = hidden.narrow(1, PROMPT - 1, NEW);
            Tensor tailC = tail.contiguous().view(B * NEW, e);
            Tensor logits = tailC.linear(w, null);
            Tensor logitsF = logits.toFloat();
            Tensor g = Tensor.randn(rng, 1e-3, DType.F32, Device.CPU, B * NEW, vocab).to(dt);
            Map<String, Supplier<Tensor>> v = new LinkedHashMap<>();
            v.put("linear (narrowed 3-D input)", () -> tail.linear(w, null));
            v.put("linear (contiguous 2-D input)", () -> tailC.linear(w, null));
            v.put("logits.toFloat()", () -> logits.toFloat());
            v.put("f32 logSoftmax", () -> logitsF.logSoftmax(-1));
            v.put("bf16 logSoftmax", () -> logits.logSoftmax(-1));
            v.put("dx g@W", () -> g.matmul(w));
            v.put("dW gT(view)@x", () -> g.transpose(0, 1).matmul(tailC));
            v.put("dW gT.contiguous()@x", () -> g.transpose(0, 1).contiguous().matmul(tailC));
            v.put("dW (xT@g)T", () -> tailC.transpose(0, 1).matmul(g).transpose(0, 1));
            v.put("dW (xT.contig@g)T", () -> tailC.transpose(0, 1).contiguous().matmul(g).transpose(0, 1));
            v.put("dW gT.contig.linear(xT.contig)", () -> g.transpose(0, 1).contiguous().linear(tailC.transpose(0, 1).contiguous(), null));
            v.put("zeros [V,E] bf16", () -> Tensor.zerosOf(dt, Device.CPU, vocab, e));
            v.put("empty [V,E] bf16", () -> Tensor.emptyOf(dt, Device.CPU, vocab, e));
            for (Map.Entry<String, Supplier<Tensor>> en : v.entrySet()) {
                System.out.printf("head %-34s %8.2f ms%n", en.getKey(), timed(reps, en.getValue()));
            }
        }
    }

    /** The products of a linear layer's forward and backward, in several operand layouts. */
    private static void products(DType dt, int reps) {
        long n = B * S;
        for (long[] shape : new long[][] {{896, 4864}, {4864, 896}, {896, 896}}) {
            long in = shape[0];
            long out = shape[1];
            double gf = 2.0 * n * in * out / 1e9;
            try (Scope s = Scope.open(); Rng rng = new Rng(1)) {
                Tensor x = Tensor.randn(rng, 1, DType.F32, Device.CPU, n, in).to(dt);
                Tensor w = Tensor.randn(rng, 1, DType.F32, Device.CPU, out, in).to(dt);
                Tensor g = Tensor.randn(rng, 1, DType.F32, Device.CPU, n, out).to(dt);
                Tensor gt = g.transpose(0, 1).contiguous();
                Tensor xt = x.transpose(0, 1).contiguous();
                Map<String, Supplier<Tensor>> v = new LinkedHashMap<>();
                v.put("fwd x.linear(W)", () -> x.linear(w, null));
                v.put("dx g@W", () -> g.matmul(w));
                v.put("dW gT(view)@x", () -> g.transpose(0, 1).matmul(x));
                v.put("dW gT(contig)@x", () -> gt.matmul(x));
                v.put("dW gT.contiguous()@x", () -> g.transpose(0, 1).contiguous().matmul(x));
                v.put("dW (xT(view)@g)T", () -> x.transpose(0, 1).matmul(g));
                v.put("dW gT.linear(xT)", () -> gt.linear(xt, null));
                v.put("dW gT.contig.linear(xT.contig)", () -> g.transpose(0, 1).contiguous().linear(x.transpose(0, 1).contiguous(), null));
                for (Map.Entry<String, Supplier<Tensor>> e : v.entrySet()) {
                    double ms = timed(reps, e.getValue());
                    System.out.printf("[%d x %d -> %d] %-32s %8.2f ms  %6.1f GFLOP/s%n", n, in, out, e.getKey(), ms, gf / ms * 1e3);
                }
            }
        }
    }

    private static void pass(ModelConfig c, DType dt, int reps, boolean withAdamW) throws Exception {
        long t0 = System.nanoTime();
        DecoderLm model = DecoderLm.random(c, dt, Device.CPU, 1);
        String lora = System.getProperty("lora"); // -Dlora=q_proj,v_proj or all-linear: a rank-16 adapter's view on the frozen model
        if (lora != null) {
            model.parameters().forEach(p -> p.requiresGrad(false));
            model = model.withAdapter(LoraAdapter.init(c, new LoraConfig(16, 32.0, 0.0, List.of(lora.split(",")), false),
                    Boolean.getBoolean("loraBf16") ? dt : LoraAdapter.trainingDtype(dt), Device.CPU, 2));
            System.out.printf("LoRA r 16 on %s, %d trainable%n", lora,
                    model.adapter().parameters().stream().mapToLong(Tensor::numel).sum());
        }
        System.out.printf("model made in %.0f ms (HWM %d MiB, RSS %d MiB)%n", (System.nanoTime() - t0) / 1e6, hwm(),
                rss());
        resetHwm(); // the peak of the passes, not of the random initialisation's float32 temporaries
        System.out.printf("VmHWM reset to RSS: %d MiB%n", hwm());
        AdamW opt = withAdamW ? new AdamW(lora != null ? model.adapter().parameters() : model.parameters(), 1e-6, 0.0) : null;
        System.out.printf("AdamW state made (HWM %d MiB, RSS %d MiB)%n", hwm(), rss());
        List<long[]> prompts = new ArrayList<>();
        List<long[]> completions = new ArrayList<>();
        try (Rng rng = new Rng(5); Scope s = Scope.open()) {
            long[] ids = Tensor.randn(rng, 1, DType.F32, Device.CPU, B * S).abs().mul(5000).to(DType.I64).toLongArray();
            for (int i = 0; i < B; i++) {
                int from = Boolean.getBoolean("shared") ? 0 : (int) (i * S); // -Dshared=true: one prompt, as G samples of it
                prompts.add(Arrays.copyOfRange(ids, from, (int) (from + PROMPT)));
                completions.add(Arrays.copyOfRange(ids, (int) (i * S + PROMPT), (int) (i * S + S - (i % 4) * 3)));
            }
        }
        double[] weights = new double[(int) B];
        for (int i = 0; i < B; i++) {
            weights[i] = new double[] {0.5, -0.25, 1.0, -1.0}[i % 4];
        }
        List<Double> score = new ArrayList<>();
        List<Double> step = new ArrayList<>();
        for (int r = 0; r < reps + 1; r++) {
            long a = System.nanoTime();
            try (Scope s = Scope.open()) {
                Scorer.backwardWeighted(model, prompts, completions, 0, weights, false);
            }
            long b = System.nanoTime();
            System.out.printf("  scoring %.0f ms (HWM %d MiB, RSS %d MiB)%n", (b - a) / 1e6, hwm(), rss());
            if (opt != null) {
                opt.step();
            }
            long cEnd = System.nanoTime();
            (lora != null ? model.adapter().parameters() : model.parameters()).forEach(Tensor::zeroGrad);
            System.out.printf("  AdamW step %.0f ms (HWM %d MiB, RSS %d MiB)%n", (cEnd - b) / 1e6, hwm(), rss());
            if (r > 0) {
                score.add((b - a) / 1e6);
                step.add((cEnd - b) / 1e6);
            }
        }
        System.out.printf("scoring fwd+bwd median %.0f ms, AdamW median %.0f ms, HWM %d MiB%n", median(score),
                median(step), hwm());
        if (opt != null) {
            opt.close();
        }
        model.close();
    }

    static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return a.length == 0 ? Double.NaN : a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }

    private static long hwm() {
        return status("VmHWM:");
    }

    /** Resets VmHWM to the current RSS (Linux: 5 written to clear_refs). */
    private static void resetHwm() {
        try {
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
        } catch (java.io.IOException | RuntimeException e) {
            System.out.println("VmHWM not reset: " + e);
        }
    }

    private static long rss() {
        return status("VmRSS:");
    }

    /** A /proc/self/status field in MiB. */
    private static long status(String key) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(key)) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
                }
            }
        } catch (java.io.IOException e) {
            return -1;
        }
        return -1;
    }
}
