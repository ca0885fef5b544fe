package comlrl.rl;

/**
 * The env_step counter, the x-axis of every training log: the number of joint-action reward
 * evaluations so far (reference §2.5). MAGRPO advances it by K at every rollout-tree node
 * (aligned: G; cross: G^N; one agent: G), so a single-turn run ends at |D|·G·epochs. Evaluation never
 * advances it. Not thread-safe; one per trainer.
 */
public final class EnvSteps {
    private long current;

    /** A counter at 0. */
    public EnvSteps() {
        this(0);
    }

    /** A counter resumed at {@code start} (from a checkpoint). */
    public EnvSteps(long start) {
        if (start < 0) {
            throw new IllegalArgumentException("env_step cannot be negative, got " + start);
        }
        this.current = start;
    }

    /** The current env_step. */
    public long current() {
        return current;
    }

    /** Adds {@code jointActions} (≥ 0) reward evaluations and returns the new env_step. */
    public long advance(int jointActions) {
        if (jointActions < 0) {
            throw new IllegalArgumentException("cannot advance env_step by a negative count: " + jointActions);
        }
        current += jointActions;
        return current;
    }

    /** Advances by K = {@code mode.numJointActions(G, N)} for one MAGRPO node; returns the new env_step. */
    public long advanceNode(JointMode mode, int numGenerations, int numAgents) {
        return advance(mode.numJointActions(numGenerations, numAgents));
    }
}
