package comlrl.learning;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.data.BuiltinTasks;
import comlrl.data.Dataset;
import comlrl.reward.LengthRatioReward;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.utils.Formatter;
import comlrl.utils.ParallelTraining;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The main job learns: two agents on the built-in tiny model, trained on the seed documents'
 * length-ratio task with the settings of examples/length-ratio.yaml, raise their evaluation reward
 * from about 0.4 to above 0.8 (about half a minute on 2 cores). Tagged slow: run it with
 * {@code mvn -B test -Dgroups=slow -Dtest.excludedGroups=none}.
 */
@Tag("slow")
class LengthRatioLearningTest {

    @Test
    void evaluationRewardRisesOnTheLengthRatioTask() {
        Dataset.Split split = BuiltinTasks.load("builtin:length-ratio").trainTestSplit(0.2, 42);
        Formatter brief = item -> "Write a short response to this task:\n" + item.getString("prompt");
        Formatter detailed = item -> "Write a detailed response to this task:\n" + item.getString("prompt");
        MAGRPOConfig config = MAGRPOConfig.builder().numTurns(1).numTrainEpochs(40).numGenerations(8)
                .maxNewTokens(24).temperature(1.0).topP(1.0).topK(null).agentLearningRate(3e-3)
                .rolloutBufferSize(2).evalInterval(4).evalNumSamples(2).loggingSteps(64).seed(42)
                .parallelTraining(ParallelTraining.MP).agentDevices(List.of("cpu", "cpu")).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel("builtin:tiny").numAgents(2)
                .formatters(List.of(brief, detailed)).rewardFunc(new LengthRatioReward())
                .trainDataset(split.train()).evalDataset(split.test()).args(config).verbose(false).build()) {
            double before = EvalRewards.mean(trainer, 8);
            trainer.train();
            double after = EvalRewards.mean(trainer, 8);
            assertThat(before).isLessThan(0.6);
            assertThat(after).as("eval reward after training (before: %.3f)", before).isGreaterThan(0.8);
        }
    }
}
