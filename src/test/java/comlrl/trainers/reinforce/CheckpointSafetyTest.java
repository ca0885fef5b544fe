package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.bytes;
import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.lengthDifference;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.checkpoint.Checkpoints;
import comlrl.model.io.TestDisks;
import comlrl.reward.RewardFunction;
import comlrl.trainers.TinyAgents;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoints and resume lose nothing and mix nothing up: a resumed run's metrics.jsonl continues the
 * stopped one without repeated steps, checkpoints of another algorithm or model shape are refused,
 * malformed metadata gets a clear message, save_total_limit keeps the newest checkpoints, a full disk
 * leaves the previous checkpoint intact, and no output may land inside a model directory.
 */
class CheckpointSafetyTest {
    @TempDir
    static Path models;
    static Path agentA;
    static Path agentB;

    @BeforeAll
    static void writeAgents() {
        agentA = TinyAgents.create(models.resolve("a"), 3);
        agentB = TinyAgents.create(models.resolve("b"), 4);
    }

    private static MAGRPOConfig config(int epochs) {
        return fast(MAGRPOConfig.builder()).numTrainEpochs(epochs).rolloutBufferSize(1).evalInterval(2).build();
    }

    private static MAGRPOTrainer.Builder trainer(MAGRPOConfig config, RewardFunction reward, Path out) {
        return MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString())).rewardFunc(reward)
                .trainDataset(tasks(3)).evalDataset(tasks(1)).args(config).outputDir(out).verbose(false);
    }

    /** {@code tmp/ck} holding {@code checkpoint-1} of a one-epoch run. */
    private static Path oneEpochCheckpoints(Path tmp) {
        Path checkpoints = tmp.resolve("ck");
        try (MAGRPOTrainer t = trainer(config(1), lengthDifference(), null).build()) {
            t.train(checkpoints, 1);
        }
        return checkpoints;
    }

    /** lengthDifference, failing at call {@code failAt} (0-based) as a crash would. */
    private static RewardFunction crashingAt(int failAt) {
        AtomicInteger calls = new AtomicInteger();
        RewardFunction inner = lengthDifference();
        return (completions, items) -> {
            if (calls.getAndIncrement() == failAt) {
                throw new IllegalStateException("simulated crash");
            }
            return inner.score(completions, items);
        };
    }

    @Test
    void aResumedRunsLogContinuesTheStoppedOneWithoutRepeats(@TempDir Path tmp) throws Exception {
        Path straight = tmp.resolve("straight");
        try (MAGRPOTrainer t = trainer(config(2), lengthDifference(), straight).build()) {
            t.train();
        }
        // the same run stopped in the middle of epoch 2 (rewards are 2 per item; eval 1 per evaluation):
        // epoch 1 = 3 items + 2 evaluations = 8 calls; 4 more calls into epoch 2, then a crash
        Path stopped = tmp.resolve("stopped");
        Path checkpoints = tmp.resolve("ck");
        try (MAGRPOTrainer t = trainer(config(2), crashingAt(12), stopped).build()) {
            assertThatThrownBy(() -> t.train(checkpoints, 1)).hasMessageContaining("simulated crash");
        }
        List<String> beforeResume = Files.readAllLines(stopped.resolve("metrics.jsonl"));
        try (MAGRPOTrainer t = trainer(config(2), lengthDifference(), stopped).build()) {
            t.train(checkpoints, 1, checkpoints.resolve("checkpoint-1"));
        }
        List<String> resumed = Files.readAllLines(stopped.resolve("metrics.jsonl"));
        List<String> expected = Files.readAllLines(straight.resolve("metrics.jsonl"));
        assertThat(beforeResume.size()).as("the stopped run had logged part of epoch 2").isGreaterThan(
                Integer.parseInt(String.valueOf(Checkpoints.readMetadata(checkpoints.resolve("checkpoint-1"))
                        .get("metrics_lines"))));
        assertThat(resumed).isEqualTo(expected);
    }

    @Test
    void resumingRestoresTheWeightsBeforeAnythingElseAndSaysWhenNothingIsLeft(@TempDir Path tmp) {
        Path checkpoints = tmp.resolve("ck");
        Map<String, byte[]> trained;
        try (MAGRPOTrainer t = trainer(config(1), lengthDifference(), null).build()) {
            t.train(checkpoints, 1);
            trained = bytes(t.agents().get(1));
        }
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        try (MAGRPOTrainer t = trainer(config(1), lengthDifference(), null)
                .console(new PrintStream(console, true, StandardCharsets.UTF_8)).build()) {
            t.resumeFrom(checkpoints.resolve("checkpoint-1"));
            Map<String, byte[]> restored = bytes(t.agents().get(1));
            trained.forEach((name, b) -> assertThat(restored.get(name)).as("%s: an evaluation now scores the trained "
                    + "weights", name).isEqualTo(b));
            long steps = t.envStep();
            t.train(checkpoints, 1);
            assertThat(t.envStep()).isEqualTo(steps);
        }
        assertThat(console.toString(StandardCharsets.UTF_8)).contains("Nothing to train: 1 of num_train_epochs=1");
    }

    @Test
    void checkpointsOfAnotherAlgorithmOrModelShapeAreRefused(@TempDir Path tmp) throws Exception {
        Path checkpoints = oneEpochCheckpoints(tmp);
        Path ck = checkpoints.resolve("checkpoint-1");
        try (ReinforceTrainer t = MAGRPOTrainer.builderFor(ReinforceAlgorithm.MARLOO)
                .agents(List.of(agentA.toString(), agentB.toString())).rewardFunc(lengthDifference())
                .trainDataset(tasks(3)).args(fast(MARLOOConfig.builder()).build()).verbose(false).build()) {
            assertThatThrownBy(() -> t.resumeFrom(ck)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is a checkpoint of MAGRPO, not MARLOO");
        }
        Path other = TinyAgents.create(tmp.resolve("bigger"), 5);
        Path config = other.resolve("config.json");
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.databind.node.ObjectNode c = (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(
                config.toFile());
        c.put("intermediate_size", 96);
        Files.writeString(config, c.toString());
        java.nio.file.Files.delete(other.resolve("model.safetensors"));
        try (comlrl.generation.CausalLm lm = new comlrl.generation.CausalLm(other.toString(), comlrl.model.DecoderLm.random(
                comlrl.model.ModelConfig.load(other), comlrl.tensor.DType.F32, comlrl.tensor.Device.CPU, 5),
                comlrl.tokenizer.Tokenizer.load(other), comlrl.generation.GenerationConfig.load(other))) {
            lm.save(other);
        }
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(List.of(agentA.toString(), other.toString()))
                .rewardFunc(lengthDifference()).trainDataset(tasks(3)).args(config(1)).verbose(false).build()) {
            assertThatThrownBy(() -> t.resumeFrom(ck)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("agent 1 of another model shape").hasMessageContaining("intermediate_size=64");
        }
    }

    @Test
    void malformedMetadataGetsAClearMessage(@TempDir Path tmp) throws Exception {
        Path ck = Files.createDirectories(tmp.resolve("checkpoint-1"));
        try (MAGRPOTrainer t = trainer(config(1), lengthDifference(), null).build()) {
            Files.writeString(ck.resolve("metadata.json"), "[1, 2]");
            assertThatThrownBy(() -> t.resumeFrom(ck)).hasMessageContaining("Malformed checkpoint metadata")
                    .hasMessageContaining("must hold a JSON object");
            Files.writeString(ck.resolve("metadata.json"), "{\"algorithm\": \"MAGRPO\", \"num_agents\": 2, "
                    + "\"epochs_completed\": \"one\", \"env_step\": 4, \"seed_counter\": 9}");
            assertThatThrownBy(() -> t.resumeFrom(ck)).hasMessageContaining("'epochs_completed' must be a non-negative "
                    + "integer, got one (String)");
            Files.writeString(ck.resolve("metadata.json"), "{\"algorithm\": \"MAGRPO\"");
            assertThatThrownBy(() -> t.resumeFrom(ck)).hasMessageContaining("Malformed checkpoint metadata");
        }
    }

    @Test
    void saveTotalLimitKeepsTheNewestCheckpoints(@TempDir Path tmp) throws Exception {
        Path checkpoints = tmp.resolve("ck");
        MAGRPOConfig config = config(3).toBuilder().saveTotalLimit(2).build();
        try (MAGRPOTrainer t = trainer(config, lengthDifference(), null).build()) {
            t.train(checkpoints, 1);
        }
        try (Stream<Path> s = Files.list(checkpoints)) {
            assertThat(s.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactly("checkpoint-2", "checkpoint-3", "latest");
        }
        assertThat(Checkpoints.latest(checkpoints).orElseThrow().getFileName().toString()).isEqualTo("checkpoint-3");
    }

    @Test
    void aFullDiskWhileCheckpointingLeavesThePreviousCheckpointWhole(@TempDir Path tmp) throws Exception {
        Path checkpoints = oneEpochCheckpoints(tmp);
        Path first = checkpoints.resolve("checkpoint-1");
        try (MAGRPOTrainer t = trainer(config(2), lengthDifference(), null).build();
                TestDisks.Restore full = TestDisks.fullAfter(10_000)) {
            assertThatThrownBy(() -> t.train(checkpoints, 1, first)).hasMessageContaining("No space left on device");
        }
        try (Stream<Path> s = Files.list(checkpoints)) {
            assertThat(s.map(p -> p.getFileName().toString()).sorted().toList())
                    .as("no half-written checkpoint or temporary directory").containsExactly("checkpoint-1", "latest");
        }
        assertThat(Checkpoints.latest(checkpoints).orElseThrow()).isEqualTo(first);
        try (MAGRPOTrainer t = trainer(config(2), lengthDifference(), null).build()) {
            t.train(checkpoints, 1, first); // the previous checkpoint still resumes
        }
    }

    @Test
    void aLatestPointerThatIsNotACheckpointNameInItsDirectoryIsRefusedNamingTheFile(@TempDir Path tmp) throws Exception {
        Path checkpoints = oneEpochCheckpoints(tmp);
        Path latest = checkpoints.resolve(Checkpoints.LATEST);
        Files.createDirectories(tmp.resolve("elsewhere/checkpoint-1"));
        for (String pointer : List.of("../elsewhere/checkpoint-1", tmp.resolve("elsewhere/checkpoint-1").toString(),
                "checkpoint-1/..", ".", "", "metadata.json")) {
            Files.writeString(latest, pointer + "\n");
            assertThatThrownBy(() -> Checkpoints.latest(checkpoints)).as(pointer).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(latest.toString()).hasMessageContaining("'" + pointer + "'");
        }
        Files.writeString(latest, "checkpoint-7\n");
        assertThatThrownBy(() -> Checkpoints.latest(checkpoints)).hasMessageContaining(latest.toString())
                .hasMessageContaining("checkpoint-7").hasMessageContaining("missing");
        Files.writeString(latest, "checkpoint-1\n");
        assertThat(Checkpoints.latest(checkpoints)).contains(checkpoints.resolve("checkpoint-1"));
    }

    @Test
    void whatAWriterKilledMidCheckpointLeftIsCleanedUpByTheNextOne(@TempDir Path tmp) throws Exception {
        Path checkpoints = oneEpochCheckpoints(tmp);
        Path first = checkpoints.resolve("checkpoint-1");
        // a run resumed from checkpoint-1 and killed (kill -9) while writing checkpoint-2: its half-written
        // directory (with a half-written weight file of its own) and its half-written latest pointer
        long dead = TestDisks.deadPid();
        Path half = Files.createDirectories(checkpoints.resolve(".checkpoint-2.tmp-" + dead + "/agent_0"));
        Files.write(half.resolve(".model.safetensors.k1.tmp"), new byte[1000]);
        Files.writeString(checkpoints.resolve(".latest.tmp-" + dead), "check");
        assertThat(Checkpoints.latest(checkpoints)).as("the pointer still names the whole checkpoint").contains(first);
        try (MAGRPOTrainer t = trainer(config(2), lengthDifference(), null).build()) {
            t.train(checkpoints, 1, first);
        }
        try (Stream<Path> s = Files.list(checkpoints)) {
            assertThat(s.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactly("checkpoint-1", "checkpoint-2", "latest");
        }
        // killed between its two renames while rewriting checkpoint-2: the old one renamed away, no new one
        Files.move(checkpoints.resolve("checkpoint-2"), checkpoints.resolve(".checkpoint-2.old-" + dead));
        assertThatThrownBy(() -> Checkpoints.latest(checkpoints)).hasMessageContaining("missing");
        assertThat(Checkpoints.cleanUp(checkpoints)).extracting(c -> c.path().getFileName().toString())
                .containsExactly("checkpoint-2");
        Map<String, Object> meta = Checkpoints.readMetadata(Checkpoints.latest(checkpoints).orElseThrow());
        assertThat(meta.get("epochs_completed")).isEqualTo(2);
    }

    @Test
    void aReplacementThatCannotBeRenamedIntoPlaceLeavesThePreviousCheckpoint(@TempDir Path root) throws Exception {
        Checkpoints.write(root, "checkpoint-1", dir -> writeText(dir.resolve("weights.bin"), "one"));
        // the new content vanishes before its rename (as on a file system that fails the rename):
        // the previous checkpoint-1 has been renamed away by then and must come back
        assertThatThrownBy(() -> Checkpoints.write(root, "checkpoint-1", dir -> {
            writeText(dir.resolve("weights.bin"), "two");
            comlrl.model.io.ModelDirs.deleteRecursively(dir);
        })).isInstanceOf(java.io.UncheckedIOException.class)
                .hasMessageContaining("Cannot write checkpoint " + root.resolve("checkpoint-1"));
        try (Stream<Path> s = Files.list(root)) {
            assertThat(s.map(p -> p.getFileName().toString()).sorted().toList()).containsExactly("checkpoint-1", "latest");
        }
        assertThat(Files.readString(root.resolve("checkpoint-1/weights.bin"))).isEqualTo("one");
    }

    private static void writeText(Path file, String text) {
        try {
            Files.writeString(file, text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void noOutputMayLandInsideAModelDirectory(@TempDir Path tmp) throws Exception {
        String configBefore = Files.readString(agentA.resolve("config.json"));
        assertThatThrownBy(() -> trainer(config(1), lengthDifference(), agentA).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("output_dir " + agentA)
                .hasMessageContaining("agent 0's model");
        assertThatThrownBy(() -> trainer(config(1), lengthDifference(), agentB.resolve("run")).build())
                .hasMessageContaining("is inside the model directory");
        try (MAGRPOTrainer t = trainer(config(1), lengthDifference(), null).build()) {
            assertThatThrownBy(() -> t.saveModel(agentA)).hasMessageContaining("the save directory");
            assertThatThrownBy(() -> t.train(agentB.resolve("checkpoints"), 1))
                    .hasMessageContaining("checkpoint directory");
            t.saveModel(tmp.resolve("saved")); // anywhere else is fine
        }
        assertThat(Files.readString(agentA.resolve("config.json"))).isEqualTo(configBefore);
        assertThat(Files.exists(agentA.resolve("metrics.jsonl"))).isFalse();
    }
}
