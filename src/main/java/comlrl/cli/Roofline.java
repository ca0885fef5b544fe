package comlrl.cli;

import comlrl.model.ModelConfig;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Rng;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The machine's measured limits and what each phase of a MAGRPO step must move, for
 * {@code bench --roofline}. Per agent and step, with W the weights' bytes, N the parameter count,
 * N_b the parameters outside the embedding, V×E the LM head, G sequences of P prompt and T new tokens:
 * <pre>
 *   decode step : reads W once (every weight, for G rows at a time; the KV cache is small)
 *                 bound = W / read bandwidth
 *   AdamW       : per parameter reads p, g, m, v and writes p, m, v: 28 bytes in float32
 *                 (bf16 with a float32 master: 40 bytes), bound = bytes / read-write bandwidth
 *   scoring     : forward 2 FLOPs per parameter and token, backward 4:
 *                 6 · N_b · G·(P+T)  +  6 · V·E · G·T  (logits for the completion positions only)
 *                 6 · N_b · (P−1 + G·(T+1))  +  6 · V·E · G·T  when the G rows share their prompt
 *                 (its first P−1 positions computed once: {@code Scorer}'s shared prompts)
 *                 bound = FLOPs / matmul rate
 * </pre>
 * The limits are measured here with the same library and threads: the read bandwidth by summing a
 * 1 GiB float32 tensor, the read-write bandwidth by {@code a += b} on two of them, the matmul rate by
 * {@code [512 × 896] · [896 × 4864]ᵀ} (an MLP product of the Qwen2.5-0.5B shape) in the run's dtype,
 * timed to one element of its output read back, its fastest of 15 runs (until 2026-12-03: the median
 * of 9, each timed to the sum of the output, which read 636–1692 GFLOP/s for bfloat16 on one machine);
 * the bandwidths as the median of several runs (on a shared machine single runs stray far: 35 and 53
 * GB/s were both seen).
 */
final class Roofline {
    private Roofline() {
    }

    /** Measured limits. */
    record Limits(double readGbPerS, double readWriteGbPerS, double matmulGflopPerS) {
    }

    static Limits measure(DType dtype, Device device) {
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad(); Rng rng = new Rng(1)) {
            long n = 1L << 28; // 1 GiB of float32
            Tensor a = Tensor.randn(rng, 1.0, DType.F32, device, n);
            Tensor b = Tensor.randn(rng, 1.0, DType.F32, device, n);
            double read = median(() -> a.sum().item(), 9);
            double readWrite = median(() -> a.add_(b, 1e-9), 9);
            long e = 896;
            long inter = 4864;
            Tensor x = Tensor.randn(rng, 1.0, dtype, device, 512, e);
            Tensor w = Tensor.randn(rng, 0.02, dtype, device, inter, e);
            // the product alone: one element read back (a device sync on a GPU), not a sum of the
            // output (0.3 ms more on a 2.4 ms bf16 product here)
            double mm = fastest(() -> x.linear(w, null).narrow(0, 0, 1).narrow(1, 0, 1).item(), 15);
            return new Limits(4.0 * n / read / 1e9, 12.0 * n / readWrite / 1e9, 2.0 * 512 * e * inter / mm / 1e9);
        }
    }

    /**
     * The fewest seconds of {@code reps} runs: a product's rate has no high outliers (the hardware
     * bounds it), only low ones from a busy host, so its bound is its best run.
     */
    private static double fastest(Runnable r, int reps) {
        return java.util.Collections.min(seconds(r, reps));
    }

    /** Median seconds of {@code reps} runs. */
    private static double median(Runnable r, int reps) {
        return BenchCommand.median(seconds(r, reps));
    }

    /**
     * The seconds of {@code reps} runs after three warm-ups (in a process that has not multiplied yet,
     * as the comparing bench's own, the first bfloat16 products ran at well under half the rate).
     */
    private static java.util.List<Double> seconds(Runnable r, int reps) {
        for (int i = 0; i < 3; i++) {
            r.run();
        }
        java.util.List<Double> times = new java.util.ArrayList<>();
        for (int i = 0; i < reps; i++) {
            try (Scope s = Scope.open()) {
                long t0 = System.nanoTime();
                r.run();
                times.add((System.nanoTime() - t0) / 1e9);
            }
        }
        return times;
    }

    /**
     * The cost model of one agent's step and the fraction of each bound reached, from the measured
     * {@code decodeMsPerStep}, {@code optimMs} and {@code scoreMs}.
     */
    static Map<String, Object> fractions(ModelConfig c, DType dtype, long parameters, int generations, int promptLen,
            int newTokens, boolean sharedPrompt, Limits limits, double decodeMsPerStep, double optimMs, double scoreMs) {
        long headElements = (long) c.vocabSize() * c.hiddenSize();
        // the embedding table, and the head unless it is the same tensor (tied)
        long backbone = parameters - headElements * (c.tieWordEmbeddings() ? 1 : 2);
        double weightBytes = (double) parameters * dtype.byteSize();
        double optimBytes = parameters * (dtype == DType.F32 ? 28.0 : 40.0);
        long positions = sharedPrompt ? promptLen - 1 + (long) generations * (newTokens + 1)
                : (long) generations * (promptLen + newTokens);
        double flops = 6.0 * backbone * positions + 6.0 * headElements * generations * newTokens;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("read_gb_per_s", limits.readGbPerS());
        m.put("read_write_gb_per_s", limits.readWriteGbPerS());
        m.put("matmul_gflop_per_s", limits.matmulGflopPerS());
        m.put("weights_gb", weightBytes / 1e9);
        m.put("decode_ms_per_step", decodeMsPerStep);
        m.put("decode_bound_ms_per_step", weightBytes / limits.readGbPerS() / 1e6);
        m.put("decode_fraction_of_bandwidth", weightBytes / (decodeMsPerStep / 1e3) / 1e9 / limits.readGbPerS());
        m.put("optim_gb", optimBytes / 1e9);
        m.put("optim_bound_ms", optimBytes / limits.readWriteGbPerS() / 1e6);
        m.put("optim_fraction_of_bandwidth", optimBytes / (optimMs / 1e3) / 1e9 / limits.readWriteGbPerS());
        m.put("score_positions", positions);
        m.put("score_gflop", flops / 1e9);
        m.put("score_bound_ms", flops / limits.matmulGflopPerS() / 1e6);
        m.put("score_fraction_of_matmul", flops / (scoreMs / 1e3) / 1e9 / limits.matmulGflopPerS());
        return m;
    }
}
