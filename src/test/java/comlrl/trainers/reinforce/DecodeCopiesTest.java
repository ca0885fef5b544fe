package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;

import comlrl.trainers.DecodeCopyProbe;
import java.nio.file.Path;
import java.util.Collections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The full agents' packed decoding copies in a MAGRPO run ({@link DecodeCopyProbe}): every rollout makes
 * one per agent, and none is left while any agent is updated (an agent updated later would otherwise
 * hold its stale copy through the earlier agents' updates).
 */
class DecodeCopiesTest {
    @Test
    void noAgentHoldsItsPackedDecodingCopyWhileTheAgentsAreUpdated(@TempDir Path models) {
        try (DecodeCopyProbe probe = DecodeCopyProbe.widePair(models)) {
            MAGRPOConfig config = fast(MAGRPOConfig.builder()).numAgents(2).maxNewTokens(24).rolloutBufferSize(1).build();
            try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agents(probe.team()).args(config).trainDataset(tasks(2))
                    .rewardFunc((completions, items) -> {
                        probe.atReward();
                        return Collections.nCopies(completions.get(0).size(), (double) completions.get(0).get(0).length());
                    }).gradientObserver((agent, model) -> probe.atStep()).verbose(false).build()) {
                trainer.train();
            }
            probe.assertReleased();
        }
    }
}
