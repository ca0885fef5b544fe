package comlrl.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.generation.BuiltinModels;
import comlrl.generation.CausalLm;
import comlrl.generation.Completion;
import comlrl.generation.Generator;
import comlrl.generation.SamplingConfig;
import comlrl.generation.Scorer;
import comlrl.generation.TeamGenerator;
import comlrl.model.DecoderLm;
import comlrl.model.LoraAdapter;
import comlrl.model.LoraConfig;
import comlrl.model.ModelConfig;
import comlrl.tensor.AdamW;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.Engine;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.common.AgentSet;
import comlrl.trainers.common.LoraAgents;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
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
 * step on the same weights ({@code bench/pytorch_step.py}), or with {@code --lora R} side by side
 * with the same team as LoRA agents on one shared frozen base. Whenever two sides are compared, each
 * measurement runs in a process of its own (our side in a fresh JVM, PyTorch in its interpreter),
 * one after the other and alternating over {@code --rounds}: each side's peak resident memory is its
 * own, and no side measures in a process that has just freed the other side's memory.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmark MAGRPO steps on a random model; --compare-pytorch runs the PyTorch baseline too, "
                + "--lora R compares full agents with rank-R LoRA agents on one shared base.")
final class BenchCommand implements Callable<Integer> {
    @Option(names = "--shape", defaultValue = "tiny", description = "tiny, small, qwen2.5-0.5b, qwen2.5-1.5b or qwen2.5-coder-3b (default ${DEFAULT-VALUE})")
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
            description = "with --compare-pytorch (or --lora --generation-only): alternate the sides' measurements (each in "
                    + "a fresh process) this many times and take the median of each, so that machine-load drift hits all "
                    + "alike (default ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--sampling", defaultValue = "plain", paramLabel = "SPEC", description = "how tokens are drawn, on "
            + "every side: plain (temperature 1, no filter), qwen2.5 (temperature 0.7, top_k 20, top_p 0.8, "
            + "repetition_penalty 1.05: Qwen2.5-Instruct's generation_config.json) or KEY=VALUE,... of those four "
            + "(default ${DEFAULT-VALUE})")
    String sampling;

    /** {@link #sampling} parsed, by {@link #call} before anything else runs. */
    private BenchSampling draw;

    @Option(names = "--compare-pytorch", description = "also run bench/pytorch_step.py (python3 with torch; see bench/setup.sh)")
    boolean comparePytorch;

    @Option(names = "--pytorch-baselines", split = ",", paramLabel = "NAME",
            description = "with --compare-pytorch: the PyTorch sides, comma-separated: plain (AdamW for-loop, torch's CPU "
                    + "default), fused (AdamW fused=True, transformers' Trainer default), autocast (bfloat16 only: float32 "
                    + "weights under torch.autocast); default all for the dtype. With --lora: transformers + peft")
    List<String> pytorchBaselines;

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

    @Option(names = "--lora", paramLabel = "R", description = "compare the N agents as full models (each its own "
            + "weights and AdamW state, generating one after the other) with N LoRA agents of rank R (alpha 2R, no "
            + "dropout) on one shared frozen base (one batched team generation, AdamW over the adapters); each "
            + "configuration runs in a fresh JVM and reports its own peak resident memory")
    Integer lora;

    @Option(names = "--lora-only", description = "with --lora: measure only the LoRA agents (and PyTorch + peft with "
            + "--compare-pytorch), for shapes whose full agents do not fit in memory")
    boolean loraOnly;

    @Option(names = "--generation-only", description = "measure generation only: no scoring, no AdamW state (for teams "
            + "whose full agents with AdamW do not fit in memory); after each generation a full agent's packed decoding "
            + "weights are released, as its update would release them, so each generation repacks as in training")
    boolean generationOnly;

    @Option(names = "--lora-targets", split = ",", defaultValue = "all-linear",
            description = "with --lora: the adapted projections, comma-separated, or all-linear (default ${DEFAULT-VALUE})")
    List<String> loraTargets;

    @Option(names = "--lora-autocast", description = "with --lora on a bfloat16 base: the adapters' products in "
            + "bfloat16 (lora.autocast), and with --compare-pytorch peft's passes under torch.autocast")
    boolean loraAutocast;

    @Option(names = "--processes", paramLabel = "P", description = "measure the training step on 1 and on P processes "
            + "of this machine (parallel_training: ddp, the threads divided between them): seconds per item, speedup, "
            + "time in collectives")
    Integer processes;

    @Option(names = "--ddp-split", defaultValue = "data", description = "with --processes: data or agents (default ${DEFAULT-VALUE})")
    String ddpSplit;

    @Option(names = "--zero-stage", defaultValue = "0", description = "with --processes and the data split: 1 shards the "
            + "AdamW state between the processes (distributed.zero_stage; default ${DEFAULT-VALUE})")
    int zeroStage;

    /**
     * Measure only this configuration in this JVM and print its JSON (what each fresh JVM of a comparison
     * runs): "full" (the agents as full models) or, with --lora, "lora".
     */
    @Option(names = "--lora-config", hidden = true)
    String loraConfig;

    /** Measure the model in this directory instead of writing a random one (the fresh JVMs of --lora share one). */
    @Option(names = "--model-dir", hidden = true)
    Path modelDir;

    /** Print resident memory after each phase and the phase's own high-water mark (to stderr). */
    @Option(names = "--memory-trace", hidden = true)
    boolean memoryTrace;

    /** The goals of the LoRA comparison: LoRA/full peak memory at most this ... */
    static final double LORA_MEMORY_GOAL = 0.45;
    /** ... and LoRA/full generation tokens/s at least this. */
    static final double LORA_GENERATION_GOAL = 2.0;

    @Override
    public Integer call() throws Exception {
        if (agents < 1 || generations < 1 || promptLen < 1 || newTokens < 1 || steps < 1 || warmup < 0) {
            throw new IllegalArgumentException("--agents, --generations, --prompt-len, --new-tokens and --steps must be >= 1");
        }
        DType type = DType.fromTorchName(dtype);
        draw = BenchSampling.parse(sampling); // a bad --sampling fails before any model is written
        Device dev = Device.parse(device);
        Engine.checkDevice(dev);
        if (generationOnly && (comparePytorch || roofline || processes != null)) {
            throw new IllegalArgumentException("--generation-only measures our generation alone: run it without "
                    + "--compare-pytorch, --roofline and --processes (they measure whole steps)");
        }
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
        LoraConfig loraSettings = loraSettings();
        if (loraConfig != null && !List.of("full", "lora").contains(loraConfig)) {
            throw new IllegalArgumentException("--lora-config is full or lora, got " + loraConfig);
        }
        Path dir = modelDir != null ? modelDir : Files.createTempDirectory("comlrl-bench-");
        try {
            if (modelDir == null) {
                BuiltinModels.write(arch, shape, seed, type, dir);
            }
            if (processes != null) {
                if (processes < 1) {
                    throw new IllegalArgumentException("--processes must be >= 1, got " + processes);
                }
                DdpBench.Settings settings = new DdpBench.Settings(dir, dtype, agents, generations, promptLen, newTokens,
                        warmup, steps, seed, comlrl.utils.DdpSplit.parse(ddpSplit), zeroStage);
                List<Map<String, Object>> rows = DdpBench.compare(settings, processes, k, System.err);
                System.out.print(json ? new ObjectMapper().writeValueAsString(rows) + "\n" : DdpBench.table(rows, settings));
                return 0;
            }
            if (loraConfig != null) { // one side of a comparison, in its own JVM
                try (JavaBench bench = new JavaBench(dir, type, dev, loraConfig.equals("lora") ? loraSettings : null)) {
                    Map<String, Object> m = bench.measure();
                    m.put("parameters", bench.parameterCount());
                    System.out.println(new ObjectMapper().writeValueAsString(m));
                }
                return 0;
            }
            if (loraSettings != null) {
                compareLora(dir, k, loraSettings);
                return 0;
            }
            Map<String, Object> java;
            Map<String, Object> torch = null;
            Map<String, Map<String, Object>> torches = new LinkedHashMap<>(); // each baseline's medians
            ModelConfig modelConfig = ModelConfig.load(dir);
            long parameters;
            if (!comparePytorch) {
                try (JavaBench bench = new JavaBench(dir, type, dev)) {
                    parameters = bench.parameterCount();
                    java = bench.measure();
                }
            } else {
                // each round runs every PyTorch side, then ours, each in a fresh process of its own: each
                // side has the machine's memory to itself (two 0.5B agents do not fit twice in 24 GiB) and
                // none measures in a process that has just freed a large heap (slow to touch again here)
                List<Map<String, Object>> javaRounds = new ArrayList<>();
                Map<String, List<Map<String, Object>>> torchRounds = new LinkedHashMap<>();
                for (int r = 0; r < Math.max(1, rounds); r++) {
                    for (PytorchBaselines.Baseline b : PytorchBaselines.select(dtype, pytorchBaselines)) {
                        torchRounds.computeIfAbsent(b.name(), n -> new ArrayList<>())
                                .add(PytorchBaselines.run(b, dir, stepArgs(k), k, python));
                    }
                    javaRounds.add(freshJvm(dir, k, "full"));
                }
                parameters = (long) num(javaRounds.get(0), "parameters");
                java = medianOfRounds(javaRounds, RESULT_KEYS);
                torchRounds.forEach((name, results) -> torches.put(name, medianOfRounds(results, RESULT_KEYS)));
                torch = torches.values().iterator().next();
            }
            if (roofline) { // after the measurements: its 2 GiB of test tensors must not count in their peak memory
                Roofline.Limits limits = Roofline.measure(type, dev);
                java.put("roofline", rooflineOf(java, modelConfig, type, parameters, limits));
                for (Map<String, Object> t : torches.values()) {
                    t.put("roofline", rooflineOf(t, modelConfig, type, parameters, limits));
                }
            }
            ObjectNode out = new ObjectMapper().valueToTree(java);
            if (torch != null) {
                out.set("pytorch", new ObjectMapper().valueToTree(torch));
                out.set("ratios", new ObjectMapper().valueToTree(ratios(java, torch, RESULT_KEYS)));
                Map<String, Object> byBaseline = new LinkedHashMap<>();
                torches.forEach((name, t) -> byBaseline.put(name, ratios(java, t, RESULT_KEYS)));
                out.set("pytorch_baselines", new ObjectMapper().valueToTree(torches));
                out.set("ratios_by_baseline", new ObjectMapper().valueToTree(byBaseline));
            }
            if (json) {
                System.out.println(new ObjectMapper().writeValueAsString(out));
            } else {
                printTable(java, torches);
            }
        } finally {
            if (modelDir == null) {
                deleteTree(dir);
            }
        }
        return 0;
    }

    /** The adapters' settings of {@code --lora R} (alpha 2R, no dropout), or null without it. */
    private LoraConfig loraSettings() {
        if (lora == null) {
            if ("lora".equals(loraConfig)) {
                throw new IllegalArgumentException("--lora-config lora needs --lora R");
            }
            if (loraOnly || loraAutocast) {
                throw new IllegalArgumentException((loraOnly ? "--lora-only" : "--lora-autocast") + " needs --lora R");
            }
            return null;
        }
        if (lora < 1) {
            throw new IllegalArgumentException("--lora R needs a rank R >= 1, got " + lora);
        }
        if (roofline) {
            throw new IllegalArgumentException("--lora compares full agents with LoRA agents; --roofline measures full "
                    + "agents: run it without --lora");
        }
        return new LoraConfig(lora, 2.0 * lora, 0.0, loraTargets, false, loraAutocast);
    }

    /**
     * One measurement of {@code config} ("full" or "lora") in a fresh JVM on the model in {@code dir}:
     * this JVM's command with the same step options, printing the measurement's JSON.
     */
    private Map<String, Object> freshJvm(Path dir, int k, String config) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("bench", "--shape", shape, "--arch", arch, "--device", device,
                "--model-dir", dir.toString(), "--lora-config", config));
        if (lora != null) {
            args.addAll(List.of("--lora", "" + lora, "--lora-targets", String.join(",", loraTargets)));
            if (loraAutocast) {
                args.add("--lora-autocast");
            }
        }
        args.addAll(stepArgs(k));
        if (gradientCheckpointing) {
            args.add("--gradient-checkpointing");
        }
        if (generationOnly) {
            args.add("--generation-only");
        }
        List<String> cmd = new ArrayList<>(javaCommand());
        cmd.addAll(args);
        return runForJson(new ProcessBuilder(cmd), "The " + config + " agents' JVM (" + String.join(" ", args) + ")",
                "(exit 137 is a kill, usually for memory: fewer --agents or a smaller --shape)");
    }

    /**
     * {@code --lora}: measures the full agents (not with {@code --lora-only}), then the LoRA agents, each
     * in a fresh JVM on the same model directory, and with {@code --compare-pytorch} PyTorch + peft after
     * them; with {@code --compare-pytorch} this alternates {@code --rounds} times and reports the medians.
     * Reports the LoRA/full ratios and the goals.
     */
    private void compareLora(Path dir, int k, LoraConfig settings) throws IOException, InterruptedException {
        Map<String, List<Map<String, Object>>> byConfig = new LinkedHashMap<>();
        List<Map<String, Object>> peftRounds = new ArrayList<>();
        for (int r = 0; r < (comparePytorch || generationOnly ? Math.max(1, rounds) : 1); r++) {
            for (String config : loraOnly ? List.of("lora") : List.of("full", "lora")) {
                byConfig.computeIfAbsent(config, c -> new ArrayList<>()).add(freshJvm(dir, k, config));
            }
            if (comparePytorch) { // after both JVMs, so that each side has the machine's memory to itself
                peftRounds.add(PytorchBaselines.run(PytorchBaselines.peft(lora, loraTargets, loraAutocast), dir, stepArgs(k), k, python));
            }
        }
        Map<String, Map<String, Object>> configs = new LinkedHashMap<>();
        byConfig.forEach((config, results) -> configs.put(config, medianOfRounds(results, LORA_KEYS)));
        Map<String, Object> full = configs.get("full");
        Map<String, Object> team = configs.get("lora");
        Map<String, Object> out = new LinkedHashMap<>();
        for (String key : List.of("impl", "libtorch", "blas", "huge_pages", "onednn", "shape", "threads", "dtype", "device", "agents",
                "generations", "prompt_len", "new_tokens", "sampling")) {
            out.put(key, team.get(key));
        }
        out.put("lora_r", settings.r());
        out.put("lora_alpha", settings.alpha());
        out.put("lora_targets", settings.targetModules());
        out.put("lora_autocast", settings.autocast());
        out.put("memory", "peak_rss_mib: VmHWM of each configuration's own JVM (weights, gradients, optimizer state, "
                + "activations, packed decode weights, the JVM and libtorch); weights/optimizer_state/gradients_mib: "
                + "counted from the tensors (gradients: one agent's, alive during its step)");
        if (full != null) {
            out.put("full", full);
        }
        out.put("lora", team);
        if (full != null) {
            out.put("ratios", ratios(team, full, LORA_KEYS));
            out.put("gen_ratio_by_round", roundRatios(byConfig.get("lora"), byConfig.get("full"), "gen_tokens_per_s"));
        }
        Map<String, Object> peft = null;
        if (comparePytorch) {
            peft = medianOfRounds(peftRounds, PEFT_KEYS);
            out.put("pytorch_peft", peft);
            out.put("ratios_vs_peft", ratios(team, peft, PEFT_KEYS));
        }
        if (full != null) {
            Map<String, Object> goals = new LinkedHashMap<>();
            if (!generationOnly) { // without AdamW state and gradients, the memory is not the training run's
                goals.put("peak_rss_mib_ratio_at_most", LORA_MEMORY_GOAL);
                goals.put("peak_rss_mib_met", num(team, "peak_rss_mib") / num(full, "peak_rss_mib") <= LORA_MEMORY_GOAL);
            }
            goals.put("gen_tokens_per_s_ratio_at_least", LORA_GENERATION_GOAL);
            goals.put("gen_tokens_per_s_met", num(team, "gen_tokens_per_s") / num(full, "gen_tokens_per_s") >= LORA_GENERATION_GOAL);
            out.put("goals", goals);
        }
        if (json) {
            System.out.println(new ObjectMapper().writeValueAsString(out));
        } else {
            if (full != null) {
                printLoraTable(out, full, team);
            } else {
                printSetting(out);
                System.out.printf(Locale.ROOT, "lora only: one frozen base, r=%s, alpha=%s; %.2f tokens/s (team: "
                        + "prefill %.1f ms per agent, decoding %.2f ms per team token), step %.0f ms, peak resident "
                        + "%.0f MiB, trainable %.0f per agent%n", out.get("lora_r"), out.get("lora_alpha"),
                        num(team, "gen_tokens_per_s"), num(team, "prefill_ms"), num(team, "decode_ms_per_token"),
                        num(team, "step_ms"), num(team, "peak_rss_mib"), num(team, "trainable_parameters"));
            }
            if (peft != null) {
                printPeftRows(team, peft);
            }
        }
    }

    /** The keys compared by {@code --lora}: the timed ones, the decoding time per token step and the memory. */
    static final List<String> LORA_KEYS = List.of("gen_tokens_per_s", "decode_ms_per_token", "prefill_ms", "score_ms",
            "optim_ms", "step_ms", "peak_rss_mib", "weights_mib", "optimizer_state_mib", "gradients_mib",
            "trainable_parameters");

    /** The keys compared between our LoRA team and PyTorch + peft's (peft_step.py measures no prefill apart). */
    static final List<String> PEFT_KEYS = List.of("gen_tokens_per_s", "score_ms", "optim_ms", "step_ms", "peak_rss_mib");

    /** Our LoRA team beside PyTorch + peft's: the values and lora/peft ratios. */
    private static void printPeftRows(Map<String, Object> team, Map<String, Object> peft) {
        System.out.printf(Locale.ROOT, "pytorch + peft: torch %s, transformers %s, peft %s (BLAS %s); %s%n",
                peft.get("torch_version"), peft.get("transformers_version"), peft.get("peft_version"), peft.get("blas"),
                peft.get("baseline_what"));
        System.out.printf(Locale.ROOT, "%-32s %12s %12s %8s%n", "median", "lora", "peft", "ratio");
        String[][] rows = {{"gen_tokens_per_s", "generation tokens/s (team)"}, {"score_ms", "scoring fwd+bwd ms (per agent)"},
            {"optim_ms", "optimizer ms (per agent)"}, {"step_ms", "whole step ms"}, {"peak_rss_mib", "peak resident MiB"}};
        for (String[] r : rows) {
            System.out.printf(Locale.ROOT, "%-32s %12.2f %12.2f %8.3f%n", r[1], num(team, r[0]), num(peft, r[0]),
                    num(team, r[0]) / num(peft, r[0]));
        }
    }

    /**
     * Round r's {@code numerator[key] / denominator[key]}, for each round in order. Each round runs its
     * configurations one after the other, so a host whose speed drifts between rounds moves both sides
     * of a round's ratio alike: the spread of these ratios, beside the ratio of the medians, says how
     * much of a difference is the host's.
     */
    static List<Double> roundRatios(List<Map<String, Object>> numerator, List<Map<String, Object>> denominator,
            String key) {
        if (numerator.size() != denominator.size()) {
            throw new IllegalArgumentException(numerator.size() + " rounds against " + denominator.size());
        }
        List<Double> out = new ArrayList<>();
        for (int r = 0; r < numerator.size(); r++) {
            out.add(num(numerator.get(r), key) / num(denominator.get(r), key));
        }
        return out;
    }

    /** {@code numerator[key] / denominator[key]} for each key. */
    private static Map<String, Object> ratios(Map<String, Object> numerator, Map<String, Object> denominator,
            List<String> keys) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String key : keys) {
            out.put(key, num(numerator, key) / num(denominator, key));
        }
        return out;
    }

    /**
     * The options of one measurement that the PyTorch baseline and a fresh JVM of {@code --lora}
     * take alike (always {@code --json}).
     */
    private List<String> stepArgs(int k) {
        return List.of("--agents", "" + agents, "--generations", "" + generations, "--prompt-len", "" + promptLen,
                "--new-tokens", "" + newTokens, "--threads", "" + k, "--dtype", dtype, "--warmup", "" + warmup,
                "--steps", "" + steps, "--seed", "" + seed, "--sampling", draw.spec(), "--json");
    }

    /** This JVM again ({@code java}, its options, its class path) running {@link Main}, for a fresh process. */
    private static List<String> javaCommand() {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-agentlib") && !a.startsWith("-javaagent") && !a.startsWith("-Xrunjdwp")) {
                cmd.add(a); // heap, system properties; not a debugger or agent, which would clash
            }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        return cmd;
    }

    /**
     * Runs {@code pb} (its stderr passed through) and parses the last line of its stdout as a JSON
     * object; fails naming {@code what} and the exit code, with {@code hint}.
     */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> runForJson(ProcessBuilder pb, String what, String hint)
            throws IOException, InterruptedException {
        Process p = pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        int code = p.waitFor();
        if (code != 0) {
            throw new IllegalStateException(what + " failed (exit " + code + ")\n" + hint);
        }
        return new ObjectMapper().readValue(stdout.substring(stdout.lastIndexOf('\n') + 1), Map.class);
    }

    /** {@link Roofline#fractions} of one implementation's medians (decode time from tokens/s and prefill). */
    private Map<String, Object> rooflineOf(Map<String, Object> result, ModelConfig config, DType type, long parameters,
            Roofline.Limits limits) {
        double genMsPerAgent = 1e3 * generations * newTokens / num(result, "gen_tokens_per_s");
        double decodeMsPerStep = (genMsPerAgent - num(result, "prefill_ms")) / newTokens;
        return Roofline.fractions(config, type, parameters, generations, promptLen, newTokens,
                Boolean.TRUE.equals(result.get("shared_prompt")), limits, decodeMsPerStep, num(result, "optim_ms"),
                num(result, "score_ms"));
    }

    /** The timed keys, shared by both implementations' results (medians over measured steps). */
    static final List<String> RESULT_KEYS = List.of("gen_tokens_per_s", "prefill_ms", "score_ms", "optim_ms",
            "step_ms", "peak_rss_mib");

    /**
     * Loaded agents and their optimizers; {@link #measure()} runs warm-up and measured steps. The
     * agents are made as the trainers make them ({@link AgentSet}): full models, each loaded on its
     * own, or with a {@link LoraConfig} LoRA agents, views with an adapter each over one shared
     * frozen base.
     */
    private final class JavaBench implements AutoCloseable {
        private final AgentSet set;
        private final List<CausalLm> lms;
        private final List<AdamW> opts = new ArrayList<>();
        /** LoRA agents on one base sample as one team, in one batched generation (as the trainers' rollouts do). */
        private final boolean team;
        private final long[] prompt;
        private final double[] weights;
        private boolean warm;

        JavaBench(Path dir, DType type, Device dev) {
            this(dir, type, dev, null);
        }

        JavaBench(Path dir, DType type, Device dev, LoraConfig loraSettings) {
            set = AgentSet.load("agent", Collections.nCopies(agents, dir.toString()), type,
                    Collections.nCopies(agents, dev), loraSettings == null ? null
                            : new LoraAgents(loraSettings, true, null, false), seed, null, i -> true);
            lms = set.models();
            trace("agents loaded");
            team = set.lora() && agents > 1;
            try {
                for (CausalLm lm : lms) {
                    if (!generationOnly) {
                        opts.add(new AdamW(lm.model().parameters(), 1e-6, 0.01)); // a LoRA agent's: its adapter's
                    }
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

        /** One generation call's completions (per agent of the call: its G) and its timings. */
        private record Sampled(List<List<Completion>> groups, Generator.Stats stats) {
        }

        /**
         * Samples G completions of the prompt for agents {@code first ..< first + count}: a team in one
         * batched call, or one agent on its own. An end-of-sequence id that never occurs: every
         * sequence generates all new tokens.
         */
        private Sampled sample(int first, int count, SamplingConfig sampling, int step) {
            long[] seeds = new long[count];
            for (int a = 0; a < count; a++) {
                seeds[a] = seed + step * 1000L + first + a;
            }
            if (team) {
                TeamGenerator g = new TeamGenerator(lms.get(0).model().base(), Set.of(-1L), lms.get(0).padId(), ids -> "");
                List<LoraAdapter> adapters = set.adapters().subList(first, first + count);
                List<List<List<Completion>>> out = g.generate(adapters, Collections.nCopies(count, List.of(prompt)),
                        sampling, seeds);
                return new Sampled(out.stream().map(perPrompt -> perPrompt.get(0)).toList(), g.lastStats());
            }
            Generator g = new Generator(lms.get(first).model(), Set.of(-1L), lms.get(first).padId(), ids -> "");
            List<Completion> group = g.generate(List.of(prompt), sampling, seeds[0]).get(0);
            return new Sampled(List.of(group), g.lastStats());
        }

        /**
         * One MAGRPO step per agent: sample G completions of exactly T tokens, score them with
         * gradients ({@code −Σ_k A_k Σ_t log π / G}, fixed advantages), one AdamW step. Full agents
         * (and a single LoRA agent) go one after the other; a LoRA team samples together first, then
         * each agent scores and steps.
         */
        Map<String, Object> measure() {
            List<Double> gen = new ArrayList<>();
            List<Double> decode = new ArrayList<>();
            List<Double> prefill = new ArrayList<>();
            List<Double> score = new ArrayList<>();
            List<Double> optim = new ArrayList<>();
            List<Double> step = new ArrayList<>();
            double syncsPerToken = 0;
            SamplingConfig sampling = draw.config(newTokens, generations);
            int first = warm ? 0 : warmup;
            trace(warm ? "between measurements" : "load");
            warm = true;
            int unit = team ? agents : 1; // agents per generation call
            CpuSample load = null;
            for (int s = 0; s < first + steps; s++) {
                if (s == first) {
                    load = CpuSample.now();
                }
                double genSec = 0;
                double decodeMs = 0;
                double prefillMs = 0;
                double scoreMs = 0;
                double optimMs = 0;
                long stepStart = System.nanoTime();
                for (int from = 0; from < agents; from += unit) {
                    long t0 = System.nanoTime();
                    trace("before generation, step " + s);
                    Sampled sampled = sample(from, unit, sampling, s);
                    long t1 = System.nanoTime();
                    trace("generation");
                    genSec += (t1 - t0) / 1e9;
                    decodeMs += sampled.stats().decodeNanos() / 1e6;
                    prefillMs += sampled.stats().prefillNanos() / 1e6;
                    syncsPerToken = sampled.stats().syncsPerToken();
                    for (int i = from; i < from + unit && generationOnly; i++) {
                        lms.get(i).model().releaseDecodeWeights(); // as the update's backward would (a view: none)
                    }
                    for (int i = from; i < from + unit && !generationOnly; i++) {
                        long t2 = System.nanoTime();
                        DecoderLm model = lms.get(i).model();
                        try (Scope scope = Scope.open()) {
                            opts.get(i).zeroGrad();
                            Scorer.backwardWeighted(model, Collections.nCopies(generations, prompt),
                                    sampled.groups().get(i - from).stream().map(Completion::tokenIds).toList(),
                                    lms.get(i).padId(), weights, gradientCheckpointing);
                        }
                        long t3 = System.nanoTime();
                        trace("scoring agent " + i);
                        opts.get(i).step();
                        opts.get(i).zeroGrad();
                        long t4 = System.nanoTime();
                        trace("step agent " + i);
                        scoreMs += (t3 - t2) / 1e6;
                        optimMs += (t4 - t3) / 1e6;
                    }
                }
                if (s >= first) {
                    gen.add((double) agents * generations * newTokens / genSec);
                    decode.add(decodeMs / newTokens);
                    prefill.add(prefillMs / agents);
                    score.add(scoreMs / agents);
                    optim.add(optimMs / agents);
                    step.add((System.nanoTime() - stepStart) / 1e6);
                }
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("impl", "comlrl-java");
            m.put("libtorch", Engine.libtorchVersion());
            m.put("blas", blasDescription(System::getenv));
            m.put("huge_pages", hugePagesDescription(transparentHugePageMode(), System::getenv));
            m.put("onednn", Engine.oneDnnLinear());
            m.put("shape", shape);
            m.put("threads", Engine.numThreads());
            m.put("dtype", dtype);
            m.put("device", device);
            m.put("agents", agents);
            m.put("generations", generations);
            m.put("prompt_len", promptLen);
            m.put("new_tokens", newTokens);
            m.put("sampling", draw.spec());
            m.put("generation_only", generationOnly);
            if (loraConfig != null) {
                m.put("config", loraConfig);
                m.put("team_generation", team);
            }
            m.put("gen_tokens_per_s", median(gen));
            m.put("decode_ms_per_token", median(decode));
            m.put("prefill_ms", median(prefill));
            m.put("score_ms", median(score));
            // the G rows of a prompt score it once (the roofline then counts its positions once)
            m.put("shared_prompt", comlrl.generation.Scorer.sharesPrompts() && generations > 1 && promptLen > 1
                    && lms.get(0).model().sharesPrefixes());
            m.put("optim_ms", median(optim));
            m.put("step_ms", median(step));
            m.put("peak_rss_mib", runPeakMib());
            m.put("host_syncs_per_token", syncsPerToken);
            m.put("others_cpu_share", load.othersShareUntil(CpuSample.now()));
            m.put("pid", ProcessHandle.current().pid());
            if (loraConfig != null) {
                m.put("trainable_parameters", lms.get(0).model().parameters().stream().mapToLong(Tensor::numel).sum());
                m.putAll(stateMib());
            }
            return m;
        }

        /**
         * The training state counted from its tensors, in MiB: {@code weights_mib} every distinct
         * weight held (each full agent's, or the shared base's and the adapters'),
         * {@code optimizer_state_mib} the AdamW moments and float32 masters of all agents,
         * {@code gradients_mib} one agent's gradients (they live from its backward to its step).
         */
        private Map<String, Object> stateMib() {
            Map<Tensor, Boolean> held = new IdentityHashMap<>();
            for (CausalLm lm : lms) {
                lm.model().base().namedParameters().values().forEach(t -> held.put(t, true));
                lm.model().parameters().forEach(t -> held.put(t, true));
            }
            double optimizer = 0;
            for (AdamW opt : opts) {
                optimizer += bytes(opt.state().values());
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("weights_mib", bytes(held.keySet()) / MIB);
            m.put("optimizer_state_mib", optimizer / MIB);
            m.put("gradients_mib", generationOnly ? 0.0 : bytes(lms.get(0).model().parameters()) / MIB);
            return m;
        }

        long parameterCount() {
            return lms.get(0).model().base().parameters().stream().mapToLong(Tensor::numel).sum();
        }

        @Override
        public void close() {
            opts.forEach(AdamW::close);
            set.close();
        }
    }

    private static final double MIB = 1024.0 * 1024.0;

    /**
     * The machine's CPU time (busy and total, from {@code /proc/stat}, in its ticks) and this
     * process's, at one moment: between two samples, the share of the machine's CPU time that other
     * processes used ({@code others_cpu_share}: 0 on an otherwise idle machine; on a shared host,
     * what says whether a run's times are its own).
     */
    record CpuSample(long busyTicks, long totalTicks, long processCpuNanos, long wallNanos) {
        static CpuSample now() {
            long busy = -1;
            long total = -1;
            try {
                String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
                // cpu user nice system idle iowait irq softirq steal ...
                long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
                busy = 0;
                for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
                    busy += Long.parseLong(f[i]);
                }
                total = busy + idle;
            } catch (IOException | RuntimeException e) {
                // not Linux: no share
            }
            long cpu = ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                    ? os.getProcessCpuTime() : -1;
            return new CpuSample(busy, total, cpu, System.nanoTime());
        }

        /** Others' share of the machine's CPU time from this sample to {@code later}; NaN where unknown. */
        double othersShareUntil(CpuSample later) {
            long total = later.totalTicks - totalTicks;
            if (busyTicks < 0 || later.busyTicks < 0 || processCpuNanos < 0 || total <= 0) {
                return Double.NaN;
            }
            double machineBusy = (double) (later.busyTicks - busyTicks) / total;
            double ours = (later.processCpuNanos - processCpuNanos) / 1e9
                    / (Runtime.getRuntime().availableProcessors() * ((later.wallNanos - wallNanos) / 1e9));
            return Math.max(0, machineBusy - ours);
        }
    }

    private static double bytes(java.util.Collection<Tensor> tensors) {
        return tensors.stream().mapToDouble(t -> (double) t.numel() * t.dtype().byteSize()).sum();
    }

    /** The first round's fields, with each of {@code keys} replaced by its median over the rounds. */
    static Map<String, Object> medianOfRounds(List<Map<String, Object>> rounds, List<String> keys) {
        Map<String, Object> out = new LinkedHashMap<>(rounds.get(0));
        for (String key : keys) {
            out.put(key, median(rounds.stream().map(r -> num(r, key)).toList()));
        }
        out.put("rounds", rounds.size());
        return out;
    }

    /** The first line of both tables: the shape, team, lengths, threads, dtype and device. */
    private static void printSetting(Map<String, Object> m) {
        System.out.printf(Locale.ROOT, "shape %s, %s agents x %s generations, prompt %s + %s new tokens, %s thread(s), %s on %s%n",
                m.get("shape"), m.get("agents"), m.get("generations"), m.get("prompt_len"),
                m.get("new_tokens"), m.get("threads"), m.get("dtype"), m.get("device"));
        System.out.printf(Locale.ROOT, "sampling: %s%n", m.get("sampling"));
    }

    @SuppressWarnings("unchecked")
    private static void printLoraTable(Map<String, Object> out, Map<String, Object> full, Map<String, Object> team) {
        printSetting(out);
        System.out.printf(Locale.ROOT, "libtorch %s (BLAS %s, oneDNN %s, huge pages %s); LoRA r=%s, alpha=%s, no "
                + "dropout, on %s%s%n", out.get("libtorch"), out.get("blas"), out.get("onednn"), out.get("huge_pages"),
                out.get("lora_r"), out.get("lora_alpha"),
                String.join(",", (List<String>) out.get("lora_targets")),
                Boolean.TRUE.equals(out.get("lora_autocast")) ? "; autocast: the adapters' products in the base's dtype" : "");
        System.out.printf(Locale.ROOT, "full: %s models%s, generating one after the other; lora: one "
                + "frozen base, %s%n", full.get("agents"), Boolean.TRUE.equals(team.get("generation_only")) ? ""
                : " with their own AdamW", Boolean.TRUE.equals(team.get("team_generation"))
                ? "one batched team generation" : "generating through its view");
        System.out.printf(Locale.ROOT, "each configuration in a fresh JVM; peak resident = its VmHWM%n");
        boolean generationOnly = Boolean.TRUE.equals(team.get("generation_only"));
        if (generationOnly) {
            System.out.printf(Locale.ROOT, "generation only: no scoring, no AdamW state; a full agent repacks its "
                    + "decoding weights for each generation, as after an update%n");
        }
        System.out.printf(Locale.ROOT, "%-32s %12s %12s %8s %8s%n", "median", "full", "lora", "ratio", "goal");
        String[][] rows = {{"gen_tokens_per_s", "generation tokens/s (team)", ">= " + LORA_GENERATION_GOAL},
            {"decode_ms_per_token", "decoding ms per token (team)", ""}, {"prefill_ms", "prefill ms (per agent)", ""},
            {"score_ms", "scoring fwd+bwd ms (per agent)", ""}, {"optim_ms", "optimizer ms (per agent)", ""},
            {"step_ms", "whole step ms", ""}, {"peak_rss_mib", "peak resident MiB", "<= " + LORA_MEMORY_GOAL},
            {"weights_mib", "weights MiB (counted)", ""}, {"optimizer_state_mib", "AdamW state MiB (counted)", ""},
            {"gradients_mib", "gradients MiB (one agent)", ""}, {"trainable_parameters", "trainable parameters (per agent)", ""}};
        Map<?, ?> goals = (Map<?, ?>) out.get("goals");
        for (String[] r : rows) {
            double f = num(full, r[0]);
            double l = num(team, r[0]);
            if (generationOnly && f == 0 && l == 0) {
                continue; // scoring, AdamW and gradients: not measured
            }
            String goal = r[2].isEmpty() || !goals.containsKey(r[0] + "_met") ? ""
                    : r[2] + (Boolean.TRUE.equals(goals.get(r[0] + "_met")) ? " met" : " NOT met");
            System.out.printf(Locale.ROOT, "%-32s %12.2f %12.2f %8.3f %s%n", r[1], f, l, l / f, goal);
        }
        System.out.printf(Locale.ROOT, "%-32s %11.0f%% %11.0f%%%n", "CPU time of other processes", 100 * num(full,
                "others_cpu_share"), 100 * num(team, "others_cpu_share"));
        List<?> byRound = (List<?>) out.get("gen_ratio_by_round");
        if (byRound.size() > 1) {
            System.out.printf(Locale.ROOT, "generation ratio round by round (each round's full run, then its LoRA run): %s%n",
                    String.join(", ", byRound.stream().map(x -> String.format(Locale.ROOT, "%.3f", (Double) x)).toList()));
        }
    }

    /**
     * The Java medians, and with {@code --compare-pytorch} one column per PyTorch baseline, each with
     * the Java/baseline ratio (below 1 is Java ahead for times and memory, above 1 for tokens/s).
     */
    private static void printTable(Map<String, Object> java, Map<String, Map<String, Object>> torches) {
        printSetting(java);
        System.out.printf(Locale.ROOT, "java: libtorch %s (BLAS %s, oneDNN %s, huge pages %s)%n", java.get("libtorch"),
                java.get("blas"), java.get("onednn"), java.get("huge_pages"));
        torches.forEach((name, t) -> System.out.printf(Locale.ROOT, "pytorch %s: torch %s (BLAS %s, oneDNN %s), %s "
                + "thread(s); %s%n", name, t.get("torch_version"), t.get("blas"), t.get("onednn"), t.get("threads"),
                t.get("baseline_what")));
        if (!torches.isEmpty()) {
            System.out.printf(Locale.ROOT, "medians of %s rounds, each side in a fresh process; peak resident = its VmHWM%n",
                    java.get("rounds"));
        }
        String[][] rows = {{"gen_tokens_per_s", "generation tokens/s"}, {"prefill_ms", "prefill ms (per agent)"},
            {"score_ms", "scoring fwd+bwd ms (per agent)"}, {"optim_ms", "optimizer ms (per agent)"},
            {"step_ms", "whole step ms"}, {"peak_rss_mib", "peak resident MiB"}};
        StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%-32s %12s", "median", "java"));
        torches.keySet().forEach(name -> head.append(String.format(Locale.ROOT, " %12s %8s", name, "ratio")));
        System.out.println(head);
        for (String[] r : rows) {
            double j = num(java, r[0]);
            if (j == 0 && Boolean.TRUE.equals(java.get("generation_only"))) {
                continue; // scoring and AdamW: not measured
            }
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-32s %12.2f", r[1], j));
            torches.values().forEach(t -> line.append(String.format(Locale.ROOT, " %12.2f %8.2f", num(t, r[0]),
                    j / num(t, r[0]))));
            System.out.println(line);
        }
        System.out.printf(Locale.ROOT, "%-32s %12.2f%n", "host syncs per generated token", num(java, "host_syncs_per_token"));
        if (java.get("roofline") instanceof Map<?, ?> jr) {
            System.out.printf(Locale.ROOT, "machine: read %.1f GB/s, read+write %.1f GB/s, matmul %.0f GFLOP/s (measured now)%n",
                    jr.get("read_gb_per_s"), jr.get("read_write_gb_per_s"), jr.get("matmul_gflop_per_s"));
            String[][] f = {{"decode_fraction_of_bandwidth", "decoding, of the bandwidth bound", "decode_bound_ms_per_step"},
                {"optim_fraction_of_bandwidth", "AdamW, of the bandwidth bound", "optim_bound_ms"},
                {"score_fraction_of_matmul", "scoring, of the matmul rate", "score_bound_ms"}};
            for (String[] row : f) {
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-32s %11.0f%%", row[1],
                        100 * ((Number) jr.get(row[0])).doubleValue()));
                torches.values().forEach(t -> line.append(String.format(Locale.ROOT, " %11.0f%%         ",
                        100 * ((Number) ((Map<?, ?>) t.get("roofline")).get(row[0])).doubleValue())));
                System.out.println(line + String.format(Locale.ROOT, "   (bound %.3g ms)", ((Number) jr.get(row[2])).doubleValue()));
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

    /** The highest phase peak {@link #trace} has read (it resets the process's mark after each phase). */
    private double tracedPeak;

    /** The process's peak resident MiB, whether or not {@link #trace} reset the mark along the way. */
    private double runPeakMib() {
        return Math.max(tracedPeak, peakRssMib());
    }

    /**
     * With {@code --memory-trace}: resident MiB now and the high-water mark since the last call (the
     * mark is reset through {@code /proc/self/clear_refs}), and the minor page faults and kernel CPU
     * seconds since the last call (fresh pages the allocator had handed back to the system and asks
     * for again: each is zeroed by the kernel), on stderr.
     */
    private void trace(String phase) {
        if (!memoryTrace) {
            return;
        }
        double rss = statusMib("VmRSS:");
        try {
            double peak = peakRssMib();
            tracedPeak = Math.max(tracedPeak, peak);
            long[] faults = faultsAndSystemTicks();
            System.err.printf(Locale.ROOT, "memory: %-28s resident %8.0f MiB, phase peak %8.0f MiB, %8d page faults, "
                    + "kernel %5.2f s%n", phase, rss, peak, faults[0] - lastFaults[0], (faults[1] - lastFaults[1]) / 100.0);
            lastFaults = faults;
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
        } catch (IOException e) {
            System.err.println("memory: " + phase + ": " + e.getMessage());
        }
    }

    private long[] lastFaults = new long[2];

    /** Minor page faults and kernel-mode CPU ticks (1/100 s) of this process so far ({@code /proc/self/stat}). */
    private static long[] faultsAndSystemTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // fields from the 3rd on
        return new long[] {Long.parseLong(f[7]), Long.parseLong(f[12])};
    }

    static double peakRssMib() {
        return statusMib("VmHWM:");
    }

    /** A size field of {@code /proc/self/status} in MiB (NaN where it cannot be read). */
    private static double statusMib(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(field)) {
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

    /**
     * "openblas", with the kernels when {@code OPENBLAS_CORETYPE} forces them: OpenBLAS otherwise picks
     * them by the CPU, and a machine whose environment forces older ones (Haswell's AVX2 kernels on
     * an AVX-512 CPU) runs the float32 products slower (docs/PERFORMANCE.md), so a figure says which.
     */
    static String blasDescription(java.util.function.UnaryOperator<String> env) {
        String core = env.apply("OPENBLAS_CORETYPE");
        return core == null || core.isBlank() ? "openblas (kernels by CPU)" : "openblas (OPENBLAS_CORETYPE=" + core.trim() + ")";
    }

    /**
     * Whether fresh memory comes as transparent huge pages: the kernel's mode ({@code kernelMode}, the
     * bracketed word of /sys/kernel/mm/transparent_hugepage/enabled, or null where there is none) and,
     * under {@code madvise}, glibc's {@code glibc.malloc.hugetlb} tunable, which asks for them
     * ({@code bin/comlrl} sets it to 1). Faulting memory in 4 KiB at a time made a 0.5B bf16 run's
     * cold passes about twice as slow on a small VM (docs/PERFORMANCE.md), so a figure says which.
     */
    static String hugePagesDescription(String kernelMode, java.util.function.UnaryOperator<String> env) {
        if (kernelMode == null) {
            return "unknown";
        }
        if (!kernelMode.equals("madvise")) {
            return kernelMode; // always: every large mapping; never: none, whatever glibc asks
        }
        String asked = null;
        String tunables = env.apply("GLIBC_TUNABLES");
        for (String t : tunables == null ? new String[0] : tunables.split(":")) {
            if (t.startsWith("glibc.malloc.hugetlb=")) {
                asked = t.substring("glibc.malloc.hugetlb=".length()); // the last one counts
            }
        }
        return asked == null ? "madvise, not requested (glibc.malloc.hugetlb unset)"
                : (asked.equals("0") ? "madvise, not requested" : "madvise, requested") + " (glibc.malloc.hugetlb=" + asked + ")";
    }

    /** The bracketed mode of /sys/kernel/mm/transparent_hugepage/enabled, or null where it cannot be read. */
    static String transparentHugePageMode() {
        try {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\[(\\w+)\\]")
                    .matcher(Files.readString(Path.of("/sys/kernel/mm/transparent_hugepage/enabled")));
            return m.find() ? m.group(1) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
