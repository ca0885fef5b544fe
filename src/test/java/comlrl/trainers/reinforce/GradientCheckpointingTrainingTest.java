package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.lengthDifference;
import static comlrl.trainers.reinforce.ReinforceFixtures.snapshot;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GradientCheckpointingTrainingTest {
    private static Map<String, float[]> trainOnce(Path a, Path b, boolean checkpointing) {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).gradientCheckpointing(checkpointing).build();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(List.of(a.toString(), b.toString()))
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(config).verbose(false).build()) {
            t.train();
            return snapshot(t.agents().get(1));
        }
    }

    @Test
    void trainingWithGradientCheckpointingGivesTheSameWeights(@TempDir Path tmp) {
        Path a = TinyAgents.create(tmp.resolve("a"), 1);
        Path b = TinyAgents.create(tmp.resolve("b"), 2);
        Map<String, float[]> plain = trainOnce(a, b, false);
        Map<String, float[]> recomputed = trainOnce(a, b, true);
        plain.forEach((name, w) -> {
            float[] v = recomputed.get(name);
            for (int j = 0; j < w.length; j++) {
                assertThat((double) v[j]).as("%s[%d]", name, j).isCloseTo(w[j], org.assertj.core.data.Offset.offset(1e-5));
            }
        });
    }
}
