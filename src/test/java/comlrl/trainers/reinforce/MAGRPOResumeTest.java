package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.bytes;
import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.lengthDifference;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.checkpoint.Checkpoints;
import comlrl.trainers.TinyAgents;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoint/resume: two epochs straight equal one epoch, a checkpoint, and a new trainer resumed
 * from it (same metrics, bit-identical weights); checkpoints are written atomically.
 */
class MAGRPOResumeTest {
    @TempDir
    static Path models;
    static Path agentA;
    static Path agentB;

    @BeforeAll
    static void writeAgents() {
        agentA = TinyAgents.create(models.resolve("a"), 3);
        agentB = TinyAgents.create(models.resolve("b"), 4);
    }

    /** A run over 3 items with evaluation, buffers spanning items and a log gate that skips entries. */
    private static MAGRPOTrainer trainer(int epochs) {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numTrainEpochs(epochs).rolloutBufferSize(2)
                .loggingSteps(7).evalInterval(2).build(); // drains at env_step 4, 6 | 10, 12: logged 4, 12
        return MAGRPOTrainer.builder().agents(List.of(agentA.toString(), agentB.toString()))
                .rewardFunc(lengthDifference()).trainDataset(tasks(3)).evalDataset(tasks(2)).args(config)
                .verbose(false).build();
    }

    @Test
    void resumingFromACheckpointContinuesTheRunExactly(@TempDir Path checkpoints) throws IOException {
        List<Map<String, Double>> straight;
        List<Map<String, byte[]>> straightWeights = new ArrayList<>();
        long straightSteps;
        try (MAGRPOTrainer t = trainer(2)) {
            t.train();
            straight = List.copyOf(t.logHistory());
            t.agents().forEach(a -> straightWeights.add(bytes(a)));
            straightSteps = t.envStep();
        }

        List<Map<String, Double>> first;
        try (MAGRPOTrainer t = trainer(1)) {
            t.train(checkpoints, 1);
            first = List.copyOf(t.logHistory());
        }
        Path checkpoint1 = checkpoints.resolve("checkpoint-1");
        assertThat(checkpoint1.resolve("agent_0/config.json")).isRegularFile();
        assertThat(checkpoint1.resolve("agent_1/config.json")).isRegularFile();
        assertThat(checkpoint1.resolve("optimizer_0.safetensors")).isRegularFile();
        assertThat(checkpoint1.resolve("optimizer_1.safetensors")).isRegularFile();
        assertThat(Files.readString(checkpoints.resolve("latest")).trim()).isEqualTo("checkpoint-1");
        Map<String, Object> meta = Checkpoints.readMetadata(checkpoint1);
        assertThat(meta).containsEntry("algorithm", "MAGRPO").containsEntry("epochs_completed", 1)
                .containsEntry("env_step", 6);

        List<Map<String, Double>> resumed;
        List<Map<String, byte[]>> resumedWeights = new ArrayList<>();
        try (MAGRPOTrainer t = trainer(2)) {
            t.train(checkpoints, 1, checkpoint1);
            resumed = List.copyOf(t.logHistory());
            t.agents().forEach(a -> resumedWeights.add(bytes(a)));
            assertThat(t.envStep()).isEqualTo(straightSteps).isEqualTo(12);
        }
        assertThat(Files.readString(checkpoints.resolve("latest")).trim()).isEqualTo("checkpoint-2");

        // the straight run's events = the first epoch's, then the resumed run's
        assertThat(first).isNotEmpty();
        assertThat(resumed).isNotEmpty();
        assertThat(straight).hasSize(first.size() + resumed.size());
        assertThat(straight.subList(0, first.size())).isEqualTo(first);
        assertThat(straight.subList(first.size(), straight.size())).isEqualTo(resumed);
        // the log gate resumed too: the drain at env_step 10 is within logging_steps of 4, the last logged
        assertThat(resumed.stream().filter(m -> m.containsKey("turn_1/policy_loss")).map(m -> m.get("env_step")))
                .containsExactly(12.0);

        for (int i = 0; i < 2; i++) {
            Map<String, byte[]> expected = straightWeights.get(i);
            Map<String, byte[]> actual = resumedWeights.get(i);
            assertThat(actual.keySet()).isEqualTo(expected.keySet());
            for (String name : expected.keySet()) {
                assertThat(actual.get(name)).as("agent %d %s", i, name).isEqualTo(expected.get(name));
            }
        }
    }

    @Test
    void aFailingCheckpointWriterLeavesThePreviousCheckpointAndLatestIntact(@TempDir Path root) throws IOException {
        Checkpoints.write(root, "checkpoint-1", dir -> write(dir.resolve("weights.bin"), "one"));
        assertThat(Files.readString(root.resolve("latest")).trim()).isEqualTo("checkpoint-1");

        // a new checkpoint whose writer fails half-way
        assertThatThrownBy(() -> Checkpoints.write(root, "checkpoint-2", dir -> {
            write(dir.resolve("weights.bin"), "two");
            throw new IllegalStateException("disk full");
        })).hasMessageContaining("disk full");
        assertThat(root.resolve("checkpoint-2")).doesNotExist();
        assertThat(Files.readString(root.resolve("latest")).trim()).isEqualTo("checkpoint-1");
        assertThat(Files.readString(root.resolve("checkpoint-1/weights.bin"))).isEqualTo("one");

        // rewriting the same checkpoint with a failing writer keeps the old content
        assertThatThrownBy(() -> Checkpoints.write(root, "checkpoint-1", dir -> {
            write(dir.resolve("weights.bin"), "partial");
            throw new IllegalStateException("killed");
        })).hasMessageContaining("killed");
        assertThat(Files.readString(root.resolve("checkpoint-1/weights.bin"))).isEqualTo("one");
        assertThat(Checkpoints.latest(root)).contains(root.resolve("checkpoint-1"));
    }

    private static void write(Path file, String content) {
        try {
            Files.writeString(file, content);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
