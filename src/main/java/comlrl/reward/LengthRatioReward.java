package comlrl.reward;

import comlrl.data.TaskItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The seed documentation's length-ratio reward (config {@code type: length_ratio}), for two agents
 * (agent 0 brief, agent 1 detailed). For each aligned pair (brief b, detailed d) and task item x:
 * <pre>
 *   reward   = 0                                                       if b is empty
 *   ratio    = len(d) / len(b)                                         (lengths in Unicode code points,
 *                                                                        as Python's len() on str)
 *   distance = max(x[target_min] − ratio, ratio − x[target_max], 0)
 *   reward   = e^{−distance}
 * </pre>
 * It rewards a character-count ratio, not writing quality. The item is the single batch item, or
 * the k-th when there is one item per pair.
 */
public final class LengthRatioReward implements RewardFunction {
    private final String targetMinField;
    private final String targetMaxField;

    /** Reads the targets from the fields {@code target_min} and {@code target_max}. */
    public LengthRatioReward() {
        this("target_min", "target_max");
    }

    /** Reads the targets from the given task-item fields. */
    public LengthRatioReward(String targetMinField, String targetMaxField) {
        this.targetMinField = Objects.requireNonNull(targetMinField, "targetMinField");
        this.targetMaxField = Objects.requireNonNull(targetMaxField, "targetMaxField");
    }

    @Override
    public List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        if (agentCompletions.size() != 2) {
            throw new IllegalArgumentException("length_ratio reward needs 2 agents (brief, detailed), got "
                    + agentCompletions.size() + "; set num_agents: 2");
        }
        int k = RewardFunctions.jointResponseCount(agentCompletions);
        List<Double> rewards = new ArrayList<>(k);
        for (int j = 0; j < k; j++) {
            TaskItem item = RewardFunctions.itemFor(batchItems, j, k);
            rewards.add(reward(agentCompletions.get(0).get(j), agentCompletions.get(1).get(j),
                    item.getDouble(targetMinField), item.getDouble(targetMaxField)));
        }
        return rewards;
    }

    /** The reward of one pair; see the class comment. */
    public static double reward(String brief, String detailed, double targetMin, double targetMax) {
        if (brief.isEmpty()) {
            return 0.0;
        }
        double ratio = (double) detailed.codePointCount(0, detailed.length()) / brief.codePointCount(0, brief.length());
        double distance = Math.max(Math.max(targetMin - ratio, ratio - targetMax), 0.0);
        return Math.exp(-distance);
    }

    /** {@code exp(−distance)} lies in [0, 1]. */
    @Override
    public double[] rewardRange() {
        return new double[] {0.0, 1.0};
    }

    @Override
    public String toString() {
        return "LengthRatioReward(" + targetMinField + ", " + targetMaxField + ")";
    }
}
