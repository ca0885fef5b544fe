package comlrl.learning;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.data.BuiltinTasks;
import comlrl.data.Dataset;
import comlrl.reward.LengthRatioReward;
import comlrl.trainers.preference.MARLHFConfig;
import comlrl.trainers.preference.MARLHFTrainer;
import comlrl.utils.Formatter;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * MARLHF raises the length-ratio evaluation reward (always the task reward) on the built-in tiny
 * model with the settings of examples/marlhf.yaml: a joint reward model learned from the 32 pairs with
 * the largest reward gaps among the initial policy's 32 candidates per item, then 8 epochs of MAGRPO or
 * IAC against it (about 30 s each on 2 cores). The tiny random backbone makes a weak reward model, so
 * the policies over-optimize it with longer training (MAGRPO with 24 or 40 epochs against a reward
 * model of every pair of 16 candidates ended lower than with 8 on seeds 1 and 2); see the README. The
 * pairs with the largest gaps make a cleaner one than every pair of 16 candidates: with MAGRPO, seeds
 * 42, 1, 2, 3, 4 gained +0.40, +0.57, +0.34, +0.51, +0.24 (every pair of 16: +0.24, +0.04, +0.32 on
 * the first three), and with IAC seeds 42, 1, 2 +0.25, +0.24, +0.07. One run's gain depends much on
 * its seed, so the test asks the mean over these five seeds to rise by more than 0.25 with MAGRPO and
 * 0.1 with IAC. Tagged slow (about 3 min on 2 cores per back end).
 */
@Tag("slow")
class MARLHFLearningTest {
    static MARLHFConfig config(String rl, long seed) {
        MARLHFConfig.Builder b = MARLHFConfig.builder().numAgents(2).rlAlgorithm(rl).preferenceNumCandidates(32)
                .pairSelection("reward_gap").preferencePairsPerSample(32).rewardModelDevice("cpu").rewardLearningRate(1e-3)
                .rewardNumTrainEpochs(1).rewardTrainBatchSize(8).numTrainEpochs(8).numGenerations(8).maxNewTokens(24)
                .temperature(1.0).topP(1.0).topK(null).agentLearningRate(3e-3).evalInterval(0).evalNumSamples(2)
                .loggingSteps(64).seed(seed);
        return (rl.equals("iac") ? b.rolloutBufferSize(16).trainBatchSize(16).criticLearningRate(1e-3)
                : b.rolloutBufferSize(2)).build();
    }

    @Test
    void marlhfWithMagrpoRaisesTheLengthRatioEvaluationReward() {
        raisesTheEvaluationReward("magrpo", 0.25);
    }

    /**
     * The IAC back end: tagged {@code extra} too (CI leaves it out; run it with
     * {@code -Dgroups=extra -Dtest.excludedGroups=none}). What it combines is tested elsewhere: the reward
     * model's stage is the MAGRPO variant's, IAC learns the task ({@link ActorCriticLearningTest}), and
     * MARLHF hands its reward model and mapped config to an IAC back end ({@code MARLHFTrainerTest}).
     */
    @Test
    @Tag("extra")
    void marlhfWithIacRaisesTheLengthRatioEvaluationReward() {
        raisesTheEvaluationReward("iac", 0.1);
    }

    private static void raisesTheEvaluationReward(String rl, double gain) {
        double[] mean = EvalRewards.overSeeds(seed -> run(rl, seed), 42, 1, 2, 3, 4);
        double before = mean[0];
        double after = mean[1];
        assertThat(after).as("%s: mean eval reward after training (before: %.3f)", rl, before)
                .isGreaterThan(before + gain);
    }

    /** The evaluation reward before and after one run with {@code seed}. */
    private static double[] run(String rl, long seed) {
        Dataset.Split split = BuiltinTasks.load("builtin:length-ratio").trainTestSplit(0.2, 42);
        Formatter brief = item -> "Write a short response to this task:\n" + item.getString("prompt");
        Formatter detailed = item -> "Write a detailed response to this task:\n" + item.getString("prompt");
        try (MARLHFTrainer trainer = MARLHFTrainer.builder().agentModel("builtin:tiny").numAgents(2)
                .formatters(List.of(brief, detailed)).rewardFunc(new LengthRatioReward())
                .trainDataset(split.train()).evalDataset(split.test()).args(config(rl, seed)).verbose(false).build()) {
            double before = EvalRewards.mean(trainer, 8);
            trainer.train();
            double after = EvalRewards.mean(trainer, 8);
            assertThat(trainer.logHistory()).anyMatch(e -> e.containsKey("reward_model/accuracy"));
            return new double[] {before, after};
        }
    }
}
