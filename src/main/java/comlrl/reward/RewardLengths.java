package comlrl.reward;

import java.util.Collections;
import java.util.List;

/** The reference's {@code normalize_reward_lengths} (§2.3): which reward counts a trainer accepts. */
public final class RewardLengths {
    private RewardLengths() {}

    /**
     * Checks and expands the rewards returned for one prompt:
     * <ul>
     *   <li>one agent → unchanged;</li>
     *   <li>one value → replicated N times (a shared reward for every agent);</li>
     *   <li>N values (one per agent) or G values (one per joint response) → unchanged;</li>
     *   <li>anything else → "Reward function must return either 1 or {N} values per prompt for
     *       multi-agent {algorithm}." (followed by what was received).</li>
     * </ul>
     * Null entries are rejected. Returns an unmodifiable list.
     */
    public static List<Double> normalize(List<Double> rewards, int numAgents, int numGenerations, String algorithm) {
        if (rewards == null) {
            throw new IllegalArgumentException("Reward function returned null; it must return a list of rewards.");
        }
        for (int k = 0; k < rewards.size(); k++) {
            if (rewards.get(k) == null) {
                throw new IllegalArgumentException("Reward function returned a null reward at index " + k + ".");
            }
        }
        if (numAgents == 1) {
            return List.copyOf(rewards);
        }
        int n = rewards.size();
        if (n == 1) {
            return Collections.nCopies(numAgents, rewards.get(0));
        }
        if (n == numAgents || n == numGenerations) {
            return List.copyOf(rewards);
        }
        throw new IllegalArgumentException("Reward function must return either 1 or " + numAgents
                + " values per prompt for multi-agent " + algorithm + ". Got " + n + " values (num_generations="
                + numGenerations + ").");
    }
}
