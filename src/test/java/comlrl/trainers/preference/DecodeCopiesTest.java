package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.trainers.DecodeCopyProbe;
import comlrl.trainers.TestRewards;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The full agents' packed decoding copies in a MADPO run ({@link DecodeCopyProbe}): sampling the preference
 * candidates makes one per agent, and none is left while any agent steps.
 */
class DecodeCopiesTest {
    @Test
    void noAgentHoldsItsPackedDecodingCopyWhileTheAgentsAreUpdated(@TempDir Path models) {
        try (DecodeCopyProbe probe = DecodeCopyProbe.widePair(models)) {
            MADPOConfig config = MADPOTrainerTest.config().maxNewTokens(24).build(); // 4 candidates: 4 rows
            try (MADPOTrainer t = MADPOTrainer.builder().agents(probe.team()).rewardFunc((completions, items) -> {
                probe.atReward();
                return TestRewards.lengthDifference().score(completions, items);
            }).trainDataset(MADPOTrainerTest.tasks(2)).args(config).verbose(false)
                    .observer((agent, parameters) -> probe.atStep()).build()) {
                t.train();
                assertThat(t.numPairs()).as("pairs to train on").isPositive();
            }
            probe.assertReleased();
        }
    }

    /**
     * MADPOIter with the current policy as comparator: the comparator samples from the agents themselves
     * between the rollout and the rewards, and frees their copies as the rollout does.
     */
    @Test
    void theCurrentPolicyComparatorFreesTheAgentsCopies(@TempDir Path models) {
        try (DecodeCopyProbe probe = DecodeCopyProbe.widePair(models)) {
            MADPOIterConfig config = MADPOIterTrainerTest.config().numIterations(1).maxNewTokens(24)
                    .comparatorPolicy("current").build();
            try (MADPOIterTrainer t = MADPOIterTrainer.builder().agents(probe.team()).rewardFunc((completions, items) -> {
                probe.atReward();
                return TestRewards.lengthDifference().score(completions, items);
            }).trainDataset(MADPOTrainerTest.tasks(2)).args(config).verbose(false).build()) {
                t.train();
            }
            probe.assertReleasedAfterSampling();
        }
    }
}
