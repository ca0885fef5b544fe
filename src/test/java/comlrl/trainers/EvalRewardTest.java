package comlrl.trainers;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.data.Dataset;
import comlrl.reward.RewardFunction;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.actorcritic.IACTrainer;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A separate evaluation reward: training sees rewardFunc, evaluation evalRewardFunc (MAGRPO and IAC). */
class EvalRewardTest {
    private static final RewardFunction TRAIN = (c, items) -> List.of(0.25);
    private static final RewardFunction EVAL = (c, items) -> List.of(0.75);

    private static Dataset tasks() {
        return Dataset.fromRows(List.of(Map.of("prompt", "Say hello."), Map.of("prompt", "Describe the sea.")));
    }

    @Test
    void magrpoAndIacEvaluateOnTheEvaluationReward(@TempDir Path dir) {
        Path agent = TinyAgents.create(dir.resolve("agent"), 11);
        MAGRPOConfig mc = MAGRPOConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2)
                .maxNewTokens(4).loggingSteps(1).evalInterval(0).evalNumSamples(2).seed(1).build();
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agentModel(agent.toString()).numAgents(2).rewardFunc(TRAIN)
                .evalRewardFunc(EVAL).trainDataset(tasks()).evalDataset(tasks()).args(mc).verbose(false).build()) {
            t.train();
            assertThat(t.logHistory()).anyMatch(e -> Double.valueOf(0.25).equals(e.get("turn_1/reward_mean")));
            assertThat(t.evaluate().get("eval/turn_1/reward_mean")).isEqualTo(0.75);
        }
        IACConfig ic = IACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2).maxNewTokens(4)
                .rolloutBufferSize(2).evalInterval(0).evalNumSamples(2).seed(1).build();
        try (IACTrainer t = IACTrainer.builder().agentModel(agent.toString()).criticModel(agent.toString())
                .rewardFunc(TRAIN).evalRewardFunc(EVAL).trainDataset(tasks()).evalDataset(tasks()).args(ic)
                .verbose(false).build()) {
            t.train();
            assertThat(t.logHistory()).anyMatch(e -> Double.valueOf(0.25).equals(e.get("turn_1/reward_mean")));
            assertThat(t.evaluate().get("eval/turn_1/reward_mean")).isEqualTo(0.75);
        }
    }
}
