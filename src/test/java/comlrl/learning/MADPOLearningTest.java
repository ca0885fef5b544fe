package comlrl.learning;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.data.BuiltinTasks;
import comlrl.data.Dataset;
import comlrl.reward.LengthRatioReward;
import comlrl.trainers.preference.DpoReference;
import comlrl.trainers.preference.MADPOConfig;
import comlrl.trainers.preference.MADPOTrainer;
import comlrl.utils.Formatter;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * MADPO learns the length-ratio task on the built-in tiny model with the settings of
 * examples/madpo.yaml: from pairs of the initial policy's candidates only, with standard DPO against
 * the frozen initial agents, the evaluation reward rises. On this 2-layer random model one run's
 * outcome depends on its seed (seeds 42, 1, 2 end at 0.86, 0.87 and 0.78 from about 0.37; with the
 * reference-free loss at 0.51, 0.93 and 0.82), so the test asks for the mean over three seeds to rise
 * by more than 0.35 (the mean gain measured is 0.46; 0.38 reference-free), not for one seed's run to
 * reach a level. Tagged slow (about 90 s on 2 cores).
 */
@Tag("slow")
class MADPOLearningTest {
    @Test
    void madpoLearnsTheLengthRatioTask() {
        double[] mean = EvalRewards.overSeeds(seed -> run(seed), 42, 1, 2);
        double before = mean[0];
        double after = mean[1];
        assertThat(before).isLessThan(0.6);
        assertThat(after - before).as("mean eval reward after training %.3f, before %.3f", after, before)
                .isGreaterThan(0.35);
    }

    /** The evaluation reward before and after one run with {@code seed}. */
    private static double[] run(long seed) {
        Dataset.Split split = BuiltinTasks.load("builtin:length-ratio").trainTestSplit(0.2, 42);
        Formatter brief = item -> "Write a short response to this task:\n" + item.getString("prompt");
        Formatter detailed = item -> "Write a detailed response to this task:\n" + item.getString("prompt");
        MADPOConfig config = MADPOConfig.builder().numAgents(2).numTrainEpochs(20).preferenceNumCandidates(32)
                .preferencePairsPerSample(16).dpoBeta(0.5).dpoReference(DpoReference.FROZEN_INITIAL).trainBatchSize(8).maxNewTokens(24).temperature(1.0)
                .topP(1.0).topK(null).agentLearningRate(3e-3).evalInterval(0).evalNumSamples(2).loggingSteps(64)
                .seed(seed).build();
        try (MADPOTrainer trainer = MADPOTrainer.builder().agentModel("builtin:tiny").numAgents(2)
                .formatters(List.of(brief, detailed)).rewardFunc(new LengthRatioReward())
                .trainDataset(split.train()).evalDataset(split.test()).args(config).verbose(false).build()) {
            double before = EvalRewards.mean(trainer, 8);
            trainer.train();
            return new double[] {before, EvalRewards.mean(trainer, 8)};
        }
    }
}
