package comlrl.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.checkpoint.Checkpoints;
import comlrl.data.Dataset;
import comlrl.reward.RewardFunction;
import comlrl.trainers.TestRewards;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The W&amp;B sink's protocol, failure handling and non-blocking logging, against a stand-in bridge
 * ({@link WandbStandIn}); the real SDK is checked by {@link WandbPythonTest}.
 */
class WandbSinkTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    static Path models;
    static Path agent;

    @BeforeAll
    static void writeAgent() {
        agent = TinyAgents.create(models.resolve("agent"), 5);
    }

    static MAGRPOTrainer.Builder builder(Path out, List<String> bridge, RewardFunction reward, PrintStream console) {
        MAGRPOConfig config = MAGRPOConfig.builder().numTurns(1).numTrainEpochs(2).numGenerations(2).maxNewTokens(6)
                .temperature(1.0).topP(1.0).topK(0).loggingSteps(1).evalInterval(1).evalNumSamples(1)
                .agentLearningRate(1e-3).rolloutBufferSize(2).seed(7).build();
        return MAGRPOTrainer.builder().agents(List.of(agent.toString(), agent.toString())).rewardFunc(reward)
                .trainDataset(Dataset.fromRows(List.of(Map.of("prompt", "Say hello."), Map.of("prompt", "Describe the sea."))))
                .evalDataset(Dataset.fromRows(List.of(Map.of("prompt", "Say hello."))))
                .args(config).outputDir(out).verbose(false).console(console)
                .wandbConfig(Map.of("project", "comlrl-tests", "name", "stand-in", "tags", List.of("t1"),
                        "config_sections", Map.of("dataset", Map.of("name", "length-ratio")), "finish_timeout_s", 20))
                .wandbBridge(bridge);
    }

    static List<JsonNode> received(Path file) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            out.add(JSON.readTree(line));
        }
        return out;
    }

    @Test
    void everyEventReachesTheRunAtItsEnvStepAndTheCheckpointKeepsTheRunIdentity(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("received.jsonl");
        try (MAGRPOTrainer t = builder(tmp.resolve("run"), WandbStandIn.command(file, "ok"), TestRewards.lengthDifference(),
                System.err).build()) {
            t.train(tmp.resolve("checkpoints"), 1);
            t.saveModel(tmp.resolve("saved"));
        }
        List<JsonNode> got = received(file);
        JsonNode init = got.get(0);
        assertThat(init.get("op").asText()).isEqualTo("init");
        JsonNode kwargs = init.get("kwargs");
        assertThat(kwargs.get("project").asText()).isEqualTo("comlrl-tests");
        assertThat(kwargs.get("name").asText()).isEqualTo("stand-in");
        assertThat(kwargs.get("tags").get(0).asText()).isEqualTo("t1");
        assertThat(kwargs.get("config").get("algorithm").asText()).isEqualTo("MAGRPO");
        assertThat(kwargs.get("config").get("num_generations").asInt()).isEqualTo(2);
        assertThat(kwargs.get("config").get("dataset_name").asText()).isEqualTo("length-ratio");
        assertThat(kwargs.has("finish_timeout_s")).as("our own keys are not wandb.init's").isFalse();
        // every metrics.jsonl event, in order, with step = env_step and env_step among the values; the events
        // of one env_step in one message (W&B keeps one row per step); no key is logged twice at a step here
        List<JsonNode> events = new ArrayList<>();
        for (String line : Files.readAllLines(tmp.resolve("run/metrics.jsonl"))) {
            events.add(JSON.readTree(line));
        }
        List<com.fasterxml.jackson.databind.node.ObjectNode> steps = new ArrayList<>();
        for (JsonNode event : events) {
            if (steps.isEmpty() || steps.get(steps.size() - 1).get("env_step").asLong() != event.get("env_step").asLong()) {
                steps.add(JSON.createObjectNode());
            }
            com.fasterxml.jackson.databind.node.ObjectNode row = steps.get(steps.size() - 1);
            event.fields().forEachRemaining(f -> {
                assertThat(!row.has(f.getKey()) || f.getKey().equals("env_step")).as(f.getKey()).isTrue();
                row.set(f.getKey(), f.getValue());
            });
        }
        assertThat(steps.size()).as("several events share an env_step").isLessThan(events.size());
        List<JsonNode> logs = got.stream().filter(m -> m.get("op").asText().equals("log")).toList();
        assertThat(logs).hasSameSizeAs(steps);
        for (int i = 0; i < steps.size(); i++) {
            assertThat(logs.get(i).get("step").asLong()).isEqualTo(steps.get(i).get("env_step").asLong());
            assertThat(logs.get(i).get("data")).as("step row %d", i).isEqualTo(steps.get(i));
        }
        assertThat(got).anyMatch(m -> m.get("op").asText().equals("summary")
                && m.get("data").get("final_model_saved").asBoolean());
        assertThat(got.get(got.size() - 1).toString()).contains("finish").contains("\"exit_code\":0");
        Map<String, Object> meta = Checkpoints.readMetadata(tmp.resolve("checkpoints/checkpoint-2"));
        @SuppressWarnings("unchecked")
        Map<String, Object> identity = (Map<String, Object>) meta.get("wandb");
        assertThat(identity).containsEntry("id", "abc123").containsEntry("project", "p").containsEntry("name", "n")
                .containsEntry("entity", null);
    }

    @Test
    void aBridgeThatDiesMidRunIsReportedOnceAndTrainingGoesOn(@TempDir Path tmp) throws Exception {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(console, true, StandardCharsets.UTF_8);
        try (MAGRPOTrainer t = builder(tmp.resolve("run"), WandbStandIn.command(tmp.resolve("r.jsonl"), "die-after=2"),
                TestRewards.lengthDifference(), out).build()) {
            t.train();
        }
        String text = console.toString(StandardCharsets.UTF_8);
        // reported exactly once: while training ("... training goes on without W&B") when the reader sees the
        // exit first, or at the end ("... exited before the run finished") when training ends first; the order
        // depends on the scheduler, the single report does not
        assertThat(text.split("the bridge exited", -1)).as(text).hasSize(2);
        assertThat(text).contains("with status 9");
        assertThat(Files.readAllLines(tmp.resolve("run/metrics.jsonl")).size()).isGreaterThan(2); // local sinks went on
    }

    @Test
    void aFailedTrainingEndsTheRunWithExitCodeOne(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("r.jsonl");
        RewardFunction broken = (completions, items) -> {
            throw new IllegalStateException("reward service down");
        };
        try (MAGRPOTrainer t = builder(tmp.resolve("run"), WandbStandIn.command(file, "ok"), broken, System.err).build()) {
            assertThatThrownBy(t::train).hasMessageContaining("reward service down");
        }
        List<JsonNode> got = received(file);
        assertThat(got.get(got.size() - 1).toString()).contains("finish").contains("\"exit_code\":1");
    }

    @Test
    @Timeout(60)
    void loggingNeverBlocksOnABridgeThatStopsReadingAndCloseGivesUpAfterTheTimeout(@TempDir Path tmp) {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        WandbSink sink = new WandbSink(WandbStandIn.command(tmp.resolve("r.jsonl"), "hang"), Map.of("project", "p"),
                Duration.ofSeconds(30), Duration.ofSeconds(1), new PrintStream(console, true, StandardCharsets.UTF_8));
        Map<String, Double> metrics = new java.util.LinkedHashMap<>();
        metrics.put("turn_1/reward_mean", Math.PI);
        for (int i = 0; i < WandbSink.QUEUE_LIMIT + 20_000; i++) { // more than a pipe holds, then more than the queue
            sink.log(i, metrics);
        }
        sink.close();
        String text = console.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("not keeping up").contains("did not finish within 1 s");
    }

    @Test
    @Timeout(120)
    void aBridgeThatStopsReadingIsGivenUpWhileTrainingAndNotWaitedOnAtClose(@TempDir Path tmp) throws Exception {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        Duration finish = Duration.ofSeconds(300); // the default: close must not wait for it
        Duration stall = Duration.ofSeconds(1);
        WandbSink sink = new WandbSink(WandbStandIn.command(tmp.resolve("r.jsonl"), "hang"), Map.of("project", "p"),
                Duration.ofSeconds(30), finish, stall, new PrintStream(console, true, StandardCharsets.UTF_8));
        Map<String, Double> metrics = new java.util.LinkedHashMap<>();
        metrics.put("turn_1/reward_mean", Math.PI);
        for (int i = 0; i < 10_000; i++) { // ~1 MB of lines: more than the bridge's stdin pipe holds
            sink.log(i, metrics);
        }
        // noticed while training, without close: the writer has been blocked for the stall timeout
        while (!sink.broken()) {
            Thread.sleep(50);
        }
        String text = console.toString(StandardCharsets.UTF_8);
        assertThat(text.split("W&B bridge stopped reading for 1 s; W&B logging disabled for the rest of the run", -1))
                .as(text).hasSize(2);
        for (int i = 0; i < WandbSink.QUEUE_LIMIT + 1_000; i++) { // dropped from now on: the queue never fills
            sink.log(10_000 + i, metrics);
        }
        long start = System.nanoTime();
        sink.close();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).as("close does not wait on a bridge given up on").isLessThan(finish.dividedBy(10));
        text = console.toString(StandardCharsets.UTF_8);
        assertThat(text).doesNotContain("not keeping up").doesNotContain("did not finish within")
                .doesNotContain("training goes on without W&B"); // reported once, in the stall's own words
    }

    @Test
    @Timeout(120)
    void aBridgeThatStopsReadingTheLastEventsHoldsCloseForTheStallTimeoutOnly(@TempDir Path tmp) throws Exception {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        Duration finish = Duration.ofSeconds(300);
        WandbSink sink = new WandbSink(WandbStandIn.command(tmp.resolve("r.jsonl"), "hang"), Map.of("project", "p"),
                Duration.ofSeconds(30), finish, Duration.ofSeconds(1), new PrintStream(console, true, StandardCharsets.UTF_8));
        for (int i = 0; i < 10_000; i++) {
            sink.log(i, Map.of("turn_1/reward_mean", 0.5));
        }
        long start = System.nanoTime();
        sink.close(); // at once, before the watchdog's first look
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(finish.dividedBy(10));
        assertThat(console.toString(StandardCharsets.UTF_8)).contains("W&B bridge stopped reading for 1 s");
    }

    @Test
    void repeatedEvaluationsAtOneStepReachTheRunAsTheirMeanAndSpread(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("r.jsonl");
        try (WandbSink sink = new WandbSink(WandbStandIn.command(file, "ok"), Map.of("project", "p"),
                Duration.ofSeconds(30), Duration.ofSeconds(20), System.err)) {
            sink.log(3, Map.of("turn_1/reward_mean", 0.25));
            for (double v : new double[] {0.5, 1.0, 0.75}) { // eval_repeats: 3 after training, at env_step 8
                sink.log(8, Map.of("eval/turn_1/reward_mean", v));
            }
        }
        List<JsonNode> logs = received(file).stream().filter(m -> m.get("op").asText().equals("log")).toList();
        assertThat(logs).hasSize(2);
        assertThat(logs.get(0).get("data").get("turn_1/reward_mean").asDouble()).isEqualTo(0.25);
        assertThat(logs.get(0).get("data").has("turn_1/reward_mean_std")).isFalse();
        JsonNode eval = logs.get(1).get("data");
        assertThat(logs.get(1).get("step").asLong()).isEqualTo(8);
        // mean 0.75; squared deviations 1/16, 1/16, 0 sum to 1/8, over n − 1 = 2: std 1/4 (all exact in binary)
        assertThat(eval.get("eval/turn_1/reward_mean").asDouble()).isEqualTo(0.75);
        assertThat(eval.get("eval/turn_1/reward_mean_std").asDouble()).isEqualTo(0.25);
    }

    @Test
    void aRunThatCannotStartFailsWithW_BsMessageAndAMissingSdkNamesPipInstall(@TempDir Path tmp) throws Exception {
        assertThatThrownBy(() -> new WandbSink(WandbStandIn.command(tmp.resolve("r.jsonl"), "fail-init"),
                Map.of("project", "p"), Duration.ofSeconds(30), Duration.ofSeconds(2), System.err))
                .hasMessageContaining("project not found");
        assertThatThrownBy(() -> new WandbSink(List.of(tmp.resolve("no-such-python").toString()), Map.of(),
                Duration.ofSeconds(30), Duration.ofSeconds(2), System.err)).hasMessageContaining("pip install wandb");
        // the real bridge script with a Python that has no wandb module
        Path empty = Files.createDirectories(tmp.resolve("no-wandb"));
        List<String> bridge = new ArrayList<>(WandbSink.pythonCommand(tmp.resolve("bridge"), "python3"));
        bridge.add(1, "-S"); // no site-packages: wandb cannot be imported even where it is installed
        if (new ProcessBuilder("python3", "-c", "pass").start().waitFor() == 0) {
            assertThatThrownBy(() -> new WandbSink(bridge, Map.of(), Duration.ofSeconds(30), Duration.ofSeconds(2),
                    System.err)).hasMessageContaining("pip install wandb");
        }
        assertThat(empty).isDirectory();
    }
}
