package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.bytes;
import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.checkpoint.Checkpoints;
import comlrl.model.io.Safetensors;
import comlrl.reward.RewardFunction;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NaN never reaches the weights silently: a non-finite reward, return or gradient stops training
 * before the optimizer step with a message naming the item, the agent and the value, and leaves the
 * weights and the last checkpoint as they were; {@code skip_nonfinite_samples} drops such samples.
 */
class NonFiniteTrainingTest {
    @TempDir
    static Path models;
    static Path agent;

    @BeforeAll
    static void writeAgent() {
        agent = TinyAgents.create(models.resolve("a"), 5);
    }

    /** Rewards 1.0, 2.0, ... except the {@code bad}-th call (0-based), which returns {@code value}. */
    private static RewardFunction rewardsWith(int bad, double value) {
        AtomicInteger calls = new AtomicInteger();
        return (completions, items) -> {
            int call = calls.getAndIncrement();
            return List.of(call == bad ? value : (double) (call % 4));
        };
    }

    private static MAGRPOTrainer trainer(RewardFunction reward, MAGRPOConfig config) {
        return MAGRPOTrainer.builder().agentModel(agent.toString()).numAgents(1).rewardFunc(reward)
                .trainDataset(tasks(2)).args(config).verbose(false).build();
    }

    @Test
    void aNaNRewardStopsTrainingBeforeAnyStepNamingTheItem() {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numGenerations(4).rolloutBufferSize(1).build();
        try (MAGRPOTrainer t = trainer(rewardsWith(5, Double.NaN), config)) {
            Map<String, byte[]> start = bytes(t.agents().get(0));
            List<Map<String, byte[]>> afterFirst = new ArrayList<>();
            assertThatThrownBy(t::train).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("The reward function returned NaN")
                    .hasMessageContaining("train item 1 of epoch 1")
                    .hasMessageContaining("agent 0 \"")
                    .hasMessageContaining("skip_nonfinite_samples");
            // item 0 was trained (one step); item 1 failed while rewarding, before its step
            assertThat(t.logHistory()).hasSize(1);
            afterFirst.add(bytes(t.agents().get(0)));
            assertThat(afterFirst.get(0)).isNotEqualTo(start);
        }
    }

    @Test
    void anOverflowingGradientIsNeverApplied() {
        // without normalisation A = R − mean R ~ 1e38: the loss or its gradient overflows float32
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numGenerations(4).rolloutBufferSize(1)
                .advantageNormalization(false).build();
        try (MAGRPOTrainer t = trainer(rewardsWith(1, 3e38), config)) {
            Map<String, byte[]> start = bytes(t.agents().get(0));
            assertThatThrownBy(t::train).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Training stopped")
                    .hasMessageContaining("agent 0")
                    .hasMessageContaining("train item 0 of epoch 1");
            Map<String, byte[]> after = bytes(t.agents().get(0));
            after.forEach((name, b) -> assertThat(b).as(name).isEqualTo(start.get(name)));
        }
    }

    @Test
    void skippingLeavesSuchSamplesOutAndCountsThem() {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numGenerations(4).rolloutBufferSize(1)
                .skipNonfiniteSamples(true).build();
        try (MAGRPOTrainer t = trainer(rewardsWith(5, Double.POSITIVE_INFINITY), config)) {
            t.train();
            assertThat(t.logHistory()).hasSize(2);
            assertThat(t.logHistory().get(0)).doesNotContainKey("turn_1/nonfinite_samples_skipped");
            assertThat(t.logHistory().get(1)).containsEntry("agent_0/turn_1/nonfinite_samples_skipped", 1.0)
                    .doesNotContainKey("turn_1/policy_loss");
            try (Scope s = Scope.open()) {
                t.agents().get(0).model().parameters()
                        .forEach(p -> assertThat(p.isFinite().allTrue()).as("finite weights").isTrue());
            }
        }
    }

    @Test
    void theLastCheckpointStaysAndCorruptOptimizerStateIsRefused(@TempDir Path dir) {
        // epoch 1 completes and is checkpointed; the first reward of epoch 2 (call 8) is NaN
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numGenerations(4).rolloutBufferSize(1).numTrainEpochs(2)
                .build();
        Path checkpoints = dir.resolve("ck");
        try (MAGRPOTrainer t = trainer(rewardsWith(8, Double.NaN), config)) {
            assertThatThrownBy(() -> t.train(checkpoints, 1)).hasMessageContaining("train item 0 of epoch 2");
        }
        Path last = Checkpoints.latest(checkpoints).orElseThrow();
        assertThat(last.getFileName().toString()).isEqualTo("checkpoint-1");
        // the checkpoint resumes; with a NaN planted in its optimizer state it is refused
        try (MAGRPOTrainer t = trainer(rewardsWith(-1, 0), config.toBuilder().numTrainEpochs(1).build())) {
            t.train(checkpoints, 1, last);
        }
        Path optimizer = last.resolve("optimizer_0.safetensors");
        Map<String, Tensor> state = Safetensors.load(optimizer);
        Map<String, Tensor> corrupt = new LinkedHashMap<>(state);
        try (Scope s = Scope.open()) {
            Tensor m = state.get("exp_avg.0").cloneTensor();
            m.fill_(Double.NaN);
            corrupt.put("exp_avg.0", m);
            Safetensors.save(corrupt, optimizer);
        } finally {
            state.values().forEach(Tensor::close);
        }
        try (MAGRPOTrainer t = trainer(rewardsWith(-1, 0), config)) {
            assertThatThrownBy(() -> t.train(checkpoints, 1, last)).hasMessageContaining("exp_avg.0")
                    .hasMessageContaining("NaN");
        }
    }
}
