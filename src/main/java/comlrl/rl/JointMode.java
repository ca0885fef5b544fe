package comlrl.rl;

import java.util.Locale;

/**
 * How the G completions of each of the N agents at one rollout-tree node are combined into joint
 * actions, each scored once by the reward function.
 *
 * <ul>
 *   <li>{@link #ALIGNED}: K = G joint actions; joint action k is (c_0^k, c_1^k, …, c_{N−1}^k).</li>
 *   <li>{@link #CROSS}: K = G^N joint actions, every combination, in Cartesian order with
 *       <b>agent 0 slowest-varying</b> (row-major, like {@code itertools.product}): joint index
 *       j = Σ_i k_i · G^(N−1−i), so for N = 2, G = 2 the order is
 *       (0,0), (0,1), (1,0), (1,1).</li>
 * </ul>
 * With one agent both modes give K = G.
 */
public enum JointMode {
    /** Joint action k pairs the k-th completion of every agent; K = G. Config: "aligned" or "align". */
    ALIGNED("aligned", "align"),
    /** Every combination of completions; K = G^N, agent 0 slowest-varying. Config: "cross" or "crossed". */
    CROSS("cross", "crossed");

    private final String configName;
    private final String alias;

    JointMode(String configName, String alias) {
        this.configName = configName;
        this.alias = alias;
    }

    /** The canonical config spelling: "aligned" or "cross". */
    public String configName() {
        return configName;
    }

    /**
     * Parses "aligned"/"align" or "cross"/"crossed" (case and surrounding blanks ignored).
     *
     * @throws IllegalArgumentException naming the valid values
     */
    public static JointMode parse(String value) {
        if (value != null) {
            String key = value.trim().toLowerCase(Locale.ROOT);
            for (JointMode mode : values()) {
                if (mode.configName.equals(key) || mode.alias.equals(key)) {
                    return mode;
                }
            }
        }
        throw new IllegalArgumentException("joint_mode must be \"aligned\" (or \"align\") or \"cross\" (or \"crossed\") (got "
                + (value == null ? "null" : "\"" + value + "\"") + ")");
    }

    /**
     * K, the number of joint actions scored at one node: aligned → G; cross → G^N; N = 1 → G.
     *
     * @throws IllegalArgumentException when G &lt; 1, N &lt; 1, or G^N does not fit in an int
     */
    public int numJointActions(int numGenerations, int numAgents) {
        checkSizes(numGenerations, numAgents);
        if (this == ALIGNED || numAgents == 1) {
            return numGenerations;
        }
        int k = 1;
        for (int i = 0; i < numAgents; i++) {
            try {
                k = Math.multiplyExact(k, numGenerations);
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("cross joint mode with num_generations=" + numGenerations
                        + " and " + numAgents + " agents gives more than 2^31 joint actions per node; "
                        + "use joint_mode \"aligned\" or fewer generations");
            }
        }
        return k;
    }

    /**
     * The completion index of every agent in joint action {@code jointIndex}: aligned → k_i = j for
     * all i; cross → k_i = ⌊j / G^(N−1−i)⌋ mod G (agent 0 slowest-varying). Result {@code [N]}.
     */
    public int[] completionIndices(int jointIndex, int numGenerations, int numAgents) {
        int k = numJointActions(numGenerations, numAgents);
        if (jointIndex < 0 || jointIndex >= k) {
            throw new IndexOutOfBoundsException("joint index " + jointIndex + " outside [0, " + k + ")");
        }
        int[] indices = new int[numAgents];
        if (this == ALIGNED) {
            java.util.Arrays.fill(indices, jointIndex);
            return indices;
        }
        int rest = jointIndex;
        for (int i = numAgents - 1; i >= 0; i--) {
            indices[i] = rest % numGenerations;
            rest /= numGenerations;
        }
        return indices;
    }

