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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code parallel_training: ddp} through the CLI, two JVMs on loopback (Gloo): the data split and the
 * agents split train what one process trains (same metrics, same weights within float tolerance);
 * a run resumes from a checkpoint written by two processes; a rank killed mid-run makes the other
 * fail at once, naming it.
 */
class DdpTrainingTest {
    /**
     * The weights of a 2-process data-split run match one process's to this: the gradient sums are
     * added in another order, and AdamW divides by √v, so a rounding difference of 1e-7 in a small
     * gradient moves a weight by up to ~1e-5 per step (16 steps here; the updates themselves are ~1e-3).
     * The key biases are held to {@link #KEY_BIAS_TOLERANCE}: their true gradient is zero (softmax
     * does not change when every score of a query shifts alike), so AdamW turns either run's rounding
     * noise into steps of its own.
     */
    static final double WEIGHT_TOLERANCE = 1e-4;
    static final double KEY_BIAS_TOLERANCE = 1e-3;

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
            assertThat(worst).as("largest difference in %s", k)
                    .isLessThanOrEqualTo(k.endsWith("k_proj.bias") ? Math.max(tol, KEY_BIAS_TOLERANCE * Math.signum(tol)) : tol);
        });
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

    @Test
    void theDataSplitOnTwoProcessesTrainsWhatOneProcessTrains() throws Exception {
        assertTwoProcessesTrainAsOne("ddp", "data", 1e-5, WEIGHT_TOLERANCE);
        assertTrained(tmp.resolve("alone"));
        // only rank 0 wrote the run's files: one metrics file, one checkpoint set
        assertThat(tmp.resolve("ddp/checkpoints/checkpoint-2/metadata.json")).exists();
    }

    @Test
    void theAgentsSplitOnTwoProcessesTrainsWhatOneProcessTrainsBitForBit() throws Exception {
        assertTwoProcessesTrainAsOne("agents", "agents", 1e-9, 0);
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
    void twoTurnsReferenceKlAndLoraTrainAsOneProcessWithRewardAndTransitionCalledOnce() throws Exception {
        String klArgs = TWO_TURNS.replace("num_turns: 2", "num_turns: 2\n  reference_kl_enabled: true");
        Path alone = withTransition(config("alone", "none", "data", 0.2, klArgs, TRANSITION));
        Path data = withTransition(config("data", "ddp", "data", 0.2, klArgs, TRANSITION));
        trainAlone(alone);
        trainTwoRanks(data);
        List<Map<String, Object>> m1 = metrics(alone.getParent());
        assertThat(m1).anyMatch(e -> e.containsKey("turn_2/reference_kl_mean"));
        assertSameMetrics(m1, metrics(data.getParent()), 1e-5);
        assertSameAgents(alone, data, WEIGHT_TOLERANCE);
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
     * IAC with separate critics, IAC with a value head on each actor (one loss), MAAC's shared critic:
     * on two processes, the data split trains what one process trains (within float tolerance), the
     * agents split bit for bit (each actor and its critic or head on its owner, MAAC's critic on both);
     * an agents-split checkpoint (each process's parts, MAAC's critic from rank 0) resumes exactly.
     */
    @Test
    void iacAndMaacOnTwoProcessesTrainWhatOneProcessTrains() throws Exception {
        for (String variant : List.of("iac", "iac-heads", "maac")) {
            String algorithm = variant.startsWith("iac") ? "iac" : "maac";
            String extra = variant.equals("iac-heads") ? "  use_separate_critic: false" : "";
            Path alone = actorCriticConfig(variant + "-alone", algorithm, "none", extra);
            Path ddp = actorCriticConfig(variant + "-ddp", algorithm, "ddp", extra);
            Path agents = actorCriticConfig(variant + "-agents", algorithm, "ddp", extra + "\n  ddp_split: agents");
            String out1 = trainAlone(alone);
            String out2 = trainTwoRanks(ddp);
            assertThat(out2).contains("2 processes (gloo), ddp_split data");
            List<Map<String, Object>> m1 = metrics(alone.getParent());
            assertThat(m1).anyMatch(e -> e.containsKey("turn_1/value_loss") || e.containsKey("value_loss")
                    || e.keySet().stream().anyMatch(k -> k.contains("value_loss")));
            assertSameMetrics(m1, metrics(ddp.getParent()), 1e-5);
            Map<String, float[]> w1 = weights(alone.getParent());
            assertThat(w1.keySet()).anyMatch(k -> k.contains("critic") || k.contains("value_head")); // critics, heads
            assertSameWeights(w1, savedWeights(ddp, w1), WEIGHT_TOLERANCE);
            assertThat(lastLine(out2, "eval reward after training")).isEqualTo(lastLine(out1, "eval reward after training"));

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
    void madpoOnTwoProcessesTrainsWhatOneProcessTrains() throws Exception {
        String args = MADPO_ARGS;

        Path[] configs = {runFile("madpo-alone", "algorithm: madpo", 0.2, args.formatted("none"), ""),
            runFile("madpo-ddp", "algorithm: madpo", 0.2, args.formatted("ddp"), "")};
        String out1 = trainAlone(configs[0]);
        String out2 = trainTwoRanks(configs[1]);
        assertThat(out2).contains("2 processes (gloo), ddp_split data");
        List<Map<String, Object>> m1 = metrics(configs[0].getParent());
        assertThat(m1).anyMatch(e -> e.containsKey("dpo_loss"));
        assertSameMetrics(m1, metrics(configs[1].getParent()), 1e-5);
        assertSameAgents(configs[0], configs[1], WEIGHT_TOLERANCE);
        assertThat(lastLine(out2, "eval reward after training")).isEqualTo(lastLine(out1, "eval reward after training"));
        // the preference set rank 0 checkpointed is the one-process run's
        String pairs1 = Files.readString(configs[0].getParent().resolve("checkpoints/checkpoint-1/preference_pairs.json"));
        assertThat(Files.readString(configs[1].getParent().resolve("checkpoints/checkpoint-1/preference_pairs.json")))
                .isEqualTo(pairs1);

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
        // its checkpoint (agent 1 written by rank 1, the pairs by rank 0) resumes on both processes as the
        // one-process checkpoint resumes in one process (a resumed MADPO run evaluates first, so not as the
        // uninterrupted run)
        Path resumedAlone = runFile("madpo-alone-resumed", "algorithm: madpo", 0.2, args.formatted("none"), "");
        trainAlone(resumedAlone, "--resume", configs[0].getParent().resolve("checkpoints/checkpoint-1").toString());
        Path resumed = runFile("madpo-agents-resumed", "algorithm: madpo", 0.2,
                args.formatted("ddp") + "  ddp_split: agents\n", "");
        trainTwoRanks(resumed, "--resume", ckpt.toString());
        for (String agent : List.of("agent_0", "agent_1")) { // each run's directory held its config: resume-*
            assertSameWeights(weights(resumedAlone.getParent().resolve("resume-checkpoint-1/" + agent)),
                    weights(resumed.getParent().resolve("resume-checkpoint-1/" + agent)), 0);
        }
    }

    @Test
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
        Path alone = runFile("marlhf-alone", "algorithm: marlhf", 0.2, args.formatted("none"), "");
        Path ddp = runFile("marlhf-ddp", "algorithm: marlhf", 0.2, args.formatted("ddp"), "");
        String out1 = trainAlone(alone);
        String out2 = trainTwoRanks(ddp);
        assertThat(out2).contains("2 processes (gloo)").containsOnlyOnce("Reward model: ");
        List<Map<String, Object>> m1 = metrics(alone.getParent());
        assertThat(m1).anyMatch(e -> e.containsKey("reward_model/accuracy"));
        assertSameMetrics(m1, metrics(ddp.getParent()), 1e-5);
        for (String dir : List.of("agent_0", "agent_1", "reward_model")) {
            assertSameWeights(weights(alone.getParent().resolve(dir)), weights(ddp.getParent().resolve(dir)),
                    WEIGHT_TOLERANCE);
        }
        assertThat(lastLine(out2, "eval reward after training")).isEqualTo(lastLine(out1, "eval reward after training"));

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
     * same metrics, weights and shards as one process to rounding. Agents split: each process
     * generates its agent's comparator candidates: bit for bit.
     */
    @Test
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
                  num_train_epochs: 2
                  comparator_policy: history
                  comparator_history_k: 1
                  dpo_beta: 0.5
                  train_batch_size: 4
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
            Path alone = runFile(run[0] + "-alone", "algorithm: " + run[0], 0.2, run[1].formatted("none"), top);
            Path ddp = runFile(run[0] + "-ddp", "algorithm: " + run[0], 0.2, run[1].formatted("ddp"), top);
            Path agents = runFile(run[0] + "-agents", "algorithm: " + run[0], 0.2,
                    run[1].formatted("ddp") + "  ddp_split: agents\n", top);
            if (counted) {
                withCountedReward(alone);
                withCountedReward(ddp);
                withCountedReward(agents);
            }
            String out1 = trainAlone(alone);
            String out2 = trainTwoRanks(ddp);
            assertThat(out2).contains("2 processes (gloo), ddp_split data").containsOnlyOnce("Iteration 2/2");
            List<Map<String, Object>> m1 = metrics(alone.getParent());
            assertThat(m1).anyMatch(e -> e.containsKey("iter/comparator_reward_mean"));
            // 36 DPO steps at a high learning rate: the rounding of the gradient sums (added in another
            // order) grows to a few 1e-4 of a DPO loss near 0 (a wrong sum moves it by 5%)
            assertSameMetrics(m1, metrics(ddp.getParent()), 1e-3);
            // within one AdamW step (lr 3e-3; 3e-4 measured here)
            assertSameAgents(alone, ddp, 3e-3);
            for (String shard : List.of("iteration_0001.json", "iteration_0002.json")) {
                assertThat(Files.readString(ddp.getParent().resolve("preference_replay/" + shard))).as(run[0] + " " + shard)
                        .isEqualTo(Files.readString(alone.getParent().resolve("preference_replay/" + shard)));
            }
            assertThat(lastLine(out2, "eval reward after training")).isEqualTo(lastLine(out1, "eval reward after training"));
            if (!counted) { // the reward histograms (rank 0's, of the range rank 0's reward states)
                Path histogram = Path.of("reward_distributions/iteration_0002.json");
                assertThat(Files.readString(ddp.getParent().resolve(histogram)))
                        .isEqualTo(Files.readString(alone.getParent().resolve(histogram)));
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
    void aRunResumesFromACheckpointWrittenByTwoProcesses() throws Exception {
        Path ddp = config("ddp", "ddp", "data");
        trainTwoRanks(ddp);
        Path ckpt = ddp.getParent().resolve("checkpoints/checkpoint-1");
        // on two processes again, and on one: both end where the uninterrupted two-process run ended
        Path again = config("again", "ddp", "data");
        String resumedOut = trainTwoRanks(again, "--resume", ckpt.toString());
        assertThat(resumedOut).doesNotContain("eval reward before training").contains("eval reward after training");
        Path one = config("one", "none", "data");
        trainAlone(one, "--resume", ckpt.toString());
        for (String agent : List.of("agent_0", "agent_1")) {
            Map<String, float[]> full = weights(ddp.getParent().resolve(agent));
            assertSameWeights(full, weights(again.getParent().resolve(agent)), WEIGHT_TOLERANCE);
            assertSameWeights(full, weights(one.getParent().resolve(agent)), WEIGHT_TOLERANCE);
        }
        List<Map<String, Object>> all = metrics(ddp.getParent());
        List<Map<String, Object>> tail = metrics(again.getParent());
        assertThat(tail).isNotEmpty().hasSizeLessThan(all.size());
        assertSameMetrics(all.subList(all.size() - tail.size(), all.size()), tail, 1e-5);

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
