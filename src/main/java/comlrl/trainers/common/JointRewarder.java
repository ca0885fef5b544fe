package comlrl.trainers.common;

import comlrl.data.TaskItem;
import comlrl.reward.RewardFunction;
import comlrl.reward.RewardLengths;
import comlrl.utils.RewardProcessor;
import java.util.ArrayList;
import java.util.List;

/**
 * The reward step of every trainer: the reward function called on the agents' completions with
 * {@code batch_items = [item]}, the returned count checked ({@link RewardLengths}), each value
 * passed through the reward processor. A value that is or becomes non-finite stops the run with a
 * message naming the item and the joint response, unless {@code skip_nonfinite_samples} is set
 * (then it is returned as NaN and the trainer leaves the samples out).
 */
public final class JointRewarder {
    private final RewardFunction rewardFunc;
    private final RewardProcessor processor;
    private final int numAgents;
    private final int numGenerations;
    private final String algorithm;
    private final boolean skipNonfinite;

    public JointRewarder(RewardFunction rewardFunc, RewardProcessor processor, int numAgents, int numGenerations,
            String algorithm, boolean skipNonfinite) {
        this.rewardFunc = rewardFunc;
        this.processor = processor;
        this.numAgents = numAgents;
        this.numGenerations = numGenerations;
        this.algorithm = algorithm;
        this.skipNonfinite = skipNonfinite;
    }

    /**
     * MAGRPO's call, once per joint action: {@code r = processor(R([c_1], …, [c_N]; item))}, the first
     * returned value. Length-aware processors ({@code normalize_by_length}) receive the joint
     * response's total length in code points.
     */
    public double reward(TaskItem item, List<String> joint, String itemLabel) {
        return score(item, joint, itemLabel).processed();
    }

    /** A joint action's reward as the reward function returned it and after the processor. */
    public record Scored(double raw, double processed) {
    }

    /** {@link #reward}, keeping the raw value too (reward histograms show raw rewards). */
    public Scored score(TaskItem item, List<String> joint, String itemLabel) {
        List<List<String>> lists = new ArrayList<>();
        for (String c : joint) {
            lists.add(List.of(c));
        }
        List<Double> raw = RewardLengths.normalize(rewardFunc.score(lists, List.of(item)), numAgents, numGenerations,
                algorithm);
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
        List<Double> returned = rewardFunc.score(completions, List.of(item));
        List<Double> raw = returned != null && returned.size() == 1 ? returned
                : RewardLengths.normalize(returned, numAgents, k, algorithm);
        double[][] r = new double[numAgents][k];
        if (raw.size() == 1) {
            double v = process(raw.get(0), flatten(completions, -1, -1), false, item, itemLabel);
            for (double[] row : r) {
                java.util.Arrays.fill(row, v);
            }
        } else if (raw.size() == k) {
            for (int g = 0; g < k; g++) {
                double v = process(raw.get(g), flatten(completions, -1, g), true, item, itemLabel);
                for (int i = 0; i < numAgents; i++) {
                    r[i][g] = v;
                }
            }
        } else if (raw.size() == numAgents) {
            for (int i = 0; i < numAgents; i++) {
                double v = process(raw.get(i), flatten(completions, i, -1), false, item, itemLabel);
                java.util.Arrays.fill(r[i], v);
            }
        } else {
            throw new IllegalArgumentException("Reward function returned " + raw.size() + " values for " + numAgents
                    + " agents x " + k + " completions; return 1, " + k + " (one per joint response) or " + numAgents
                    + " (one per agent) values");
        }
        return r;
    }

    /** Completions of agent {@code agent} (all when −1), generation {@code gen} (all when −1). */
    private static List<String> flatten(List<List<String>> completions, int agent, int gen) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < completions.size(); i++) {
            for (int g = 0; g < completions.get(i).size(); g++) {
                if ((agent < 0 || agent == i) && (gen < 0 || gen == g)) {
                    out.add(completions.get(i).get(g));
                }
            }
        }
        return out;
    }

    /** {@code byAgent}: {@code scored} holds one response per agent (named so in messages). */
    private double process(Double value, List<String> scored, boolean byAgent, TaskItem item, String itemLabel) {
        int length = 0;
        for (String c : scored) {
            length += c.codePointCount(0, c.length());
        }
        double processed = value == null ? Double.NaN : processor.applyWithLength(value, length);
        if (!Double.isFinite(processed) && !skipNonfinite) {
            String what = value == null || !Double.isFinite(value) ? "The reward function returned " + value
                    : "The reward processor turned the reward " + value + " into " + processed;
            throw new IllegalStateException(what + " for " + itemLabel + " (prompt " + abbreviate(item.getString("prompt", ""))
                    + "), " + (byAgent ? "joint response " : "scoring ") + describe(scored, byAgent) + ". No optimizer step used it and the last checkpoint is "
                    + "intact; fix the reward, or set skip_nonfinite_samples: true to leave such samples out of the update.");
        }
        return processed;
    }

    private static String abbreviate(String text) {
        String oneLine = text.replace("\n", "\\n");
        return "\"" + (oneLine.length() > 60 ? oneLine.substring(0, 57) + "..." : oneLine) + "\"";
    }

    private static String describe(List<String> joint, boolean byAgent) {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < joint.size(); i++) {
            parts.add((byAgent ? "agent " + i + " " : "") + abbreviate(joint.get(i)));
        }
        return String.join(", ", parts);
    }
}
