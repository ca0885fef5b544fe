package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.data.TaskItem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RewardFunctionTest {
    private static final TaskItem ITEM = TaskItem.of(Map.of("prompt", "p", "target_min", 2.0, "target_max", 3.0));

    @TempDir
    Path dir;

    @BeforeEach
    void writeRewardScript() throws Exception {
        Files.writeString(dir.resolve("reward.sh"), "while read -r line; do echo '[1.0]'; done\n");
    }

    @Test
    void adaptersPassTheRightLists() {
        RewardFunction one = RewardFunction.ofOneAgent((completions, items) -> List.of((double) completions.size()));
        assertThat(one.score(List.of(List.of("a", "b")), List.of(ITEM))).containsExactly(2.0);

        RewardFunction two = RewardFunction.ofTwoAgents((a, b, items) ->
                List.of((double) a.get(0).length(), (double) b.get(0).length(), items.get(0).getDouble("target_min")));
        assertThat(two.score(List.of(List.of("x"), List.of("yyy")), List.of(ITEM))).containsExactly(1.0, 3.0, 2.0);

        RewardFunction three = RewardFunction.ofThreeAgents((a, b, c, items) -> List.of(a.get(0) + b.get(0) + c.get(0))
                .stream().map(s -> (double) s.length()).toList());
        assertThat(three.score(List.of(List.of("a"), List.of("bb"), List.of("ccc")), List.of(ITEM))).containsExactly(6.0);

        RewardFunction noItems = RewardFunction.ignoringItems(all -> List.of((double) all.size()));
        assertThat(noItems.score(List.of(List.of("a"), List.of("b"), List.of("c"), List.of("d")), List.of()))
                .containsExactly(4.0);
    }

    @Test
    void adaptersCheckTheAgentCount() {
        RewardFunction two = RewardFunction.ofTwoAgents((a, b, items) -> List.of(0.0));
        assertThatThrownBy(() -> two.score(List.of(List.of("a")), List.of(ITEM)))
                .hasMessageContaining("RewardFunction.ofTwoAgents scores 2 agent(s) but received completions from 1");
        RewardFunction one = RewardFunction.ofOneAgent((c, items) -> List.of(0.0));
        assertThatThrownBy(() -> one.score(List.of(List.of("a"), List.of("b")), List.of(ITEM)))
                .hasMessageContaining("ofOneAgent");
        RewardFunction three = RewardFunction.ofThreeAgents((a, b, c, items) -> List.of(0.0));
        assertThatThrownBy(() -> three.score(List.of(List.of("a")), List.of(ITEM))).hasMessageContaining("ofThreeAgents");
    }

    @Test
    void perJointResponseIteratesJointResponses() {
        List<String> seen = new ArrayList<>();
        RewardFunction reward = RewardFunction.perJointResponse((joint, item) -> {
            seen.add(String.join("+", joint) + "@" + item.getString("prompt"));
            return joint.get(0).length() + joint.get(1).length();
        });
        assertThat(reward.score(List.of(List.of("a", "bb"), List.of("ccc", "d")), List.of(ITEM))).containsExactly(4.0, 3.0);
        assertThat(seen).containsExactly("a+ccc@p", "bb+d@p");
        assertThatThrownBy(() -> reward.score(List.of(List.of("a", "b"), List.of("c")), List.of(ITEM)))
                .hasMessageContaining("agent 0 gave 2, agent 1 gave 1");
        TaskItem other = TaskItem.of(Map.of("prompt", "q"));
        seen.clear();
        reward.score(List.of(List.of("a", "b"), List.of("c", "d")), List.of(ITEM, other));   // one item per joint response
        assertThat(seen).containsExactly("a+c@p", "b+d@q");
        assertThatThrownBy(() -> reward.score(List.of(List.of("a", "b", "c"), List.of("c", "d", "e")), List.of(ITEM, other)))
                .hasMessageContaining("expected 1 task item or one per joint response (3), got 2");
    }

    @Test
    void rewardLengths() {
        // N = 1: anything goes through unchanged
        assertThat(RewardLengths.normalize(List.of(1.0, 2.0, 3.0), 1, 4, "MAGRPO")).containsExactly(1.0, 2.0, 3.0);
        // one value → replicated N times
        assertThat(RewardLengths.normalize(List.of(0.5), 3, 4, "MAGRPO")).containsExactly(0.5, 0.5, 0.5);
        // N values or G values → unchanged
        assertThat(RewardLengths.normalize(List.of(1.0, 2.0), 2, 4, "MAGRPO")).containsExactly(1.0, 2.0);
        assertThat(RewardLengths.normalize(List.of(1.0, 2.0, 3.0, 4.0), 2, 4, "MAGRPO")).containsExactly(1.0, 2.0, 3.0, 4.0);
        assertThatThrownBy(() -> RewardLengths.normalize(List.of(1.0, 2.0, 3.0), 2, 4, "IAC"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Reward function must return either 1 or 2 values per prompt for multi-agent IAC.")
                .hasMessageContaining("Got 3 values");
        assertThatThrownBy(() -> RewardLengths.normalize(List.of(), 2, 4, "MAGRPO"))
                .hasMessageStartingWith("Reward function must return either 1 or 2 values per prompt for multi-agent MAGRPO.");
        assertThatThrownBy(() -> RewardLengths.normalize(null, 2, 4, "MAGRPO")).hasMessageContaining("returned null");
        List<Double> withNull = new ArrayList<>();
        withNull.add(null);
        assertThatThrownBy(() -> RewardLengths.normalize(withNull, 2, 4, "MAGRPO")).hasMessageContaining("index 0");
    }

    @Test
    void lengthRatioRewardMatchesTheSeedDocAssertions() {
        LengthRatioReward reward = new LengthRatioReward();
        // spec: reward_func(["Hi"], ["Hello"], batch_items=[item]) == [1.0]: ratio 5/2 = 2.5 ∈ [2, 3] → e^0 = 1
        assertThat(reward.score(List.of(List.of("Hi"), List.of("Hello")), List.of(ITEM))).containsExactly(1.0);
        // spec: reward_func([""], ["Hello"], batch_items=[item]) == [0.0]: empty brief → 0
        assertThat(reward.score(List.of(List.of(""), List.of("Hello")), List.of(ITEM))).containsExactly(0.0);
    }

    @Test
    void lengthRatioRewardGolden() {
        LengthRatioReward reward = new LengthRatioReward();
        // "ab" / "abcdefgh": ratio 4 → distance 4 − 3 = 1 → e^−1 = 0.367879441
        // "abcd" / "abcd":   ratio 1 → distance 2 − 1 = 1 → e^−1
        // "a" / "abc":       ratio 3 → distance 0 → 1
        List<Double> rewards = reward.score(List.of(List.of("ab", "abcd", "a"), List.of("abcdefgh", "abcd", "abc")), List.of(ITEM));
        assertThat(rewards.stream().mapToDouble(Double::doubleValue).toArray())
                .containsExactly(new double[] {0.367879441, 0.367879441, 1.0}, within(1e-9));
        // code points, not UTF-16 units: "😀😀" is 2 code points (4 chars); "abcde" 5 → ratio 2.5 → 1
        assertThat(LengthRatioReward.reward("😀😀", "abcde", 2, 3)).isEqualTo(1.0);
        // custom fields
        TaskItem custom = TaskItem.of(Map.of("lo", 1.0, "hi", 1.0));
        assertThat(new LengthRatioReward("lo", "hi").score(List.of(List.of("ab"), List.of("ab")), List.of(custom)))
                .containsExactly(1.0);
        assertThatThrownBy(() -> reward.score(List.of(List.of("a")), List.of(ITEM))).hasMessageContaining("needs 2 agents");
        assertThatThrownBy(() -> reward.score(List.of(List.of("a"), List.of("b")), List.of(TaskItem.of(Map.of("prompt", "p")))))
                .hasMessageContaining("no field 'target_min'");
    }

    @Test
    void fromConfigBuildsBuiltins() {
        RewardFunction lengthRatio = RewardFunctions.fromConfig(Map.of("type", "length_ratio"), null);
        assertThat(lengthRatio).isInstanceOf(LengthRatioReward.class);
        assertThat(lengthRatio.score(List.of(List.of("Hi"), List.of("Hello")), List.of(ITEM))).containsExactly(1.0);
        RewardFunction command = RewardFunctions.fromConfig(
                Map.of("type", "command", "run", List.of("sh", "reward.sh", 3), "timeout_s", 5), dir);
        assertThat(command).isInstanceOf(ExternalCommandReward.class);
        assertThat(((ExternalCommandReward) command).command()).containsExactly("sh", "reward.sh", "3");
        ((ExternalCommandReward) command).close();
    }

    @Test
    void fromConfigChecksTheProgramBeforeAnythingStarts() throws Exception {
        assertThatThrownBy(() -> RewardFunctions.fromConfig(
                Map.of("type", "command", "run", List.of("no-such-program-4f2a", "reward.sh")), dir))
                .hasMessageContaining("reward command program 'no-such-program-4f2a' (run[0]) was not found on PATH");
        assertThatThrownBy(() -> RewardFunctions.fromConfig(
                Map.of("type", "command", "run", List.of("sh", "missing.sh")), dir))
                .hasMessageContaining("reward command script 'missing.sh' (run[1]) does not exist: looked for "
                        + dir.resolve("missing.sh"));
        assertThatThrownBy(() -> RewardFunctions.fromConfig(
                Map.of("type", "command", "run", List.of("sh", "reward.sh"), "working_dir", "nowhere"), dir))
                .hasMessageContaining("reward command working_dir " + dir.resolve("nowhere") + " does not exist");
        assertThat(RewardFunctions.requiredFields(Map.of("type", "length_ratio", "target_min_field", "lo")))
                .containsExactly(Map.entry("lo", "target_min_field"), Map.entry("target_max", "target_max_field"));
        assertThat(RewardFunctions.requiredFields(Map.of("type", "command"))).isEmpty();
        // a reward model's template reads its placeholders, its completions aside
        assertThat(RewardFunctions.requiredFields(Map.of("type", "reward_model", "model", "m",
                "template", "Q: {question}\nA: {completion_0} / {completion_1} ({topic})")))
                .containsExactly(Map.entry("question", "template"), Map.entry("topic", "template"));
        assertThat(RewardFunctions.requiredFields(Map.of("type", "reward_model", "model", "m"))).isEmpty();
    }

    @Test
    void fromConfigErrors() {
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("type", "length_ration"), null))
                .hasMessageContaining("Unknown reward type 'length_ration'; did you mean 'length_ratio'?");
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("run", List.of("x")), null))
                .hasMessageContaining("reward needs a 'type'");
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("type", "command"), null))
                .hasMessageContaining("needs 'run'");
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("type", "command", "command", List.of("x")), null))
                .hasMessageContaining("Unknown reward command key 'command': use 'run'");
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("type", "command", "run", "x", "timeout_s", 0), null))
                .hasMessageContaining("timeout_s must be a positive number");
        assertThatThrownBy(() -> RewardFunctions.fromConfig(Map.of("type", "length_ratio", "target_min", 2), null))
                .hasMessageContaining("did you mean 'target_min_field'?");
    }
}
