package comlrl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.generation.BuiltinModels;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.Generator;
import comlrl.generation.SamplingConfig;
import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.model.ModelConfig;
import comlrl.tensor.AdamW;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bench}: times MAGRPO steps (generation, scoring forward+backward, AdamW) on a random model
 * of a named shape, optionally side by side with a plain PyTorch eager implementation of the same
 * step on the same weights ({@code bench/pytorch_step.py}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmark MAGRPO steps on a random model; --compare-pytorch runs the PyTorch baseline too.")
final class BenchCommand implements Callable<Integer> {
    @Option(names = "--shape", defaultValue = "tiny", description = "tiny, small or qwen2.5-0.5b (default ${DEFAULT-VALUE})")
    String shape;

    @Option(names = "--arch", defaultValue = "qwen2", description = "model family (default ${DEFAULT-VALUE})")
    String arch;

    @Option(names = "--agents", defaultValue = "2", description = "N (default ${DEFAULT-VALUE})")
    int agents;

    @Option(names = "--generations", defaultValue = "4", description = "G (default ${DEFAULT-VALUE})")
    int generations;

    @Option(names = "--prompt-len", defaultValue = "64", description = "prompt tokens (default ${DEFAULT-VALUE})")
    int promptLen;

    @Option(names = "--new-tokens", defaultValue = "64", description = "generated tokens, always all of them (default ${DEFAULT-VALUE})")
    int newTokens;

    @Option(names = "--threads", description = "intra-op threads (default: OMP_NUM_THREADS; set COMLRL_THREADS to change BLAS threads too)")
    Integer threads;

    @Option(names = "--dtype", defaultValue = "float32", description = "float32 or bfloat16 (default ${DEFAULT-VALUE})")
    String dtype;

    @Option(names = "--device", defaultValue = "cpu", description = "cpu or cuda:N (default ${DEFAULT-VALUE})")
    String device;

    @Option(names = "--warmup", defaultValue = "1", description = "unmeasured steps (default ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--steps", defaultValue = "5", description = "measured steps; medians are reported (default ${DEFAULT-VALUE})")
    int steps;

    @Option(names = "--seed", defaultValue = "0", description = "weights and prompt seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--rounds", defaultValue = "3",
            description = "with --compare-pytorch: alternate Java and PyTorch measurements this many times and take "
                    + "the median of each, so that machine-load drift hits both alike (default ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--compare-pytorch", description = "also run bench/pytorch_step.py (python3 with torch; see bench/setup.sh)")
    boolean comparePytorch;

    @Option(names = "--python", description = "interpreter for --compare-pytorch (default: bench/.venv/bin/python, made by "
            + "bash bench/setup.sh, else python3)")
    String python;

    @Option(names = "--roofline", description = "measure the machine's memory bandwidth and matmul rate and report "
            + "each phase (decoding, AdamW, scoring) as a fraction of its bound")
    boolean roofline;

    @Option(names = "--gradient-checkpointing", description = "score with layer-wise recomputation")
    boolean gradientCheckpointing;

    @Option(names = "--json", description = "print one JSON object")
    boolean json;

    @Override
    public Integer call() throws Exception {
        if (agents < 1 || generations < 1 || promptLen < 1 || newTokens < 1 || steps < 1 || warmup < 0) {
            throw new IllegalArgumentException("--agents, --generations, --prompt-len, --new-tokens and --steps must be >= 1");
        }
        DType type = DType.fromTorchName(dtype);
        Device dev = Device.parse(device);
        Engine.checkDevice(dev);
        if (comparePytorch && dev.isCuda()) {
            throw new IllegalArgumentException("--compare-pytorch runs the PyTorch baseline on the CPU: compare a "
                    + "--device cpu run with it, not a GPU run");
        }
        int envThreads = parseThreads(System.getenv("OMP_NUM_THREADS"));
        int k = threads == null ? envThreads : threads;
        if (k != envThreads) {
            System.err.println("note: OMP_NUM_THREADS=" + envThreads + " but --threads " + k
                    + "; BLAS threads are fixed at JVM start: run with COMLRL_THREADS=" + k);
        }
        Engine.setNumThreads(k);
        Path dir = Files.createTempDirectory("comlrl-bench-");
        try {
            BuiltinModels.write(arch, shape, seed, type, dir);
            Map<String, Object> java;
            Map<String, Object> torch = null;
            ModelConfig modelConfig = ModelConfig.load(dir);
            long parameters;
            if (!comparePytorch) {
                try (JavaBench bench = new JavaBench(dir, type, dev)) {
                    parameters = bench.parameterCount();
                    java = bench.measure();
                }
            } else {
                // each round runs PyTorch first, then loads the agents afresh and frees them again: each
                // side has the machine's memory to itself (two 0.5B agents do not fit twice in 24 GiB)
                List<Map<String, Object>> javaRounds = new ArrayList<>();
                List<Map<String, Object>> torchRounds = new ArrayList<>();
                long count = 0;
                for (int r = 0; r < Math.max(1, rounds); r++) {
                    torchRounds.add(runPytorch(dir, k));
                    try (JavaBench bench = new JavaBench(dir, type, dev)) {
                        count = bench.parameterCount();
                        javaRounds.add(bench.measure());
                    }
                    Engine.releaseFreeMemory();
                }
                parameters = count;
                java = medianOfRounds(javaRounds);
                torch = medianOfRounds(torchRounds);
            }
            if (roofline) { // after the measurements: its 2 GiB of test tensors must not count in their peak memory
                Roofline.Limits limits = Roofline.measure(type, dev);
                java.put("roofline", rooflineOf(java, modelConfig, type, parameters, limits));
                if (torch != null) {
                    torch.put("roofline", rooflineOf(torch, modelConfig, type, parameters, limits));
                }
            }
            ObjectNode out = new ObjectMapper().valueToTree(java);
            if (torch != null) {
                out.set("pytorch", new ObjectMapper().valueToTree(torch));
                ObjectNode ratios = out.putObject("ratios");
                for (String key : RESULT_KEYS) {
                    ratios.put(key, num(java, key) / num(torch, key));
                }
            }
            if (json) {
                System.out.println(new ObjectMapper().writeValueAsString(out));
            } else {
                printTable(java, torch);
            }
        } finally {
            deleteTree(dir);
        }
        return 0;
    }

    /** {@link Roofline#fractions} of one implementation's medians (decode time from tokens/s and prefill). */
    private Map<String, Object> rooflineOf(Map<String, Object> result, ModelConfig config, DType type, long parameters,
            Roofline.Limits limits) {
        double genMsPerAgent = 1e3 * generations * newTokens / num(result, "gen_tokens_per_s");
        double decodeMsPerStep = (genMsPerAgent - num(result, "prefill_ms")) / newTokens;
        return Roofline.fractions(config, type, parameters, generations, promptLen, newTokens, limits, decodeMsPerStep,
                num(result, "optim_ms"), num(result, "score_ms"));
    }

    /** The timed keys, shared by both implementations' results (medians over measured steps). */
    static final List<String> RESULT_KEYS = List.of("gen_tokens_per_s", "prefill_ms", "score_ms", "optim_ms",
            "step_ms", "peak_rss_mib");

    /** Loaded agents and their optimizers; {@link #measure()} runs warm-up and measured steps. */
    private final class JavaBench implements AutoCloseable {
        private final List<CausalLm> lms = new ArrayList<>();
        private final List<AdamW> opts = new ArrayList<>();
        private final Device dev;
        private final long[] prompt;
        private final double[] weights;
        private boolean warm;

        JavaBench(Path dir, DType type, Device dev) {
            this.dev = dev;
            try {
                for (int i = 0; i < agents; i++) {
                    CausalLm lm = CausalLm.load(dir.toString(), type, dev);
                    lms.add(lm);
                    opts.add(new AdamW(lm.model().parameters(), 1e-6, 0.01));
                }
            } catch (RuntimeException e) {
                close();
                throw e;
            }
            int vocab = Math.min(lms.get(0).model().config().vocabSize(), lms.get(0).tokenizer().vocabSize());
            Random r = new Random(seed);
            prompt = new long[promptLen];
            for (int j = 0; j < promptLen; j++) {
                prompt[j] = r.nextInt(vocab);
            }
            weights = new double[generations]; // w_k = −A_k / G with fixed advantages A from −1 to 1
            for (int j = 0; j < generations; j++) {
                weights[j] = -(generations == 1 ? 1 : -1 + 2.0 * j / (generations - 1)) / generations;
            }
        }

        /**
         * One MAGRPO step per agent: sample G completions of exactly T tokens, score them with
         * gradients ({@code −Σ_k A_k Σ_t log π / G}, fixed advantages), one AdamW step.
         */
        Map<String, Object> measure() {
            List<Double> gen = new ArrayList<>();
            List<Double> prefill = new ArrayList<>();
            List<Double> score = new ArrayList<>();
            List<Double> optim = new ArrayList<>();
            List<Double> step = new ArrayList<>();
            double syncsPerToken = 0;
            SamplingConfig sampling = SamplingConfig.sample(1.0, null, null, newTokens, generations);
            int first = warm ? 0 : warmup;
            warm = true;
            for (int s = 0; s < first + steps; s++) {
                double genSec = 0;
                double prefillMs = 0;
                double scoreMs = 0;
                double optimMs = 0;
                long stepStart = System.nanoTime();
                for (int i = 0; i < agents; i++) {
                    DecoderLm model = lms.get(i).model();
                    // an end-of-sequence id that never occurs: every sequence generates all new tokens
                    Generator g = new Generator(model, Set.of(-1L), lms.get(i).padId(), ids -> "");
                    long t0 = System.nanoTime();
                    List<Completion> group = g.generate(List.of(prompt), sampling, seed + s * 1000L + i).get(0);
                    long t1 = System.nanoTime();
                    genSec += (t1 - t0) / 1e9;
                    prefillMs += g.lastStats().prefillNanos() / 1e6;
                    syncsPerToken = g.lastStats().syncsPerToken();
                    try (Scope scope = Scope.open()) {
                        opts.get(i).zeroGrad();
                        Scorer.backwardWeighted(model, Collections.nCopies(generations, prompt),
                                group.stream().map(Completion::tokenIds).toList(), lms.get(i).padId(), weights,
                                gradientCheckpointing);
                    }
                    long t2 = System.nanoTime();
                    opts.get(i).step();
                    opts.get(i).zeroGrad();
                    long t3 = System.nanoTime();
                    scoreMs += (t2 - t1) / 1e6;
                    optimMs += (t3 - t2) / 1e6;
                }
                if (s >= first) {
                    gen.add((double) agents * generations * newTokens / genSec);
                    prefill.add(prefillMs / agents);
                    score.add(scoreMs / agents);
                    optim.add(optimMs / agents);
                    step.add((System.nanoTime() - stepStart) / 1e6);
                }
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("impl", "comlrl-java");
            m.put("libtorch", Engine.libtorchVersion());
            m.put("blas", "openblas");
            m.put("onednn", Engine.oneDnnLinear());
            m.put("shape", shape);
            m.put("threads", Engine.numThreads());
            m.put("dtype", dtype);
            m.put("device", device);
            m.put("agents", agents);
            m.put("generations", generations);
            m.put("prompt_len", promptLen);
            m.put("new_tokens", newTokens);
            m.put("gen_tokens_per_s", median(gen));
            m.put("prefill_ms", median(prefill));
            m.put("score_ms", median(score));
            m.put("optim_ms", median(optim));
            m.put("step_ms", median(step));
            m.put("peak_rss_mib", peakRssMib());
            m.put("host_syncs_per_token", syncsPerToken);
            return m;
        }

        long parameterCount() {
            return lms.get(0).model().parameters().stream().mapToLong(Tensor::numel).sum();
        }

        @Override
        public void close() {
            opts.forEach(AdamW::close);
            lms.forEach(CausalLm::close);
        }
    }

    /** The first round's fields, with each timed key replaced by its median over the rounds. */
    static Map<String, Object> medianOfRounds(List<Map<String, Object>> rounds) {
        Map<String, Object> out = new LinkedHashMap<>(rounds.get(0));
        for (String key : RESULT_KEYS) {
            out.put(key, median(rounds.stream().map(r -> num(r, key)).toList()));
        }
        out.put("rounds", rounds.size());
        return out;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> runPytorch(Path dir, int k) throws IOException, InterruptedException {
        String root = System.getProperty("comlrl.root", ".");
        Path script = Path.of(root, "bench", "pytorch_step.py");
        if (!Files.isRegularFile(script)) {
            throw new IllegalArgumentException("--compare-pytorch needs " + script + " (run from a checkout)");
        }
        String interpreter = python;
        if (interpreter == null) {
            Path venv = Path.of(root, "bench", ".venv", "bin", "python");
            interpreter = Files.isExecutable(venv) ? venv.toString() : "python3";
        }
        List<String> cmd = new ArrayList<>(List.of(interpreter, script.toString(), "--model-dir", dir.toString(),
                "--agents", "" + agents, "--generations", "" + generations, "--prompt-len", "" + promptLen,
                "--new-tokens", "" + newTokens, "--threads", "" + k, "--dtype", dtype, "--warmup", "" + warmup,
                "--steps", "" + steps, "--seed", "" + seed, "--json"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("OMP_NUM_THREADS", "" + k);
        pb.environment().put("OPENBLAS_NUM_THREADS", "" + k);
        pb.environment().put("MKL_NUM_THREADS", "" + k);
        Process p = pb.start();
        String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        int code = p.waitFor();
        if (code != 0) {
            throw new IllegalStateException("PyTorch baseline failed (exit " + code + "): " + String.join(" ", cmd)
                    + "\n(make its environment with: bash bench/setup.sh)");
        }
        return new ObjectMapper().readValue(stdout.substring(stdout.lastIndexOf('\n') + 1), Map.class);
    }

    private static void printTable(Map<String, Object> java, Map<String, Object> torch) {
        System.out.printf(Locale.ROOT, "shape %s, %s agents x %s generations, prompt %s + %s new tokens, %s thread(s), %s on %s%n",
                java.get("shape"), java.get("agents"), java.get("generations"), java.get("prompt_len"),
                java.get("new_tokens"), java.get("threads"), java.get("dtype"), java.get("device"));
        System.out.printf(Locale.ROOT, "java: libtorch %s (BLAS %s, oneDNN %s)%s%n", java.get("libtorch"), java.get("blas"),
                java.get("onednn"), torch == null ? "" : String.format(Locale.ROOT, "; pytorch: torch %s (BLAS %s, oneDNN %s), %s thread(s)",
                        torch.get("torch_version"), torch.get("blas"), torch.get("onednn"), torch.get("threads")));
        String[][] rows = {{"gen_tokens_per_s", "generation tokens/s"}, {"prefill_ms", "prefill ms (per agent)"},
            {"score_ms", "scoring fwd+bwd ms (per agent)"}, {"optim_ms", "optimizer ms (per agent)"},
            {"step_ms", "whole step ms"}, {"peak_rss_mib", "peak resident MiB"}};
        System.out.printf(Locale.ROOT, "%-32s %12s%s%n", "median", "java", torch == null ? "" : String.format("%12s %8s", "pytorch", "ratio"));
        for (String[] r : rows) {
            double j = num(java, r[0]);
            if (torch == null) {
                System.out.printf(Locale.ROOT, "%-32s %12.2f%n", r[1], j);
            } else {
                double t = num(torch, r[0]);
                System.out.printf(Locale.ROOT, "%-32s %12.2f %12.2f %8.2f%n", r[1], j, t, j / t);
            }
        }
        System.out.printf(Locale.ROOT, "%-32s %12.2f%n", "host syncs per generated token", num(java, "host_syncs_per_token"));
        if (java.get("roofline") instanceof Map<?, ?> jr) {
            Map<?, ?> tr = torch == null ? null : (Map<?, ?>) torch.get("roofline");
            System.out.printf(Locale.ROOT, "machine: read %.1f GB/s, read+write %.1f GB/s, matmul %.0f GFLOP/s (measured now)%n",
                    jr.get("read_gb_per_s"), jr.get("read_write_gb_per_s"), jr.get("matmul_gflop_per_s"));
            String[][] f = {{"decode_fraction_of_bandwidth", "decoding, of the bandwidth bound", "decode_bound_ms_per_step"},
                {"optim_fraction_of_bandwidth", "AdamW, of the bandwidth bound", "optim_bound_ms"},
                {"score_fraction_of_matmul", "scoring, of the matmul rate", "score_bound_ms"}};
            for (String[] row : f) {
                System.out.printf(Locale.ROOT, "%-32s %11.0f%%%s   (bound %.3g ms)%n", row[1], 100 * ((Number) jr.get(row[0])).doubleValue(),
                        tr == null ? "" : String.format(Locale.ROOT, " %11.0f%%", 100 * ((Number) tr.get(row[0])).doubleValue()),
                        ((Number) jr.get(row[2])).doubleValue());
            }
        }
    }

    private static double num(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (!(v instanceof Number n)) {
            throw new IllegalStateException("benchmark result has no number '" + key + "': " + m);
        }
        return n.doubleValue();
    }

    static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }

    private static double peakRssMib() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
                }
            }
        } catch (IOException e) {
            return Double.NaN;
        }
        return Double.NaN;
    }

    private static int parseThreads(String s) {
        try {
            return s == null ? 1 : Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
