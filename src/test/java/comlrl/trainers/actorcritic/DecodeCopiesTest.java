package comlrl.trainers.actorcritic;

import comlrl.trainers.DecodeCopyProbe;
import comlrl.trainers.TestRewards;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The full actors' packed decoding copies in an IAC run ({@link DecodeCopyProbe}): every rollout makes one
 * per actor, and none is left while any actor or critic steps.
 */
class DecodeCopiesTest {
    @Test
    void noActorHoldsItsPackedDecodingCopyWhileTheAgentsAreUpdated(@TempDir Path models) {
        try (DecodeCopyProbe probe = DecodeCopyProbe.widePair(models)) {
            IACConfig config = IACConfig.builder().numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(2)
                    .maxNewTokens(24).temperature(1.0).topP(1.0).topK(0).rolloutBufferSize(2).trainBatchSize(2)
                    .evalInterval(0).seed(3).build();
            String critic = TinyAgents.create(models.resolve("critic"), 5).toString();
            try (IACTrainer t = IACTrainer.builder().agents(probe.team()).criticModel(critic)
                    .rewardFunc((completions, items) -> {
                        probe.atReward();
                        return TestRewards.lengthDifference().score(completions, items);
                    }).trainDataset(ActorCriticTrainerTest.tasks(2)).args(config).verbose(false)
                    .observer((agent, which, parameters) -> probe.atStep()).build()) {
                t.train();
            }
            probe.assertReleased();
        }
    }
}
