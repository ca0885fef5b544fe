package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.data.TaskItem;
import comlrl.utils.RewardProcessors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-agent rewards ({@link AgentRewardFunction}): a reward command's reply of numbers and lists, the
 * rewarder's vector per joint response (processed entry by entry, its length checked), and the team
 * calls, which refuse the vectors or average them.
 */
class AgentRewardFunctionTest {
    private static final TaskItem ITEM = TaskItem.of(Map.of("prompt", "p"));
    private static final List<String> JOINT = List.of("ab", "cde");

    @TempDir
    Path dir;

    /** A function answering {@code rows} for every call, named {@code name} in messages. */
    private static AgentRewardFunction fixed(String name, double[]... rows) {
        return new AgentRewardFunction() {
            @Override
            public List<double[]> scorePerAgent(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
                return List.of(rows);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    private static JointRewarder rewarder(RewardFunction f) {
        return new JointRewarder(f, RewardProcessors.scale(2.0), 2, 2, "MAGRPO", false);
    }

    @Test
    void aCommandMayAnswerANumberOrAListPerJointResponse() throws IOException {
        Path script = dir.resolve("r.sh");
        Files.writeString(script, "#!/usr/bin/env bash\nwhile IFS= read -r line; do echo '[[1.0, 0.25], 0.5]'; done\n");
        try (ExternalCommandReward reward = ExternalCommandReward.builder(List.of("bash", script.toString()))
                .workingDirectory(dir).timeout(Duration.ofSeconds(20)).build()) {
            List<double[]> rows = reward.scorePerAgent(List.of(List.of("a", "b"), List.of("c", "d")), List.of(ITEM));
            assertThat(rows).hasSize(2);
            assertThat(rows.get(0)).containsExactly(1.0, 0.25);
            assertThat(rows.get(1)).containsExactly(0.5);
            // the team view: the mean of a vector (0.625), a number as it is
            assertThat(reward.score(List.of(List.of("a", "b"), List.of("c", "d")), List.of(ITEM))).containsExactly(0.625, 0.5);
            // MAGRPO's rewarder: the first joint response's vector, each entry processed (scale 2)
            JointRewarder.AgentScored scored = rewarder(reward).agentRewards(ITEM, JOINT, "train item 1");
            assertThat(scored.raw()).containsExactly(1.0, 0.25);
            assertThat(scored.processed()).containsExactly(2.0, 0.5);
        }
    }

    @Test
    void aCommandReplyWithAListOfNonNumbersIsMalformed() throws IOException {
        Path script = dir.resolve("bad.sh");
        Files.writeString(script, "#!/usr/bin/env bash\nwhile IFS= read -r line; do echo '[[1.0, \"x\"]]'; done\n");
        try (ExternalCommandReward reward = ExternalCommandReward.builder(List.of("bash", script.toString()))
                .workingDirectory(dir).timeout(Duration.ofSeconds(20)).build()) {
            assertThatThrownBy(() -> reward.scorePerAgent(List.of(List.of("a"), List.of("c")), List.of(ITEM)))
                    .hasMessageContaining("element 0[1] is not a number");
        }
    }

    @Test
    void aVectorOfTheWrongLengthNamesTheAgentCountAndTheFunction() {
        assertThatThrownBy(() -> rewarder(fixed("coder-tester reward", new double[] {1, 2, 3}))
                .agentRewards(ITEM, JOINT, "train item 1"))
                .hasMessageContaining("coder-tester reward").hasMessageContaining("returned 3 values")
                .hasMessageContaining("num_agents = 2");
    }

    @Test
    void aTeamRewardOfAnAgentFunctionIsProcessedAsAPlainFunctionsIs() {
        RewardFunction plain = (completions, items) -> List.of(0.75);
        JointRewarder.AgentScored viaVector = rewarder(fixed("team", new double[] {0.75})).agentRewards(ITEM, JOINT, "i");
        JointRewarder.AgentScored viaPlain = rewarder(plain).agentRewards(ITEM, JOINT, "i");
        assertThat(viaVector.perAgent()).isFalse();
        assertThat(viaVector.processed()).containsExactly(1.5);
        assertThat(viaPlain.processed()).containsExactly(viaVector.processed());
        assertThat(rewarder(fixed("team", new double[] {0.75})).reward(ITEM, JOINT, "i")).isEqualTo(1.5);
    }

    @Test
    void teamCallsRefusePerAgentRewardsOrAverageThem() {
        JointRewarder r = rewarder(fixed("per-agent", new double[] {1, 0}));
        assertThatThrownBy(() -> r.score(ITEM, JOINT, "i"))
                .hasMessageContaining("per-agent rewards are supported by the MAGRPO family only");
        assertThatThrownBy(() -> r.rewardMatrix(ITEM, List.of(List.of("a"), List.of("b")), "i"))
                .hasMessageContaining("per-agent rewards are supported by the MAGRPO family only");
        // evaluation's view: raw mean 0.5, processed mean (2 + 0) / 2 = 1
        JointRewarder.Scored mean = r.averagingAgentRewards().score(ITEM, JOINT, "i");
        assertThat(mean.raw()).isEqualTo(0.5);
        assertThat(mean.processed()).isEqualTo(1.0);
        // actor-critic with one-value rows: as a plain function
        assertThat(rewarder(fixed("team", new double[] {0.5})).rewardMatrix(ITEM, List.of(List.of("a"), List.of("b")), "i"))
                .isDeepEqualTo(new double[][] {{1.0}, {1.0}});
    }
}
