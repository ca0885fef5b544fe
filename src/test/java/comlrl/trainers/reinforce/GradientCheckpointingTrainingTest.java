package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.lengthDifference;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Layer-wise recomputation gives the training run the same gradients as the plain backward, bit for
 * bit: both runs sample the same rollout (generation does not depend on the setting) and the
 * recomputation repeats the same float operations (see {@code CheckpointedBackwardTest}). The first
 * update is compared, before any optimizer step could amplify a difference.
 */
class GradientCheckpointingTrainingTest {
    private static MAGRPOUpdateTest.GradientRecorder trainOnce(Path a, Path b, boolean checkpointing) {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).gradientCheckpointing(checkpointing).build();
        MAGRPOUpdateTest.GradientRecorder recorder = new MAGRPOUpdateTest.GradientRecorder();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(List.of(a.toString(), b.toString()))
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(config).verbose(false)
                .gradientObserver((agent, model) -> {
                    if (agent == 1) {
                        recorder.accept(agent, model);
                    }
                }).build()) {
            t.train();
        }
        return recorder;
    }

    @Test
    void trainingWithGradientCheckpointingGivesTheSameGradients(@TempDir Path tmp) {
        Path a = TinyAgents.create(tmp.resolve("a"), 1);
        Path b = TinyAgents.create(tmp.resolve("b"), 2);
        MAGRPOUpdateTest.GradientRecorder plain = trainOnce(a, b, false);
        MAGRPOUpdateTest.GradientRecorder recomputed = trainOnce(a, b, true);
        assertThat(plain.steps).hasSize(1).hasSameSizeAs(recomputed.steps);
        Map<String, float[]> want = plain.steps.get(0);
        assertThat(recomputed.steps.get(0).keySet()).isEqualTo(want.keySet());
        want.forEach((name, g) -> assertThat(recomputed.steps.get(0).get(name)).as(name).containsExactly(g));
        assertThat(want.values().stream().anyMatch(g -> {
            for (float x : g) {
                if (x != 0) {
                    return true;
                }
            }
            return false;
        })).as("the update has a gradient").isTrue();
    }
}
