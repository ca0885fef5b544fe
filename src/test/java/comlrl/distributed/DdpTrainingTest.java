package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.model.io.Safetensors;
import comlrl.tensor.Tensor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code parallel_training: ddp} through the CLI, two JVMs on loopback (Gloo): the agents split trains
 * bit for bit what one process trains; the data split takes the same first step (same samples, the
 * same gradient to float rounding, the same update from it); a run resumes from a checkpoint written by
 * two processes; a rank killed mid-run makes the other fail at once, naming it.
 *
 * <p>Why the data split is compared one step at a time: it adds each minibatch's gradient terms in
 * another order (two batches of G/2 rows and a sum across processes instead of one batch of G), so its
 * gradients differ from one process's in the last bits; AdamW divides by the root of the second moment,
 * which turns a rounding difference in a near-zero gradient into a difference of up to 2·lr in the
 * weight, and once a sampled token differs the runs follow other trajectories. Over one step from the
 * same state both effects are bounded, and the bounds are derived below ({@link #assertSameStep}); over
 * many steps they are not.
 *
 * <p>Multi-process runs are slow on two cores: every test but the first carries the {@code multiprocess}
 * tag; the first, one data-split step against one process, is the default suite's smoke test.
 */
class DdpTrainingTest {
    /**
     * Rounding allowed between the gradients of one step computed by one process and by two that split
     * the rows, relative to the gradient's norm. Both add the same per-token float32 terms, grouped
     * differently (one batch of G rows, or two of G/2 and one addition across processes). Each
     * element's error is at most n·u·Σ|terms| (u = 2^-24, n the longest chain of additions: the tokens
     * of a minibatch, ≲ 2·4·40 = 320, times a few reductions per layer), about 2e-5 of the terms'
     * magnitude; 1e-4 leaves a factor 5 for cancellation between terms. A wiring error (a process's
     * gradient missing from the sum, a row weighted by another row's advantage) moves the gradient by a
     * sizeable fraction of its norm.
     */
    static final double GRADIENT_TOLERANCE = 1e-4;

    /**
     * The same bound for a logged value computed from the same tokens and weights by batches of other
     * sizes (losses, KLs, values): float32 dot products over E and S terms a few layers deep, then
     * means; relative to max(1, |value|).
     */
    static final double METRIC_TOLERANCE = 1e-4;

    @TempDir
    Path tmp;

    /** A short length-ratio run on the built-in tiny model: 2 agents, G = 4, 2 epochs, a checkpoint per epoch. */
    Path config(String name, String parallel, String split) throws IOException {
        return config(name, parallel, split, 0.2);
    }

    /** As {@link #config(String, String, String)}, with {@code testSize} of the items for evaluation (0: none). */
    Path config(String name, String parallel, String split, double testSize) throws IOException {
        return config(name, parallel, split, testSize, "", "");
    }

    /** The args lines the MAGRPO and actor-critic runs share: one turn, 2 epochs, 4 samples of 8 tokens. */
    static final String SAMPLING = """
                  num_turns: 1
                  num_train_epochs: 2
                  num_generations: 4
                  max_new_tokens: 8
                  temperature: 1.0
                  top_p: 1.0
                  agent_learning_rate: 3.0e-3
                """;

    /** {@code agent_learning_rate} of {@link #SAMPLING}. */
    static final double LEARNING_RATE = 3e-3;

    /** With more {@code args} lines ({@code extraArgs}, indented) and top-level lines ({@code extraTop}). */
    Path config(String name, String parallel, String split, double testSize, String extraArgs, String extraTop)
            throws IOException {
        String args = SAMPLING + """
                  rollout_buffer_size: 2
                  eval_interval: 8
                  eval_num_samples: 2
                  logging_steps: 1
                  seed: 7
                  parallel_training: %s
                  ddp_split: %s
                """.formatted(parallel, split);
        if (extraArgs.contains("num_turns")) {
            args = args.replace("  num_turns: 1\n", "");
        }
        return runFile(name, "algorithm: magrpo", testSize, args + extraArgs + "\n", extraTop);
    }

    /**
     * {@code name/config.yaml}: the length-ratio task on the built-in tiny model (2 agents, the config's
     * {@code test_size} of the items for evaluation, 0 for none), {@code header} lines first (the
     * algorithm, critics), the {@code args} section's lines, a checkpoint per epoch, and {@code extraTop}
     * (which may replace the reward).
     */
    Path runFile(String name, String header, double testSize, String args, String extraTop) throws IOException {
        Path run = tmp.resolve(name);
        String yaml = header + "\n" + """
                agent_model: builtin:tiny
                num_agents: 2
                dataset:
                  train: builtin:length-ratio
                  %s
                formatters:
                  - "Write a short response to this task:\\n{prompt}"
                  - "Write a detailed response to this task:\\n{prompt}"
                reward:
                  type: length_ratio
                args:
                """.formatted(testSize > 0 ? "test_size: " + testSize + "\n  split_seed: 42" : "split_seed: 42")
                + args + """
                distributed:
                  timeout_s: 60
                checkpoint: {dir: %s, interval: 1}
                eval_repeats: 1
                report: false
                output_dir: %s
                %s
                """.formatted(run.resolve("checkpoints"), run, extraTop);
        if (extraTop.contains("reward: {type: command")) {
            yaml = yaml.replace("reward:\n  type: length_ratio\n", "");
        }
        Files.createDirectories(run);
        Path file = run.resolve("config.yaml");
        Files.writeString(file, yaml);
        return file;
    }

    /** {@code train config args} in one child JVM (no torchrun variables); returns its output. */
    String trainAlone(Path config, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(Launcher.javaCommand("comlrl.cli.Main"));
        cmd.addAll(List.of("train", config.toString()));
        cmd.addAll(List.of(args));
        Path log = config.resolveSibling("alone.log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
        String out = Files.readString(log);
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    /** {@code train config args} in two ranks; returns rank 0's output after both exit 0. */
    String trainTwoRanks(Path config, String... args) throws Exception {
        List<String> cli = new ArrayList<>(List.of("train", config.toString()));
        cli.addAll(List.of(args));
        try (RankProcesses ranks = RankProcesses.start(config.getParent(), 2, comlrl.cli.Main.class,
                cli.toArray(String[]::new))) {
            for (int r = 0; r < 2; r++) {
                assertThat(ranks.process(r).waitFor(10, TimeUnit.MINUTES)).isTrue();
            }
            for (int r = 0; r < 2; r++) {
                assertThat(ranks.process(r).exitValue()).as("rank %d:%n%s", r, ranks.output(r)).isZero();
            }
            assertThat(ranks.output(1)).doesNotContain("eval reward after training");
            return ranks.output(0);
        }
    }

    static List<Map<String, Object>> metrics(Path run) throws IOException {
        ObjectMapper json = new ObjectMapper();
        List<Map<String, Object>> events = new ArrayList<>();
        for (String line : Files.readAllLines(run.resolve("metrics.jsonl"))) {
            @SuppressWarnings("unchecked")
            Map<String, Object> e = json.readValue(line, Map.class);
            e.remove("timestamp");
            e.remove("time");
            events.add(e);
        }
        return events;
    }

    /** Every tensor of every safetensors file under {@code dir}, by relative path and name. */
    static Map<String, float[]> weights(Path dir) throws IOException {
        Map<String, float[]> out = new TreeMap<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".safetensors")).sorted().toList()) {
                Map<String, Tensor> t = Safetensors.load(f);
                try {
                    t.forEach((k, v) -> out.put(dir.relativize(f) + ":" + k, v.to(comlrl.tensor.DType.F32).toFloatArray()));
                } finally {
                    t.values().forEach(Tensor::close);
                }
            }
        }
        return out;
    }

    /** Same events with the same keys; every value within {@code tol} (relative to its size). */
    static void assertSameMetrics(List<Map<String, Object>> a, List<Map<String, Object>> b, double tol) {
        assertThat(b).hasSameSizeAs(a);
        for (int e = 0; e < a.size(); e++) {
            assertThat(b.get(e).keySet()).as("keys of event %d", e).isEqualTo(a.get(e).keySet());
            for (String k : a.get(e).keySet()) {
                double x = ((Number) a.get(e).get(k)).doubleValue();
                double y = ((Number) b.get(e).get(k)).doubleValue();
                assertThat(Math.abs(x - y)).as("%s of event %d: %s vs %s", k, e, x, y).isLessThanOrEqualTo(tol * Math.max(1, Math.abs(x)));
            }
        }
    }

    static void assertSameWeights(Map<String, float[]> a, Map<String, float[]> b, double tolerance) {
        assertThat(b.keySet()).isEqualTo(a.keySet());
        double tol = System.getenv("DDP_REPORT") != null ? Double.MAX_VALUE : tolerance;
        assertThat(a).isNotEmpty();
        a.forEach((k, v) -> {
            float[] w = b.get(k);
            double worst = 0;
            for (int i = 0; i < v.length; i++) {
                worst = Math.max(worst, Math.abs(v[i] - w[i]));
            }
            if (System.getenv("DDP_REPORT") != null) {
                System.out.printf("DIFF %s %.3g%n", k, worst);
            }
            assertThat(worst).as("largest difference in %s", k).isLessThanOrEqualTo(tol);
        });
    }

    /** Every tensor of one safetensors file, by name, as float32. */
    static Map<String, float[]> tensors(Path file) throws IOException {
        Map<String, float[]> out = new TreeMap<>();
        Map<String, Tensor> t = Safetensors.load(file);
        try {
            t.forEach((k, v) -> out.put(k, v.to(comlrl.tensor.DType.F32).toFloatArray()));
        } finally {
            t.values().forEach(Tensor::close);
        }
        return out;
    }

    private static double norm(float[] v) {
        double sum = 0;
        for (float x : v) {
            sum += (double) x * x;
        }
        return Math.sqrt(sum);
    }

    private static double normOfDifference(float[] a, float[] b) {
        double sum = 0;
        for (int i = 0; i < a.length; i++) {
            double d = (double) a[i] - b[i];
            sum += d * d;
        }
        return Math.sqrt(sum);
    }

    /**
     * {@code config} over 2 training items ({@code test_size: 0.8} of the ten; the other 8 evaluate):
     * one optimizer step per epoch, a checkpoint after each.
     */
    static Path twoItems(Path config) throws IOException {
        String yaml = Files.readString(config);
        assertThat(yaml).contains("test_size: 0.2\n");
        Files.writeString(config, yaml.replace("test_size: 0.2\n", "test_size: 0.8\n"));
        return config;
    }

    /** {@link #twoItems} for one epoch: one optimizer step, checkpointed right after it as {@code checkpoint-1}. */
    static Path oneStep(Path config) throws IOException {
        String yaml = Files.readString(twoItems(config));
        assertThat(yaml).contains("num_train_epochs: 2\n");
        Files.writeString(config, yaml.replace("num_train_epochs: 2\n", "num_train_epochs: 1\n"));
        return config;
    }

    /** AdamW's defaults in the trainers (β1, β2, ε). */
    static final double BETA1 = 0.9;
    static final double BETA2 = 0.999;
    static final double EPSILON = 1e-8;

    /**
     * Two runs that took one optimizer step each from the same state, on the same samples: their
     * checkpoints {@code a} and {@code b}, written right after it, hold the same gradient, and each
     * run's weights took the update its own moments give.
     * <ul>
     *   <li>AdamW's first moment after the step is m = β1·m₀ + (1−β1)·g with the same m₀: per state
     *       tensor, ‖m_a − m_b‖ ≤ {@link #GRADIENT_TOLERANCE}·max(‖m_a‖, 1e-3·‖m_a‖ over all tensors)
     *       (the floor for tensors whose exact gradient is zero, such as the key biases, where both
     *       runs hold rounding noise); the second moment (g²) at twice the tolerance.
     *   <li>each run moved its weights from the same w₀ by lr·(λ·w₀ + q), q = m̂/(√v̂ + ε) of its own
     *       bias-corrected moments at step t, so per element |w_a − w_b| ≤ lr·|q_a − q_b| + 2·ulp(w)
     *       + 8·u·lr (the roundings of both updates and of their application). This holds however
     *       far a near-zero gradient's q moves, and fails where a weight did not take the step its
     *       moments say (checked for each {@code optimizer_i} over the full model {@code agent_i}).
     * </ul>
     */
    static void assertSameStep(Path a, Path b, double lr) throws IOException {
        assertSameSteps(a, b, lr, 1);
    }

    /**
     * {@link #assertSameStep} where each optimizer took up to {@code stepsPerDrain} steps on the same
     * samples (a multi-turn drain steps once per turn): the moments only, as the later steps start from
     * weights one step's rounding apart. Their difference then also holds the later gradients' move
     * from that rounding (a few 1e-7 of the norm when measured over two turns; the tolerance is a
     * hundred times that).
     */
    static void assertSameSteps(Path a, Path b, double lr, int stepsPerDrain) throws IOException {
        List<Path> files;
        try (Stream<Path> list = Files.list(a)) {
            files = list.filter(f -> f.getFileName().toString().matches(".*optimizer.*\\.safetensors")).sorted().toList();
        }
        assertThat(files).as("optimizer states in %s", a).isNotEmpty();
        for (Path fa : files) {
            String file = fa.getFileName().toString();
            Map<String, float[]> sa = tensors(fa);
            Map<String, float[]> sb = tensors(b.resolve(file));
            assertThat(sb.keySet()).as(file).isEqualTo(sa.keySet());
            assertThat(sb.get("step")).as("%s: steps taken", file).isEqualTo(sa.get("step"));
            int t = (int) sa.get("step")[0];
            Map<String, Double> whole = new TreeMap<>(); // ‖m‖ and ‖v‖ over all tensors
            for (String moment : List.of("exp_avg.", "exp_avg_sq.")) {
                whole.put(moment, Math.sqrt(sa.entrySet().stream().filter(e -> e.getKey().startsWith(moment))
                        .mapToDouble(e -> Math.pow(norm(e.getValue()), 2)).sum()));
            }
            assertThat(whole.get("exp_avg.")).as("%s: a gradient was taken", file).isPositive();
            int count = 0;
            for (String key : sa.keySet()) {
                boolean first = key.startsWith("exp_avg.");
                if (!first && !key.startsWith("exp_avg_sq.")) {
                    continue;
                }
                double scale = Math.max(norm(sa.get(key)), 1e-3 * whole.get(first ? "exp_avg." : "exp_avg_sq."));
                if (System.getenv("DDP_REPORT") != null) {
                    System.out.printf("STEP %s %s relative difference %.3g%n", file, key,
                            normOfDifference(sa.get(key), sb.get(key)) / scale);
                }
                assertThat(normOfDifference(sa.get(key), sb.get(key))).as("%s: %s of both runs", file, key)
                        .isLessThanOrEqualTo((first ? 1 : 2) * GRADIENT_TOLERANCE * scale);
                count += first ? 1 : 0;
            }
            java.util.regex.Matcher actor = java.util.regex.Pattern.compile("optimizer_(\\d+)\\.safetensors").matcher(file);
            Path agent = actor.matches() ? a.resolve("agent_" + actor.group(1)) : null;
            if (stepsPerDrain > 1 || agent == null || !Files.isDirectory(agent)
                    || Files.exists(agent.resolve("adapter_config.json"))) {
                continue;
            }
            List<String> names;
            try (comlrl.model.DecoderLm lm = comlrl.model.DecoderLm.load(agent, comlrl.model.ModelConfig.load(agent),
                    comlrl.tensor.DType.F32, comlrl.tensor.Device.CPU)) {
                names = List.copyOf(lm.namedParameters().keySet());
            }
            if (names.size() != count) { // value heads in the same optimizer: their order is the trainer's
                continue;
            }
            Map<String, float[]> wa = weights(agent);
            Map<String, float[]> wb = weights(b.resolve(agent.getFileName()));
            double c1 = 1 - Math.pow(BETA1, t);
            double c2 = 1 - Math.pow(BETA2, t);
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(i);
                String key = wa.keySet().stream().filter(k -> k.endsWith(":" + name)).findFirst().orElseThrow();
                float[] x = wa.get(key);
                float[] y = wb.get(key);
                float[] ma = sa.get("exp_avg." + i);
                float[] mb = sb.get("exp_avg." + i);
                float[] va = sa.get("exp_avg_sq." + i);
                float[] vb = sb.get("exp_avg_sq." + i);
                assertThat(ma).as("%s is parameter %d of %s", name, i, file).hasSameSizeAs(x);
                for (int k = 0; k < x.length; k++) {
                    double qa = ma[k] / c1 / (Math.sqrt(va[k] / c2) + EPSILON);
                    double qb = mb[k] / c1 / (Math.sqrt(vb[k] / c2) + EPSILON);
                    double bound = lr * Math.abs(qa - qb) + 2 * Math.ulp(Math.max(Math.abs(x[k]), Math.abs(y[k])))
                            + 8 * Math.ulp(1.0f) * lr;
                    if (System.getenv("DDP_REPORT") != null && x[k] != y[k]) {
                        System.out.printf("WEIGHT %s[%d] %.3g of %.3g allowed%n", name, k, Math.abs(x[k] - y[k]), bound);
                    }
                    if (Math.abs(x[k] - y[k]) > bound) {
                        throw new AssertionError(String.format("%s[%d] of %s: %s vs %s, more than the %.3g the moments allow",
                                name, k, agent.getFileName(), x[k], y[k], bound));
                    }
                }
            }
        }
    }

    /**
     * The logged events of two runs that took their first step on the same samples: the same events
     * with the same keys; up to that step's event (the first with a policy or DPO loss) and the events
     * logged with it, the rewards of the same texts equal and every other value within {@link
     * #METRIC_TOLERANCE}. Later events (an evaluation after the step, a later iteration) sample from
     * the updated weights, which the step's rounding may have moved enough to flip a sampled token:
     * their keys only.
     */
    static void assertSameStepMetrics(List<Map<String, Object>> a, List<Map<String, Object>> b) {
        assertThat(b).hasSameSizeAs(a);
        int step = 0;
        while (step < a.size() && a.get(step).keySet().stream().noneMatch(k -> k.endsWith("policy_loss") || k.endsWith("dpo_loss"))) {
            step++;
        }
        assertThat(step).as("an event with the first step's loss").isLessThan(a.size());
        Object stepEnv = a.get(step).get("env_step");
        for (int e = 0; e < a.size(); e++) {
            assertThat(b.get(e).keySet()).as("keys of event %d", e).isEqualTo(a.get(e).keySet());
            boolean evaluation = a.get(e).keySet().stream().anyMatch(k -> k.startsWith("eval/"));
            if (e > step && (evaluation || !stepEnv.equals(a.get(e).get("env_step")))) {
                continue;
            }
            assertSameMetrics(List.of(a.get(e)), List.of(b.get(e)), METRIC_TOLERANCE);
            for (String k : a.get(e).keySet()) {
                // (DPO's implicit rewards/* are log-probability sums: within the tolerance above, not equal)
                if ((k.contains("reward") && !k.contains("/rewards/")) || k.contains("length") || k.equals("env_step")) {
                    assertThat(b.get(e).get(k)).as("%s of event %d (the same samples)", k, e).isEqualTo(a.get(e).get(k));
                }
            }
        }
    }

    /** Both agents' saved weights of the runs of {@code a} and {@code b} within {@code tolerance}. */
    static void assertSameAgents(Path a, Path b, double tolerance) throws IOException {
        for (String agent : List.of("agent_0", "agent_1")) {
            assertSameWeights(weights(a.getParent().resolve(agent)), weights(b.getParent().resolve(agent)), tolerance);
        }
    }

    /** The weights after training differ from the initial ones (so equality above means something). */
    static void assertTrained(Path run) throws IOException {
        Map<String, float[]> first = weights(run.resolve("checkpoints/checkpoint-1/agent_0"));
        Map<String, float[]> last = weights(run.resolve("agent_0"));
        assertThat(first.keySet()).hasSameSizeAs(last.keySet());
        boolean moved = false;
        for (String k : first.keySet()) {
            String name = k.substring(k.indexOf(':'));
            float[] f = first.get(k);
            float[] l = last.entrySet().stream().filter(e -> e.getKey().endsWith(name)).findFirst().orElseThrow().getValue();
            for (int i = 0; i < f.length && !moved; i++) {
                moved = f[i] != l[i];
            }
        }
        assertThat(moved).as("the second epoch changed agent 0's weights").isTrue();
    }

    /**
     * The run of {@link #config} alone and on two processes split as {@code split}: the same metrics
     * (to {@code metricTolerance}), the same weights of both agents (to {@code weightTolerance}) and
     * the same final evaluation. Returns rank 0's output; the one-process run is in {@code alone/}.
     */
    String assertTwoProcessesTrainAsOne(String name, String split, double metricTolerance, double weightTolerance)
            throws Exception {
        Path alone = config("alone", "none", "data");
        Path ddp = config(name, "ddp", split);
        String out1 = trainAlone(alone);
        String out2 = trainTwoRanks(ddp);
        assertThat(out2).contains("2 processes (gloo), ddp_split " + split);
        List<Map<String, Object>> m1 = metrics(alone.getParent());
        assertThat(m1).hasSizeGreaterThan(10);
        assertSameMetrics(m1, metrics(ddp.getParent()), metricTolerance);
        assertSameAgents(alone, ddp, weightTolerance);
        assertThat(lastLine(out2, "eval reward after training")).isEqualTo(lastLine(out1, "eval reward after training"));
        return out2;
    }

    /**
     * The default suite's two-process check: on two processes the data split samples what one process
     * samples and takes its step (the same gradient to rounding, the same update from it); rank 0 alone
     * writes the run's metrics and checkpoint; the final evaluation is the same.
     */
    @Test
    void theDataSplitOnTwoProcessesTakesTheStepOneProcessTakes() throws Exception {
        Path alone = oneStep(config("alone", "none", "data"));
        Path ddp = oneStep(config("ddp", "ddp", "data"));
        String out1 = trainAlone(alone);
        String out2 = trainTwoRanks(ddp);
        assertThat(out2).contains("2 processes (gloo), ddp_split data");
        assertSameStep(alone.resolveSibling("checkpoints/checkpoint-1"), ddp.resolveSibling("checkpoints/checkpoint-1"),
                LEARNING_RATE);
        assertSameStepMetrics(metrics(alone.getParent()), metrics(ddp.getParent()));
        assertThat(out1).contains("eval reward after training");
        assertThat(out2).contains("eval reward after training");
    }

    /**
     * {@code num_iterations: 2} (the clipped surrogate, old log-probabilities scored by each agent's
     * owner, or per rank for its own rows): the agents split trains bit for bit what one process
     * trains, clip ratios included; the data split takes one process's two steps of a drain.
     */
    @Test
    @Tag("multiprocess")
    void severalIterationsOnTwoProcessesTrainWhatOneProcessTrains() throws Exception {
        String mu = "  num_iterations: 2\n  epsilon_high: 0.28\n";
        Path alone = config("alone", "none", "data", 0.2, mu, "");
        Path agents = config("agents", "ddp", "agents", 0.2, mu, "");
        trainAlone(alone);
        trainTwoRanks(agents);
        List<Map<String, Object>> m1 = metrics(alone.getParent());
        assertThat(m1.stream().anyMatch(e -> e.containsKey("turn_1/clip_ratio/region_mean"))).isTrue();
        assertSameMetrics(m1, metrics(agents.getParent()), 1e-9);
        assertSameAgents(alone, agents, 0);
        Path alone1 = oneStep(config("alone1", "none", "data", 0.2, mu, ""));
        Path data1 = oneStep(config("data1", "ddp", "data", 0.2, mu, ""));
        trainAlone(alone1);
        trainTwoRanks(data1);
        assertSameSteps(alone1.resolveSibling("checkpoints/checkpoint-1"), data1.resolveSibling("checkpoints/checkpoint-1"),
                LEARNING_RATE, 2);
        assertSameStepMetrics(metrics(alone1.getParent()), metrics(data1.getParent()));
    }

    @Test
    @Tag("multiprocess")
    void theAgentsSplitOnTwoProcessesTrainsWhatOneProcessTrainsBitForBit() throws Exception {
        assertTwoProcessesTrainAsOne("agents", "agents", 1e-9, 0);
        assertTrained(tmp.resolve("alone"));
    }

    /** Two turns through an external transition (a script that logs its calls), reference KL, LoRA agents (both splits). */
    static final String TWO_TURNS = "  num_turns: 2\n  early_termination_threshold: null";
    static final String TRANSITION = "external_transition: {type: command, run: [bash, next.sh], timeout_s: 60}";

    /** A JSON-lines command beside {@code config} that appends a line to {@code log} per request and answers {@code reply}. */
    static Path withCountingCommand(Path config, String script, String log, String reply) throws IOException {
        Files.writeString(config.resolveSibling(script), String.join("\n", "while IFS= read -r line; do",
                "  echo call >> " + log, "  " + reply, "done", ""));
        return config;
    }

    Path withTransition(Path config) throws IOException {
        return withCountingCommand(config, "next.sh", "calls.log",
                "echo '[\"Improve the short answer:\", \"Improve the detailed answer:\"]'");
    }

    static long calls(Path config) throws IOException {
        return calls(config, "calls.log");
    }

    static long calls(Path config, String log) throws IOException {
        return Files.readAllLines(config.resolveSibling(log)).size();
    }

    /** A reward command that logs its calls: 0 .. 6 by the length of the request (so, of the completions). */
    static final String COUNTED_REWARD = "reward: {type: command, run: [bash, reward.sh]}";

    static Path withCountedReward(Path config) throws IOException {
        return withCountingCommand(config, "reward.sh", "rewards.log", "echo \"[$(( ${#line} % 7 ))]\"");
    }

    @Test
    @Tag("multiprocess")
    void twoTurnsReferenceKlAndLoraTrainAsOneProcessWithRewardAndTransitionCalledOnce() throws Exception {
        String klArgs = TWO_TURNS.replace("num_turns: 2", "num_turns: 2\n  reference_kl_enabled: true");
        Path alone = oneStep(withTransition(config("alone", "none", "data", 0.2, klArgs, TRANSITION)));
        Path data = oneStep(withTransition(config("data", "ddp", "data", 0.2, klArgs, TRANSITION)));
        trainAlone(alone);
        trainTwoRanks(data);
        List<Map<String, Object>> m1 = metrics(alone.getParent());
        assertThat(m1).anyMatch(e -> e.containsKey("turn_2/reference_kl_mean"));
        assertSameStepMetrics(m1, metrics(data.getParent()));
        assertSameSteps(alone.resolveSibling("checkpoints/checkpoint-1"), data.resolveSibling("checkpoints/checkpoint-1"),
                LEARNING_RATE, 2); // one step per turn
        assertThat(calls(alone)).isPositive();
        assertThat(calls(data)).as("the transition runs on rank 0 only, once per branch").isEqualTo(calls(alone));

        String lora = TRANSITION + "\nlora: {r: 4, alpha: 8, target_modules: [q_proj, v_proj]}\n" + COUNTED_REWARD;
        Path loraAlone = withCountedReward(withTransition(config("lora-alone", "none", "data", 0.2, klArgs, lora)));
        Path loraAgents = withCountedReward(withTransition(config("lora-agents", "ddp", "agents", 0.2, klArgs, lora)));
        trainAlone(loraAlone);
        trainTwoRanks(loraAgents);
        assertSameMetrics(metrics(loraAlone.getParent()), metrics(loraAgents.getParent()), 1e-9);
        for (String agent : List.of("agent_0", "agent_1")) { // PEFT adapter directories
            assertThat(loraAgents.getParent().resolve(agent).resolve("adapter_config.json")).exists();
            assertSameWeights(weights(loraAlone.getParent().resolve(agent)), weights(loraAgents.getParent().resolve(agent)), 0);
        }
        assertThat(calls(loraAgents)).isEqualTo(calls(loraAlone));
        assertThat(calls(loraAlone, "rewards.log")).isPositive();
        assertThat(calls(loraAgents, "rewards.log")).as("the reward runs on rank 0 only, once per joint response")
                .isEqualTo(calls(loraAlone, "rewards.log"));
    }

    /** An IAC or MAAC run of the same task: K = 4 samples per prompt, a minibatch of 4, separate critics. */
    Path actorCriticConfig(String name, String algorithm, String parallel, String extraArgs) throws IOException {
        String args = SAMPLING + """
                  critic_learning_rate: 1.0e-3
                  rollout_buffer_size: 4
                  train_batch_size: 4
                  eval_interval: 8
                  eval_num_samples: 2
                  logging_steps: 1
                  seed: 7
                  parallel_training: %s
                """.formatted(parallel) + extraArgs + "\n";
        String header = "algorithm: " + algorithm + (extraArgs.contains("use_separate_critic: false") ? ""
                : "\ncritic_model: builtin:tiny");
        return runFile(name, header, 0.2, args, "");
    }

    /**
     * {@link #oneStep} for {@link #actorCriticConfig}: the 2 items' 8 samples per agent in one rollout
     * buffer and one minibatch, so every actor and critic takes one step.
     */
    static Path oneStepActorCritic(Path config) throws IOException {
        String yaml = Files.readString(oneStep(config));
        assertThat(yaml).contains("rollout_buffer_size: 4\n").contains("train_batch_size: 4\n");
        Files.writeString(config, yaml.replace("rollout_buffer_size: 4\n", "rollout_buffer_size: 8\n")
                .replace("train_batch_size: 4\n", "train_batch_size: 8\n"));
        return config;
    }

    /**
     * IAC with separate critics, IAC with a value head on each actor (one loss), MAAC's shared critic:
     * on two processes, the data split takes one process's step (every optimizer), the agents split
     * trains bit for bit (each actor and its critic or head on its owner, MAAC's critic on both);
     * an agents-split checkpoint (each process's parts, MAAC's critic from rank 0) resumes exactly.
     */
    @Test
    @Tag("multiprocess")
    void iacAndMaacOnTwoProcessesTrainWhatOneProcessTrains() throws Exception {
        for (String variant : List.of("iac", "iac-heads", "maac")) {
            String algorithm = variant.startsWith("iac") ? "iac" : "maac";
            String extra = variant.equals("iac-heads") ? "  use_separate_critic: false" : "";
            // the data split: one step of every actor and critic optimizer (8 samples in one minibatch)
            Path stepAlone = oneStepActorCritic(actorCriticConfig(variant + "-step-alone", algorithm, "none", extra));
            Path stepDdp = oneStepActorCritic(actorCriticConfig(variant + "-step-ddp", algorithm, "ddp", extra));
            trainAlone(stepAlone);
            String stepOut2 = trainTwoRanks(stepDdp);
            assertThat(stepOut2).contains("2 processes (gloo), ddp_split data");
            List<Map<String, Object>> steps = metrics(stepAlone.getParent());
            assertThat(steps).anyMatch(e -> e.keySet().stream().anyMatch(k -> k.contains("value_loss")));
            assertSameStepMetrics(steps, metrics(stepDdp.getParent()));
            Path stepCkpt = stepAlone.resolveSibling("checkpoints/checkpoint-1");
            try (Stream<Path> files = Files.list(stepCkpt)) { // actors' and critics' (or heads') optimizers
                assertThat(files.map(f -> f.getFileName().toString()).filter(f -> f.contains("optimizer")).count())
                        .isEqualTo(variant.equals("iac") ? 4 : variant.equals("maac") ? 3 : 2);
            }
            assertSameStep(stepCkpt, stepDdp.resolveSibling("checkpoints/checkpoint-1"), LEARNING_RATE);

            // the agents split: bit for bit over two epochs
            Path alone = actorCriticConfig(variant + "-alone", algorithm, "none", extra);
            Path agents = actorCriticConfig(variant + "-agents", algorithm, "ddp", extra + "\n  ddp_split: agents");
            String out1 = trainAlone(alone);
            List<Map<String, Object>> m1 = metrics(alone.getParent());
            Map<String, float[]> w1 = weights(alone.getParent());
            assertThat(w1.keySet()).anyMatch(k -> k.contains("critic") || k.contains("value_head")); // critics, heads

            String out3 = trainTwoRanks(agents);
            assertThat(out3).as(variant).contains("2 processes (gloo), ddp_split agents");
            assertSameMetrics(m1, metrics(agents.getParent()), 0);
            assertSameWeights(w1, savedWeights(agents, w1), 0);
            assertThat(lastLine(out3, "eval reward after training")).isEqualTo(lastLine(out1, "eval reward after training"));
            if (!variant.equals("iac-heads")) {
                Path ckpt = agents.getParent().resolve("checkpoints/checkpoint-1");
                List<String> parts = variant.equals("iac")
                        ? List.of("agent_1", "critic_0", "critic_1", "value_head_0", "value_head_1")
                        : List.of("agent_1", "critic", "value_head", "critic_optimizer.safetensors");
                parts.forEach(part -> assertThat(ckpt.resolve(part)).as(variant + " " + part).exists());
                Path resumed = actorCriticConfig(variant + "-agents-resumed", algorithm, "ddp",
                        extra + "\n  ddp_split: agents");
                trainTwoRanks(resumed, "--resume", ckpt.toString());
                Map<String, float[]> saved1 = new TreeMap<>(w1);
                saved1.keySet().removeIf(k -> k.startsWith("checkpoints"));
                assertSameWeights(saved1, savedWeights(resumed, saved1), 0);
                List<Map<String, Object>> second = metrics(resumed.getParent()); // the second epoch's events
                assertThat(second).isNotEmpty().hasSizeLessThan(m1.size());
                assertSameMetrics(m1.subList(m1.size() - second.size(), m1.size()), second, 0);
            }
        }
    }

    /**
     * A library user's {@code metrics_callback} runs on rank 0 only and is given what one process gives
     * it: every agent's samples (prompt ids, old log-probabilities and values, reference KLs, rewards,
     * MAAC's joint critic ids), in training and evaluation, under both splits.
     */
    @Test
    @Tag("multiprocess")
    void aMetricsCallbackSeesOnRankZeroTheRolloutsOfOneProcess() throws Exception {
        for (String algorithm : List.of("iac", "maac")) {
            Path alone = tmp.resolve(algorithm + "-callback-alone");
            Files.createDirectories(alone);
            List<String> cmd = new ArrayList<>(Launcher.javaCommand(ActorCriticCallbackMain.class.getName()));
            cmd.addAll(List.of(alone.resolve("samples").toString(), algorithm, "none", "data"));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(alone.resolve("out.log").toFile())
                    .start();
            assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
            assertThat(p.exitValue()).as(Files.readString(alone.resolve("out.log"))).isZero();
            String expected = Files.readString(alone.resolve("samples.rank0"));
            assertThat(expected.lines()).hasSizeGreaterThan(8).anyMatch(l -> l.startsWith("1 "));
            for (String split : List.of("data", "agents")) {
                Path dir = tmp.resolve(algorithm + "-callback-" + split);
                Files.createDirectories(dir);
                try (RankProcesses ranks = RankProcesses.start(dir, 2, ActorCriticCallbackMain.class,
                        dir.resolve("samples").toString(), algorithm, "ddp", split)) {
                    for (int r = 0; r < 2; r++) {
                        assertThat(ranks.process(r).waitFor(5, TimeUnit.MINUTES)).isTrue();
                        assertThat(ranks.process(r).exitValue()).as("rank %d:%n%s", r, ranks.output(r)).isZero();
                    }
                }
                String seen = Files.readString(dir.resolve("samples.rank0"));
                if (split.equals("agents")) {
                    assertThat(seen).as(algorithm + " " + split).isEqualTo(expected);
                } else { // the data split sums each minibatch's gradient in another order: values within rounding
                    assertThat(seen.lines().map(l -> l.split(" ", 2)[0]).toList())
                            .isEqualTo(expected.lines().map(l -> l.split(" ", 2)[0]).toList());
                }
                assertThat(dir.resolve("samples.rank1")).as("the callback ran on rank 1").doesNotExist();
            }
        }
    }

    /**
     * Two turns through an external transition with reference KL, IAC (separate critics, TD targets
     * from the next turn's old values) and MAAC, agents split: bit for bit the one-process run, the
     * transition called as often.
     */
    @Test
    @Tag("multiprocess")
    void actorCriticTwoTurnsWithReferenceKlOnTheAgentsSplitTrainAsOneProcess() throws Exception {
        for (String algorithm : List.of("iac", "maac")) {
            String args = SAMPLING.replace("  num_turns: 1\n", TWO_TURNS + "\n  reference_kl_enabled: true\n")
                    .replace("num_generations: 4", "num_generations: 1") + """
                      critic_learning_rate: 1.0e-3
                      rollout_buffer_size: 2
                      train_batch_size: 2
                      eval_interval: 8
                      eval_num_samples: 2
                      logging_steps: 1
                      seed: 7
                      parallel_training: %s
                    """;
            String header = "algorithm: " + algorithm + "\ncritic_model: builtin:tiny";
            Path alone = withTransition(runFile(algorithm + "-turns-alone", header, 0.2, args.formatted("none"), TRANSITION));
            Path agents = withTransition(runFile(algorithm + "-turns-agents", header, 0.2,
                    args.formatted("ddp") + "  ddp_split: agents\n", TRANSITION));
            String out1 = trainAlone(alone);
            String out2 = trainTwoRanks(agents);
            List<Map<String, Object>> m1 = metrics(alone.getParent());
            assertThat(m1).anyMatch(e -> e.containsKey("turn_2/reference_kl_mean"));
            assertSameMetrics(m1, metrics(agents.getParent()), 0);
            Map<String, float[]> w1 = weights(alone.getParent());
            assertSameWeights(w1, savedWeights(agents, w1), 0);
            assertThat(lastLine(out2, "eval reward after training")).isEqualTo(lastLine(out1, "eval reward after training"));
            assertThat(calls(alone)).isPositive();
            assertThat(calls(agents)).as(algorithm + ": the transition runs on rank 0 only").isEqualTo(calls(alone));
        }
    }

    /** {@code config} with {@code distributed.zero_stage: 1}. */
    static Path withZeroStage1(Path config) throws IOException {
        String yaml = Files.readString(config);
        assertThat(yaml).contains("distributed:\n  timeout_s: 60\n");
        Files.writeString(config, yaml.replace("distributed:\n  timeout_s: 60\n", "distributed:\n  timeout_s: 60\n  zero_stage: 1\n"));
        return config;
    }

    /**
     * {@code zero_stage: 1} (each process keeps the AdamW state of its share of the parameters and
     * sends its updates) trains bit for bit what the data split without it trains: MAGRPO, IAC
     * (actor and critic optimizers) and MADPO; rank 0's checkpoints hold the whole optimizer state,
     * byte for byte the unsharded run's, and a sharded run resumes from them exactly.
     */
    @Test
    @Tag("multiprocess")
    void zeroStageOneTrainsWhatTheDataSplitTrainsAndCheckpointsTheWholeState() throws Exception {
        Path plain = config("zero0", "ddp", "data");
        Path zero = withZeroStage1(config("zero1", "ddp", "data"));
        trainTwoRanks(plain);
        trainTwoRanks(zero);
        assertSameMetrics(metrics(plain.getParent()), metrics(zero.getParent()), 0);
        Map<String, float[]> w0 = weights(plain.getParent()); // agents and every checkpoint (optimizer files too)
        assertThat(w0.keySet()).anyMatch(k -> k.contains("optimizer_1.safetensors:exp_avg_sq."));
        assertSameWeights(w0, weights(zero.getParent()), 0);
        Path resumed = withZeroStage1(config("zero1-resumed", "ddp", "data"));
        trainTwoRanks(resumed, "--resume", zero.getParent().resolve("checkpoints/checkpoint-1").toString());
        assertSameAgents(zero, resumed, 0);

        Path iac = actorCriticConfig("iac-zero0", "iac", "ddp", "");
        Path iacZero = withZeroStage1(actorCriticConfig("iac-zero1", "iac", "ddp", ""));
        trainTwoRanks(iac);
        trainTwoRanks(iacZero);
        assertSameMetrics(metrics(iac.getParent()), metrics(iacZero.getParent()), 0);
        Map<String, float[]> wi = weights(iac.getParent());
        assertThat(wi.keySet()).anyMatch(k -> k.contains("critic_optimizer_1.safetensors:exp_avg."));
        assertSameWeights(wi, weights(iacZero.getParent()), 0);

        String madpoArgs = MADPO_ARGS.formatted("ddp");

        Path madpo = runFile("madpo-zero0", "algorithm: madpo", 0.2, madpoArgs, "");
        Path madpoZero = withZeroStage1(runFile("madpo-zero1", "algorithm: madpo", 0.2, madpoArgs, ""));
        trainTwoRanks(madpo);
        trainTwoRanks(madpoZero);
        assertSameMetrics(metrics(madpo.getParent()), metrics(madpoZero.getParent()), 0);
        assertSameWeights(weights(madpo.getParent()), weights(madpoZero.getParent()), 0);
    }

    /** The weights a run saved that the one-process run saved too (its checkpoints aside). */
    static Map<String, float[]> savedWeights(Path config, Map<String, float[]> like) throws IOException {
        return weights(config.getParent()).entrySet().stream().filter(e -> like.containsKey(e.getKey()))
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    /** A short MADPO run (frozen-initial reference), {@code parallel_training} left as %s. */
    static final String MADPO_ARGS = """
              num_train_epochs: 2
              preference_num_candidates: 5
              preference_pairs_per_sample: 2
              dpo_beta: 0.5
              dpo_reference: frozen_initial
              train_batch_size: 5
              max_new_tokens: 8
              temperature: 1.0
              top_p: 1.0
              agent_learning_rate: 3.0e-3
              eval_interval: 2
              eval_num_samples: 2
              logging_steps: 1
              seed: 7
              parallel_training: %s
            """;

    @Test
    @Tag("multiprocess")
    void madpoOnTwoProcessesTrainsWhatOneProcessTrains() throws Exception {
        String args = MADPO_ARGS;

        // the data split: candidates divided, scored on rank 0; one DPO step (4 pairs per agent, a batch of 5)
        Path stepAlone = oneStep(runFile("madpo-step-alone", "algorithm: madpo", 0.2, args.formatted("none"), ""));
        Path stepDdp = oneStep(runFile("madpo-step-ddp", "algorithm: madpo", 0.2, args.formatted("ddp"), ""));
        trainAlone(stepAlone);
        String stepOut2 = trainTwoRanks(stepDdp);
        assertThat(stepOut2).contains("2 processes (gloo), ddp_split data");
        assertThat(metrics(stepAlone.getParent())).anyMatch(e -> e.containsKey("dpo_loss"));
        assertSameStepMetrics(metrics(stepAlone.getParent()), metrics(stepDdp.getParent()));
        Path stepCkpt = stepAlone.resolveSibling("checkpoints/checkpoint-1");
        assertSameStep(stepCkpt, stepDdp.resolveSibling("checkpoints/checkpoint-1"), LEARNING_RATE);
        // the preference set rank 0 checkpointed is the one-process run's
        assertThat(Files.readString(stepDdp.resolveSibling("checkpoints/checkpoint-1/preference_pairs.json")))
                .isEqualTo(Files.readString(stepCkpt.resolve("preference_pairs.json")));

        Path[] configs = {runFile("madpo-alone", "algorithm: madpo", 0.2, args.formatted("none"), "")};
        String out1 = trainAlone(configs[0]);
        List<Map<String, Object>> m1 = metrics(configs[0].getParent());
        String pairs1 = Files.readString(configs[0].getParent().resolve("checkpoints/checkpoint-1/preference_pairs.json"));

        // the agents split: each process samples, scores (policy and frozen reference) and steps its agent
        Path agents = runFile("madpo-agents", "algorithm: madpo", 0.2, args.formatted("ddp") + "  ddp_split: agents\n", "");
        String out3 = trainTwoRanks(agents);
        assertThat(out3).contains("2 processes (gloo), ddp_split agents");
        assertSameMetrics(m1, metrics(agents.getParent()), 0);
        assertSameAgents(configs[0], agents, 0);
        assertThat(lastLine(out3, "eval reward after training")).isEqualTo(lastLine(out1, "eval reward after training"));
        Path ckpt = agents.getParent().resolve("checkpoints/checkpoint-1");
        assertThat(Files.readString(ckpt.resolve("preference_pairs.json"))).isEqualTo(pairs1);
        assertThat(ckpt.resolve("agent_1")).isDirectory();
        // its checkpoint (agent 1 written by rank 1, the pairs by rank 0) resumes on both processes to the
        // uninterrupted run's weights (the outputs go to resume-*: the run's directory held its config)
        Path resumed = runFile("madpo-agents-resumed", "algorithm: madpo", 0.2,
                args.formatted("ddp") + "  ddp_split: agents\n", "");
        trainTwoRanks(resumed, "--resume", ckpt.toString());
        for (String agent : List.of("agent_0", "agent_1")) {
            assertSameWeights(weights(configs[0].getParent().resolve(agent)),
                    weights(resumed.getParent().resolve("resume-checkpoint-1/" + agent)), 0);
        }
    }

    @Test
    @Tag("multiprocess")
    void marlhfOnTwoProcessesTrainsWhatOneProcessTrains() throws Exception {
        String args = """
                  rl_algorithm: magrpo
                  preference_num_candidates: 4
                  pair_selection: all
                  preference_pairs_per_sample: null
                  reward_model_device: cpu
                  reward_learning_rate: 1.0e-3
                  reward_num_train_epochs: 1
                  reward_train_batch_size: 4
                  num_train_epochs: 2
                  num_generations: 4
                  rollout_buffer_size: 2
                  max_new_tokens: 8
                  temperature: 1.0
                  top_p: 1.0
                  agent_learning_rate: 3.0e-3
                  eval_interval: 4
                  eval_num_samples: 2
                  logging_steps: 1
                  seed: 7
                  parallel_training: %s
                """;
        // the data split: the same reward model (trained whole on every process), then one RL step
        Path stepAlone = oneStep(runFile("marlhf-step-alone", "algorithm: marlhf", 0.2, args.formatted("none"), ""));
        Path stepDdp = oneStep(runFile("marlhf-step-ddp", "algorithm: marlhf", 0.2, args.formatted("ddp"), ""));
        trainAlone(stepAlone);
        String stepOut2 = trainTwoRanks(stepDdp);
        assertThat(stepOut2).contains("2 processes (gloo)").containsOnlyOnce("Reward model: ");
        assertThat(metrics(stepAlone.getParent())).anyMatch(e -> e.containsKey("reward_model/accuracy"));
        assertSameStepMetrics(metrics(stepAlone.getParent()), metrics(stepDdp.getParent()));
        assertSameWeights(weights(stepAlone.resolveSibling("reward_model")), weights(stepDdp.resolveSibling("reward_model")), 0);
        assertSameStep(stepAlone.resolveSibling("checkpoints/checkpoint-1"), stepDdp.resolveSibling("checkpoints/checkpoint-1"),
                LEARNING_RATE);

        Path alone = runFile("marlhf-alone", "algorithm: marlhf", 0.2, args.formatted("none"), "");
        String out1 = trainAlone(alone);
        List<Map<String, Object>> m1 = metrics(alone.getParent());

        // the agents split: the preference set and the RL stage split by agent, the reward model on both
        Path agents = runFile("marlhf-agents", "algorithm: marlhf", 0.2, args.formatted("ddp") + "  ddp_split: agents\n",
                "");
        String out3 = trainTwoRanks(agents);
        assertThat(out3).contains("2 processes (gloo), ddp_split agents").containsOnlyOnce("Reward model: ");
        assertSameMetrics(m1, metrics(agents.getParent()), 0);
        for (String dir : List.of("agent_0", "agent_1", "reward_model")) {
            assertSameWeights(weights(alone.getParent().resolve(dir)), weights(agents.getParent().resolve(dir)), 0);
        }
        assertThat(lastLine(out3, "eval reward after training")).isEqualTo(lastLine(out1, "eval reward after training"));
    }

    /**
     * The iterative trainers on two processes: MADPOIter against the history comparator, MARLHFIter
     * against the live policy with the previous reward model scoring. Data split: the comparator (the
     * policies rank 0 saved) and the task reward run on rank 0 only, which writes the replay shards;
     * iteration 1's step is one process's (two items, one step per iteration), both iterations' shards
     * are the same, the metrics the same to rounding. Agents split: each process generates its agent's
     * comparator candidates: bit for bit.
     */
    @Test
    @Tag("multiprocess")
    void iterativeTrainersOnTwoProcessesTrainWhatOneProcessTrains() throws Exception {
        String shared = """
                  num_iterations: 2
                  preference_num_candidates: 4
                  comparator_num_candidates: 4
                  pair_selection: all
                  preference_pairs_per_sample: null
                  preference_replay_mode: all_history
                  max_new_tokens: 8
                  temperature: 1.0
                  top_p: 1.0
                  agent_learning_rate: 3.0e-3
                  eval_interval: 0
                  eval_num_samples: 2
                  logging_steps: 1
                  seed: 7
                  parallel_training: %s
                """;
        String madpo = shared + """
                  num_train_epochs: 1
                  comparator_policy: history
                  comparator_history_k: 1
                  dpo_beta: 0.5
                  train_batch_size: 8
                """;
        String marlhf = shared + """
                  log_reward_distribution: true
                  rl_algorithm: magrpo
                  comparator_policy: current
                  preference_scoring_reward: reward_model
                  reward_model_device: cpu
                  reward_learning_rate: 1.0e-3
                  reward_num_train_epochs: 1
                  reward_train_batch_size: 4
                  num_train_epochs: 1
                  num_generations: 4
                  rollout_buffer_size: 2
                """;
        for (String[] run : List.of(new String[] {"madpo_iter", madpo}, new String[] {"marlhf_iter", marlhf})) {
            // MADPOIter scores with a command that logs its calls
            boolean counted = run[0].equals("madpo_iter");
            String top = counted ? COUNTED_REWARD : "";
            Path alone = runFile(run[0] + "-alone", "algorithm: " + run[0], 0.8, run[1].formatted("none"), top);
            Path ddp = runFile(run[0] + "-ddp", "algorithm: " + run[0], 0.8, run[1].formatted("ddp"), top);
            Path agents = runFile(run[0] + "-agents", "algorithm: " + run[0], 0.8,
                    run[1].formatted("ddp") + "  ddp_split: agents\n", top);
            if (counted) {
                withCountedReward(alone);
                withCountedReward(ddp);
                withCountedReward(agents);
            }
            trainAlone(alone);
            String out2 = trainTwoRanks(ddp);
            assertThat(out2).contains("2 processes (gloo), ddp_split data").containsOnlyOnce("Iteration 2/2");
            List<Map<String, Object>> m1 = metrics(alone.getParent());
            assertThat(m1).anyMatch(e -> e.containsKey("iter/comparator_reward_mean"));
            // iteration 1: 2 items, one step from the same weights; iteration 2 samples from weights that
            // step's rounding may have moved enough to flip a token: its wiring only (shards, calls)
            assertSameStepMetrics(m1, metrics(ddp.getParent()));
            assertSameStep(alone.resolveSibling("checkpoints/checkpoint-1"), ddp.resolveSibling("checkpoints/checkpoint-1"),
                    LEARNING_RATE);
            assertThat(Files.readString(ddp.getParent().resolve("preference_replay/iteration_0001.json"))).as(run[0])
                    .isEqualTo(Files.readString(alone.getParent().resolve("preference_replay/iteration_0001.json")));
            assertThat(ddp.getParent().resolve("preference_replay/iteration_0002.json")).exists();
            if (!counted) { // the reward histograms (rank 0's, of the range rank 0's reward states)
                Path histogram = Path.of("reward_distributions/iteration_0001.json");
                assertThat(Files.readString(ddp.getParent().resolve(histogram)))
                        .isEqualTo(Files.readString(alone.getParent().resolve(histogram)));
                assertThat(ddp.getParent().resolve("reward_distributions/iteration_0002.json")).exists();
            }
            if (counted) {
                assertThat(calls(alone, "rewards.log")).isPositive();
                assertThat(calls(ddp, "rewards.log")).as("the task reward runs on rank 0 only, once per candidate")
                        .isEqualTo(calls(alone, "rewards.log"));
            }

            // the agents split: each process samples its agent's current and comparator candidates (the
            // history comparator: the policy it saved), tokenises its part of the replayed pairs, steps its agent
            String out3 = trainTwoRanks(agents);
            assertThat(out3).contains("2 processes (gloo), ddp_split agents").containsOnlyOnce("Iteration 2/2");
            assertSameMetrics(m1, metrics(agents.getParent()), 0);
            assertSameAgents(alone, agents, 0);
            for (String shard : List.of("iteration_0001.json", "iteration_0002.json")) {
                assertThat(Files.readString(agents.getParent().resolve("preference_replay/" + shard)))
                        .isEqualTo(Files.readString(alone.getParent().resolve("preference_replay/" + shard)));
            }
            if (counted) {
                assertThat(calls(agents, "rewards.log")).isEqualTo(calls(alone, "rewards.log"));
            }
        }
    }

    @Test
    @Tag("multiprocess")
    void aRunResumesFromACheckpointWrittenByTwoProcesses() throws Exception {
        Path ddp = twoItems(config("ddp", "ddp", "data")); // 2 epochs of one step
        trainTwoRanks(ddp);
        Path ckpt = ddp.getParent().resolve("checkpoints/checkpoint-1");
        // on two processes again: the uninterrupted run, bit for bit
        Path again = twoItems(config("again", "ddp", "data"));
        String resumedOut = trainTwoRanks(again, "--resume", ckpt.toString());
        assertThat(resumedOut).doesNotContain("eval reward before training").contains("eval reward after training");
        assertSameAgents(ddp, again, 0);
        List<Map<String, Object>> all = metrics(ddp.getParent());
        List<Map<String, Object>> tail = metrics(again.getParent());
        assertThat(tail).isNotEmpty().hasSizeLessThan(all.size());
        assertSameMetrics(all.subList(all.size() - tail.size(), all.size()), tail, 0);
        // on one process: the second step from the same restored state (weights, moments, seeds)
        Path one = twoItems(config("one", "none", "data"));
        trainAlone(one, "--resume", ckpt.toString());
        assertSameStepMetrics(tail, metrics(one.getParent()));
        assertSameStep(ddp.resolveSibling("checkpoints/checkpoint-2"), one.resolveSibling("checkpoints/checkpoint-2"),
                LEARNING_RATE);

        // the agents split: each process wrote its agents' parts into one checkpoint, which resumes exactly
        Path agents = config("agents", "ddp", "agents");
        trainTwoRanks(agents);
        Path agentsCkpt = agents.getParent().resolve("checkpoints/checkpoint-1");
        assertThat(agentsCkpt.resolve("agent_0")).isDirectory();
        assertThat(agentsCkpt.resolve("agent_1")).isDirectory();
        assertThat(agentsCkpt.resolve("optimizer_0.safetensors")).exists();
        assertThat(agentsCkpt.resolve("optimizer_1.safetensors")).exists();
        Path resumed = config("agents-resumed", "ddp", "agents");
        trainTwoRanks(resumed, "--resume", agentsCkpt.toString());
        assertSameAgents(agents, resumed, 0);
    }

    @Test
    @Tag("multiprocess")
    void aRankKilledMidRunFailsTheOtherAtOnceNamingIt() throws Exception {
        Path ddp = config("killed", "ddp", "data");
        try (RankProcesses ranks = RankProcesses.start(ddp.getParent(), 2, comlrl.cli.Main.class, "train", ddp.toString(),
                "--set", "num_train_epochs=50")) {
            awaitTraining(ranks, ddp);
            long killed = System.nanoTime();
            ranks.process(1).destroyForcibly();
            assertThat(ranks.process(0).waitFor(30, TimeUnit.SECONDS)).as("rank 0 is still running").isTrue();
            double seconds = (System.nanoTime() - killed) / 1e9;
            assertThat(seconds).as("rank 0 failed within the 60 s timeout").isLessThan(60);
            assertThat(ranks.process(0).exitValue()).isNotZero();
            assertThat(ranks.output(0)).contains("rank 1 is not responding");
            // the last checkpoint written before the kill is whole
            Path latest = ddp.getParent().resolve("checkpoints");
            if (Files.exists(latest.resolve("latest"))) {
                String name = Files.readString(latest.resolve("latest"), StandardCharsets.UTF_8).trim();
                assertThat(latest.resolve(name).resolve("metadata.json")).exists();
            }
        }
    }

    @Test
    @Tag("multiprocess")
    void underLaunchAKilledRankStopsTheRunWithANonZeroCodeAndNoProcessLeft() throws Exception {
        Path ddp = config("launched", "ddp", "data");
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        Launcher launcher = new Launcher(Launcher.javaCommand("comlrl.cli.Main"),
                new java.io.PrintStream(out, true, StandardCharsets.UTF_8), new java.io.PrintStream(err, true, StandardCharsets.UTF_8));
        java.util.concurrent.CompletableFuture<Integer> code = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return launcher.run(Launcher.Spec.local(2), List.of("train", ddp.toString(), "--set", "num_train_epochs=50"));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Path metricsFile = ddp.resolveSibling("metrics.jsonl");
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (!(Files.exists(metricsFile) && Files.readString(metricsFile).lines().count() >= 3)) {
            assertThat(System.nanoTime()).as("training did not start:%n%s", err).isLessThan(deadline);
            assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isNotDone();
            Thread.sleep(100);
        }
        List<ProcessHandle> ranks = trainers();
        assertThat(ranks).hasSize(2);
        ranks.get(1).destroyForcibly();
        int exit = code.get(60, TimeUnit.SECONDS);
        assertThat(exit).isNotZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).containsPattern("launch: rank [01] (exited|was killed|.*signal)")
                .contains("stopping the other ranks");
        long gone = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!trainers().isEmpty() && System.nanoTime() < gone) {
            Thread.sleep(100);
        }
        assertThat(trainers()).as("no training process is left").isEmpty();
    }

    /** The live JVMs this test JVM started (the launcher's ranks; their command lines are too long to read back). */
    private static List<ProcessHandle> trainers() {
        return ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
                .filter(h -> h.info().command().map(c -> c.endsWith("/java")).orElse(false)).toList();
    }

    @Test
    @Tag("multiprocess")
    void aRankThatHangsMidRunFailsTheOtherAfterTheTimeoutNamingIt() throws Exception {
        Path ddp = config("hung", "ddp", "agents");
        Files.writeString(ddp, Files.readString(ddp).replace("timeout_s: 60", "timeout_s: 4"));
        try (RankProcesses ranks = RankProcesses.start(ddp.getParent(), 2, comlrl.cli.Main.class, "train", ddp.toString(),
                "--set", "num_train_epochs=50")) {
            awaitTraining(ranks, ddp);
            Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(ranks.process(1).pid())).start();
            assertThat(stop.waitFor()).isZero();
            long frozen = System.nanoTime();
            assertThat(ranks.process(0).waitFor(60, TimeUnit.SECONDS)).as("rank 0 is still waiting").isTrue();
            double seconds = (System.nanoTime() - frozen) / 1e9;
            assertThat(ranks.process(0).exitValue()).isNotZero();
            assertThat(ranks.output(0)).contains("(timeout 4.0 s)").contains("rank 1 is not responding");
            assertThat(seconds).as("failed after the 4 s timeout, not long after").isBetween(2.0, 4.0 + 10);
        }
    }

    /** Waits until rank 0 of the run of {@code config} has logged 3 events (fails after 3 minutes or if it exits). */
    static void awaitTraining(RankProcesses ranks, Path config) throws Exception {
        Path metricsFile = config.resolveSibling("metrics.jsonl");
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (!(Files.exists(metricsFile) && Files.readString(metricsFile).lines().count() >= 3)) {
            assertThat(System.nanoTime()).as("training did not start:%n%s", ranks.output(0)).isLessThan(deadline);
            assertThat(ranks.process(0).isAlive()).as(ranks.output(0)).isTrue();
            Thread.sleep(100);
        }
    }

    private static String lastLine(String out, String prefix) {
        return out.lines().filter(l -> l.startsWith(prefix)).reduce((a, b) -> b).orElseThrow(() ->
                new AssertionError("no line '" + prefix + "' in:\n" + out));
    }
}
