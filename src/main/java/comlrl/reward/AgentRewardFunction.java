package comlrl.reward;

import comlrl.data.TaskItem;
import java.util.ArrayList;
import java.util.List;

/**
 * A reward function that may score each agent of a joint response separately: per joint response k a
 * vector {@code r_{·,k}} of either one value (a team reward, shared by every agent, as a plain
 * {@link RewardFunction} returns) or N values, {@code r_{i,k}} being agent i's reward (a coder scored on
 * the tests its code passes, a tester on the bugs its tests catch).
 *
 * <p>Who uses the vectors: the MAGRPO family (MAGRPO, MA-REINFORCE, MA-ReMax, MA-RLOO) credits
 * agent i with its own rewards: its tree returns are
 * {@code R_{i,k} = r_{i,k} + mean_l R^{child k}_{i,l}}, and its returns per completion
 * {@code R_i[k] = R_{i,k}} (aligned) or {@code Σ_{j : j_i = k} R_{i,j}} (cross). Everyone else sees the
 * team reward {@link #score}: the mean {@code r_k = (1/N) Σ_i r_{i,k}} (evaluation logs it; centralized
 * MAGRPO, whose one actor writes every role, is trained on it), while the
 * actor-critic and preference trainers refuse a vector of N &gt; 1 values, which they have no use for.
 * A vector of any other length is an error naming the agent count and the function.
 *
 * <pre>{@code
 * AgentRewardFunction reward = (completions, items) -> {
 *     List<double[]> rows = new ArrayList<>();
 *     for (int k = 0; k < completions.get(0).size(); k++) {
 *         rows.add(new double[] {coderScore(completions, k), testerScore(completions, k)});
 *     }
 *     return rows;
 * };
 * MAGRPOTrainer.builder().rewardFunc(reward)...
 * }</pre>
 */
@FunctionalInterface
public interface AgentRewardFunction extends RewardFunction {
    /**
     * One vector per joint response, in the order of {@link RewardFunction#score}: length 1 (team reward)
     * or num_agents (agent i's reward at index i); never null.
     */
    List<double[]> scorePerAgent(List<List<String>> agentCompletions, List<TaskItem> batchItems);

    /** The team rewards: per joint response {@link #teamMean} of its vector. */
    @Override
    default List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        List<double[]> rows = scorePerAgent(agentCompletions, batchItems);
        if (rows == null) {
            throw new IllegalArgumentException("Reward function " + this + " returned null; it must return a list of rewards.");
        }
        List<Double> out = new ArrayList<>(rows.size());
        for (double[] row : rows) {
            out.add(teamMean(row));
        }
        return out;
    }

    /** {@code (1/n) Σ_i row[i]}; a one-value row is returned as it is (a team reward unchanged). */
    static double teamMean(double[] row) {
        if (row == null || row.length == 0) {
            throw new IllegalArgumentException("a reward vector must hold 1 value (team reward) or one per agent; got "
                    + (row == null ? "null" : "an empty one"));
        }
        if (row.length == 1) {
            return row[0];
        }
        double sum = 0;
        for (double v : row) {
            sum += v;
        }
        return sum / row.length;
    }
}
