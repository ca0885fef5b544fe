package comlrl.reward;

import comlrl.data.TaskItem;
import comlrl.utils.RewardProcessor;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The reward step of every trainer: the reward function called on the agents' completions with
 * {@code batch_items = [item]}, the returned count checked ({@link RewardLengths}), each value passed
 * through the reward processor. A non-finite value stops the run with a message naming the item and
 * the joint response, unless {@code skip_nonfinite_samples} is set (then it is NaN, the samples left out).
 *
 * <p>Per-agent rewards ({@link AgentRewardFunction}): {@link #agentRewards} gives the MAGRPO family each
 * joint response's vector; the team calls ({@link #reward}, {@link #score}, {@link #rewardMatrix}) refuse
 * a vector of N &gt; 1 values unless {@code averageAgentRewards} (MAGRPO's evaluation: the team mean).
 */
public record JointRewarder(RewardFunction rewardFunc, RewardProcessor processor, int numAgents, int numGenerations,
        String algorithm, boolean skipNonfinite, boolean averageAgentRewards) {
    public JointRewarder(RewardFunction rewardFunc, RewardProcessor processor, int numAgents, int numGenerations,
            String algorithm, boolean skipNonfinite) {
        this(rewardFunc, processor, numAgents, numGenerations, algorithm, skipNonfinite, false);
    }

    /** This rewarder, its team calls scoring per-agent rewards by {@code r_k = (1/N) Σ_i processor(r_{i,k})}. */
    public JointRewarder averagingAgentRewards() {
        return new JointRewarder(rewardFunc, processor, numAgents, numGenerations, algorithm, skipNonfinite, true);
    }

    /** A joint action's rewards: length 1 (a team reward) or N (agent i's at index i), raw and processed. */
    public record AgentScored(double[] raw, double[] processed) {
        /** Whether these are per-agent rewards (N values) rather than one team reward. */
        public boolean perAgent() {
            return processed.length > 1;
        }
    }

    /**
     * MAGRPO's call, once per joint action: a plain {@link RewardFunction}'s one team value ({@link #score}),
     * or an {@link AgentRewardFunction}'s vector, one team value (processed as {@link #score} does) or N
     * values, each processed with the length of the completion it scores; any other length is refused.
     */
    public AgentScored agentRewards(TaskItem item, List<String> joint, String itemLabel) {
        if (!(rewardFunc instanceof AgentRewardFunction agentFunc)) {
            Scored team = score(item, joint, itemLabel);
            return new AgentScored(new double[] {team.raw()}, new double[] {team.processed()});
        }
        double[] raw = firstVector(agentFunc, joint, item);
        if (raw.length == 1) {
            return new AgentScored(raw, new double[] {process(raw[0], joint, true, item, itemLabel)});
        }
        return new AgentScored(raw, IntStream.range(0, raw.length)
                .mapToDouble(i -> process(raw[i], List.of(joint.get(i)), false, item, itemLabel)).toArray());
    }

    /** The vector of the one joint response {@code joint}, checked to hold 1 or N values. */
    private double[] firstVector(AgentRewardFunction agentFunc, List<String> joint, TaskItem item) {
        List<double[]> rows = agentFunc.scorePerAgent(singletons(joint), List.of(item));
        if (rows == null || rows.isEmpty()) {
            throw new IllegalArgumentException("Reward function " + rewardFunc
                    + " returned no reward for a joint action");
        }
        if (rows.size() > 1 && rows.stream().allMatch(r -> r != null && r.length == 1)) { // a team reward's counts
            RewardLengths.normalize(rows.stream().map(r -> r[0]).toList(), numAgents, numGenerations, algorithm);
        }
        double[] row = rows.get(0);
        if (row == null || (row.length != 1 && row.length != numAgents)) {
            throw new IllegalArgumentException("Reward function " + rewardFunc + " returned "
                    + (row == null ? "null" : row.length + " values") + " for joint response 0; return "
                    + "one team reward or one reward per agent (num_agents = " + numAgents + ")");
        }
        return row.clone();
    }

    private IllegalArgumentException agentRewardsRefused() {
        return new IllegalArgumentException("per-agent rewards are supported by the MAGRPO family only; " + algorithm
                + " needs one team reward per joint response, but reward function " + rewardFunc + " returned one per "
                + "agent. Return a single number per joint response (e.g. the agents' mean), or train with MAGRPO");
    }

    /**
     * MAGRPO's call, once per joint action: {@code r = processor(R([c_1], …, [c_N]; item))}, the first
     * returned value; length-aware processors get the joint response's total length in code points.
     */
    public double reward(TaskItem item, List<String> joint, String itemLabel) {
        return score(item, joint, itemLabel).processed();
    }

    /** A joint action's reward as the reward function returned it and after the processor. */
    public record Scored(double raw, double processed) {
    }

    /** {@link #reward}, keeping the raw value too (for reward histograms). */
    public Scored score(TaskItem item, List<String> joint, String itemLabel) {
        if (rewardFunc instanceof AgentRewardFunction) {
            AgentScored scored = agentRewards(item, joint, itemLabel);
            if (!scored.perAgent()) {
                return new Scored(scored.raw()[0], scored.processed()[0]);
            }
            if (!averageAgentRewards) {
                throw agentRewardsRefused();
            }
            return new Scored(AgentRewardFunction.teamMean(scored.raw()),
                    AgentRewardFunction.teamMean(scored.processed()));
        }
        List<Double> raw = RewardLengths.normalize(rewardFunc.score(singletons(joint), List.of(item)), numAgents,
                numGenerations, algorithm);
        if (raw.isEmpty()) {
            throw new IllegalArgumentException("Reward function returned no reward for a joint action");
        }
        return new Scored(raw.get(0), process(raw.get(0), joint, true, item, itemLabel));
    }

    /**
     * The actor-critic call, once per item and turn with every agent's K completions
     * ({@code completions[i][k]}), expanded to {@code r[i][k]} (reference §5.5 step 5):
     * one value → every (i, k); K values → {@code r[i][k] = v_k} for every agent (checked before N,
     * so K = N means per generation); N values → {@code r[i][k] = v_i}. Each value is processed once,
     * with the length of what it scores (joint response k, agent i's completions, or all of them).
     */
    public double[][] rewardMatrix(TaskItem item, List<List<String>> completions, String itemLabel) {
        int k = completions.get(0).size();
        List<Double> returned = rewardFunc instanceof AgentRewardFunction agentFunc
                ? teamValues(agentFunc, completions, item) : rewardFunc.score(completions, List.of(item));
        List<Double> raw = returned != null && returned.size() == 1 ? returned
                : RewardLengths.normalize(returned, numAgents, k, algorithm);
        if (raw.size() != 1 && raw.size() != k && raw.size() != numAgents) {
            throw new IllegalArgumentException("Reward function returned " + raw.size() + " values for " + numAgents
                    + " agents x " + k + " completions; return 1, " + k + " (one per joint response) or " + numAgents
                    + " (one per agent) values");
        }
        double[][] r = new double[numAgents][k];
        for (int v = 0; v < raw.size(); v++) { // value v scores agent `agent` (all: -1), generation `gen` (all: -1)
            int gen = raw.size() > 1 && raw.size() == k ? v : -1;
            int agent = raw.size() > 1 && gen < 0 ? v : -1;
            double value = process(raw.get(v), flatten(completions, agent, gen), gen >= 0, item, itemLabel);
            for (int i = 0; i < numAgents; i++) {
                for (int g = 0; g < k; g++) {
                    if ((agent < 0 || agent == i) && (gen < 0 || gen == g)) {
                        r[i][g] = value;
                    }
                }
            }
        }
        return r;
    }

    /** An agent reward function's rows as plain values; a row of N &gt; 1 values is refused. */
    private List<Double> teamValues(AgentRewardFunction agentFunc, List<List<String>> completions, TaskItem item) {
        List<double[]> rows = agentFunc.scorePerAgent(completions, List.of(item));
        if (rows != null && rows.stream().anyMatch(row -> row == null || row.length != 1)) {
            throw agentRewardsRefused();
        }
        return rows == null ? null : rows.stream().map(row -> row[0]).toList();
    }

    /** The joint response as the reward function takes it: {@code [[c_1], …, [c_N]]}. */
    private static List<List<String>> singletons(List<String> joint) {
        return joint.stream().map(List::of).toList();
    }

    /** Completions of agent {@code agent} (all when −1), generation {@code gen} (all when −1). */
    private static List<String> flatten(List<List<String>> completions, int agent, int gen) {
        return IntStream.range(0, completions.size()).filter(i -> agent < 0 || agent == i).boxed()
                .flatMap(i -> IntStream.range(0, completions.get(i).size()).filter(g -> gen < 0 || gen == g)
                        .mapToObj(completions.get(i)::get)).toList();
    }

    /** {@code byAgent}: {@code scored} holds one response per agent (named so in messages). */
    private double process(Double value, List<String> scored, boolean byAgent, TaskItem item, String itemLabel) {
        int length = scored.stream().mapToInt(c -> c.codePointCount(0, c.length())).sum();
        double processed = value == null ? Double.NaN : processor.applyWithLength(value, length);
        if (!Double.isFinite(processed) && !skipNonfinite) {
            String what = value == null || !Double.isFinite(value) ? "The reward function returned " + value
                    : "The reward processor turned the reward " + value + " into " + processed;
            String response = IntStream.range(0, scored.size()).mapToObj(i -> (byAgent ? "agent " + i + " " : "")
                    + abbreviate(scored.get(i))).collect(Collectors.joining(", "));
            throw new IllegalStateException(what + " for " + itemLabel + " (prompt "
                    + abbreviate(item.getString("prompt", "")) + "), " + (byAgent ? "joint response " : "scoring ")
                    + response + ". No optimizer step used it and the last checkpoint is intact; fix the reward, or "
                    + "set skip_nonfinite_samples: true to leave such samples out of the update.");
        }
        return processed;
    }

    /** {@code text} on one line, quoted, cut to 60 characters: a prompt or completion in a message. */
    public static String abbreviate(String text) {
        String oneLine = text.replace("\n", "\\n");
        return "\"" + (oneLine.length() > 60 ? oneLine.substring(0, 57) + "..." : oneLine) + "\"";
    }
}