    /**
     * Per-agent returns of each agent's own completions from the K joint-action returns of a node.
     * <pre>
     *   aligned: R_i[k] = R_k
     *   cross:   R_i[k] = Σ_{joint j : j_i = k} R_j     (a sum over the G^(N−1) joint actions that
     *                                                  contain agent i's k-th completion, not a mean,
     *                                                  as the reference does)
     * </pre>
     * {@code jointReturns}: {@code [K]}; result {@code [N][G]}.
     */
    public double[][] perAgentReturns(double[] jointReturns, int numGenerations, int numAgents) {
        int k = numJointActions(numGenerations, numAgents);
        if (jointReturns.length != k) {
            throw new IllegalArgumentException("expected " + k + " joint-action returns for joint_mode "
                    + configName + " with num_generations=" + numGenerations + " and " + numAgents
                    + " agents, got " + jointReturns.length);
        }
        double[][] perAgent = new double[numAgents][numGenerations];   // [N][G]
        if (this == ALIGNED || numAgents == 1) {
            for (int i = 0; i < numAgents; i++) {
                perAgent[i] = jointReturns.clone();
            }
            return perAgent;
        }
        for (int j = 0; j < k; j++) {
            int[] indices = completionIndices(j, numGenerations, numAgents);
            for (int i = 0; i < numAgents; i++) {
                perAgent[i][indices[i]] += jointReturns[j];
            }
        }
        return perAgent;
    }

    /**
     * Each agent's returns split by context, for counterfactual credit: a context c of agent i is one
     * choice of the other agents' completions, numbered like the joint index without agent i (the
     * lowest-numbered other agent slowest-varying), so there are C = G^(N−1) of them:
     * <pre>
     *   cross:   R_i[k][c] = R_j   with j the joint action where agent i plays k and the others play c,
     *            c = Σ_{m ≠ i} k_m · G^(number of agents after m other than i)
     *   e.g. N = 2: R_0[k][c] = R_{k·G + c}   (c = agent 1's completion)
     *               R_1[k][c] = R_{c·G + k}   (c = agent 0's completion)
     * </pre>
     * Summed over c, {@code R_i[k][·]} is {@link #perAgentReturns}'s R_i[k]. Aligned has no contexts
     * (no joint action varies one agent alone) and is rejected; with one agent, C = 1 and R_0[k][0] = R_k.
     * {@code jointReturns}: {@code [K]}; result {@code [N][G][C]}.
     *
     * @throws IllegalArgumentException for aligned with more than one agent, or a wrong number of returns
     */
    public double[][][] contextReturns(double[] jointReturns, int numGenerations, int numAgents) {
        int k = numJointActions(numGenerations, numAgents);
        if (this == ALIGNED && numAgents > 1) {
            throw new IllegalArgumentException("per-context returns need joint_mode \"cross\" (every combination "
                    + "of completions), got \"aligned\"");
        }
        if (jointReturns.length != k) {
            throw new IllegalArgumentException("expected " + k + " joint-action returns for joint_mode "
                    + configName + " with num_generations=" + numGenerations + " and " + numAgents
                    + " agents, got " + jointReturns.length);
        }
        int contexts = k / numGenerations;                                          // C = G^(N−1)
        double[][][] out = new double[numAgents][numGenerations][contexts];         // [N][G][C]
        for (int j = 0; j < k; j++) {
            int[] indices = completionIndices(j, numGenerations, numAgents);
            for (int i = 0; i < numAgents; i++) {
                out[i][indices[i]][contextIndex(indices, i, numGenerations)] = jointReturns[j];
            }
        }
        return out;
    }

    /** c of agent i in the joint action of {@code indices}: the others' completion indices in mixed radix G. */
    private static int contextIndex(int[] indices, int agent, int numGenerations) {
        int c = 0;
        for (int m = 0; m < indices.length; m++) {
            if (m != agent) {
                c = c * numGenerations + indices[m];
            }
        }
        return c;
    }

    @Override
    public String toString() {
        return configName;
    }

    private static void checkSizes(int numGenerations, int numAgents) {
        if (numGenerations < 1) {
            throw new IllegalArgumentException("num_generations must be >= 1, got " + numGenerations);
        }
        if (numAgents < 1) {
            throw new IllegalArgumentException("num_agents must be >= 1, got " + numAgents);
        }
    }
}
