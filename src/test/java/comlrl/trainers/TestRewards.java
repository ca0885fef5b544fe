package comlrl.trainers;

import comlrl.reward.RewardFunction;
import java.util.ArrayList;
import java.util.List;

/** Rewards of the trainer tests, with values easy to work out by hand. */
public final class TestRewards {
    private TestRewards() {
    }

    /** Reward = length of agent 1's completion minus agent 0's, in characters, / 10 (one per joint action). */
    public static RewardFunction lengthDifference() {
        return (completions, items) -> {
            List<Double> rewards = new ArrayList<>();
            for (int k = 0; k < completions.get(0).size(); k++) {
                rewards.add((completions.get(1).get(k).length() - completions.get(0).get(k).length()) / 10.0);
            }
            return rewards;
        };
    }

    /** Reward of one agent = its completion's length in characters / 10. */
    public static RewardFunction ownLength() {
        return (completions, items) -> {
            List<Double> rewards = new ArrayList<>();
            for (String c : completions.get(0)) {
                rewards.add(c.length() / 10.0);
            }
            return rewards;
        };
    }
}
