package comlrl.reward;

import comlrl.data.TaskItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Scores the agents' joint responses (Python: {@code reward_func}).
 *
 * <p>Contract: {@code agentCompletions} holds one list per agent, in actor order, each with the same
 * number K of completions; joint response k is {@code (agentCompletions.get(0).get(k), …)}.
 * {@code batchItems} are the task items being scored; the trainers call the function for one task
 * item at a time, so it is usually {@code batchItems.get(0)}. The result has one reward per joint
 * response (K values); trainers also accept a single value (shared) or one value per agent, see
 * {@link RewardLengths}. Rewards then pass through the trainer's reward processor. To reward each agent
 * of a joint response separately (the MAGRPO family), implement {@link AgentRewardFunction}.
 *
 * <pre>{@code
 * RewardFunction reward = RewardFunction.ofTwoAgents((briefs, detaileds, items) -> ...);
 * }</pre>
 */
@FunctionalInterface
public interface RewardFunction {
    /** One reward per joint response; never null. */
    List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems);

    /**
     * The range {@code [lo, hi]} this function's rewards fall in (the reference's
     * {@code reward_func.reward_range}), which reward histograms ({@code log_reward_distribution})
     * need; null (the default) when unknown.
     */
    default double[] rewardRange() {
        return null;
    }

    /** A single-agent reward: {@code (completions, batchItems) -> rewards}. */
    static RewardFunction ofOneAgent(OneAgent reward) {
        Objects.requireNonNull(reward, "reward");
        return (completions, items) -> {
            checkAgents("ofOneAgent", 1, completions);
            return reward.score(completions.get(0), items);
        };
    }

    /** A two-agent reward: {@code (agent0, agent1, batchItems) -> rewards}. */
    static RewardFunction ofTwoAgents(TwoAgents reward) {
        Objects.requireNonNull(reward, "reward");
        return (completions, items) -> {
            checkAgents("ofTwoAgents", 2, completions);
            return reward.score(completions.get(0), completions.get(1), items);
        };
    }

    /** A three-agent reward: {@code (agent0, agent1, agent2, batchItems) -> rewards}. */
    static RewardFunction ofThreeAgents(ThreeAgents reward) {
        Objects.requireNonNull(reward, "reward");
        return (completions, items) -> {
            checkAgents("ofThreeAgents", 3, completions);
            return reward.score(completions.get(0), completions.get(1), completions.get(2), items);
        };
    }

    /** A reward of the completions alone, for any number of agents: {@code agentCompletions -> rewards}. */
    static RewardFunction ignoringItems(Function<List<List<String>>, List<Double>> reward) {
        Objects.requireNonNull(reward, "reward");
        return (completions, items) -> reward.apply(completions);
    }

    /**
     * A reward computed one joint response at a time: {@code (jointResponse, item) -> reward}, where
     * {@code jointResponse} holds one completion per agent and {@code item} is the only batch item
     * (or the k-th, when there is one item per joint response).
     */
    static RewardFunction perJointResponse(JointResponseReward reward) {
        Objects.requireNonNull(reward, "reward");
        return (completions, items) -> {
            int k = RewardFunctions.jointResponseCount(completions);
            List<Double> rewards = new ArrayList<>(k);
            for (int j = 0; j < k; j++) {
                List<String> joint = new ArrayList<>(completions.size());
                for (List<String> agent : completions) {
                    joint.add(agent.get(j));
                }
                rewards.add(reward.score(List.copyOf(joint), RewardFunctions.itemFor(items, j, k)));
            }
            return rewards;
        };
    }

    /** {@code (completions, batchItems) -> rewards} for one agent. */
    @FunctionalInterface
    interface OneAgent {
        List<Double> score(List<String> completions, List<TaskItem> batchItems);
    }

    /** {@code (agent0, agent1, batchItems) -> rewards}. */
    @FunctionalInterface
    interface TwoAgents {
        List<Double> score(List<String> agent0, List<String> agent1, List<TaskItem> batchItems);
    }

    /** {@code (agent0, agent1, agent2, batchItems) -> rewards}. */
    @FunctionalInterface
    interface ThreeAgents {
        List<Double> score(List<String> agent0, List<String> agent1, List<String> agent2, List<TaskItem> batchItems);
    }

    /** {@code (jointResponse, item) -> reward}, jointResponse holding one completion per agent. */
    @FunctionalInterface
    interface JointResponseReward {
        double score(List<String> jointResponse, TaskItem item);
    }

    private static void checkAgents(String adapter, int expected, List<List<String>> completions) {
        if (completions.size() != expected) {
            throw new IllegalArgumentException("RewardFunction." + adapter + " scores " + expected + " agent(s) but received "
                    + "completions from " + completions.size() + "; make num_agents match the reward function");
        }
    }
}
