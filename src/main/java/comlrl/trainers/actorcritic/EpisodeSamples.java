package comlrl.trainers.actorcritic;

import comlrl.data.TaskItem;
import comlrl.generation.Completion;
import comlrl.generation.SeedStream;
import comlrl.rl.ReferenceKl;
import comlrl.rl.Stats;
import comlrl.reward.JointRewarder;
import comlrl.trainers.common.JointRollout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The samples of one task item's episode: the actors' joint rollout ({@link JointRollout}), each turn
 * with the critic's old values, then per agent and generation the numbers of
 * {@link ActorCriticLoss#episode} ({@code r'_t}, {@code y_t}, {@code G_t}, {@code A_t}), in (turn, agent,
 * generation) order.
 */
final class EpisodeSamples {
    private final ActorCriticConfig args;
    private final JointRollout rollout;
    /** Each agent's pad id (given by its owner in the agents split). */
    private final long[] padIds;
    private final Critic critic;
    /** {@code β}: {@code reference_kl_coef} when reference KL is on, else 0. */
    private final double beta;
    /** {@code γ} of the logged returns: γ (discounted, IAC) or 1 (suffix sums, MAAC). */
    private final double returnGamma;

    EpisodeSamples(ActorCriticConfig args, boolean discountedReturns, JointRollout rollout, long[] padIds,
            Critic critic) {
        this.args = args;
        this.rollout = rollout;
        this.padIds = padIds;
        this.critic = critic;
        this.beta = args.referenceKlEnabled() ? args.referenceKlCoef() : 0;
        this.returnGamma = discountedReturns ? args.discount() : 1.0;
    }

    /**
     * One item's rollouts. Per turn every agent samples {@code k} responses with {@code seeds}, the critic
     * records its values, {@code rewarder} scores the turn; multi-turn episodes continue through the
     * external transition until {@code num_turns} or {@link #terminates}.
     */
    List<RolloutSample> collect(TaskItem item, String label, SeedStream seeds, JointRewarder rewarder, int k) {
        return samples(item, rollout.rollout(List.of(rollout.start(item, label)), seeds, k,
                JointRollout.Scoring.perAgent(rewarder), args.numTurns(), this::terminates).get(0), k);
    }

    /** Whether an episode ends after a turn with these rewards: their mean exceeds {@code early_termination_threshold}. */
    boolean terminates(double[][] rewards) {
        Double threshold = args.earlyTerminationThreshold();
        return threshold != null && Stats.mean(Arrays.stream(rewards).flatMapToDouble(Arrays::stream).toArray()) > threshold;
    }

    /** The samples of an episode's scored turns ({@code k} per agent), the critic's old values recorded. */
    List<RolloutSample> samples(TaskItem item, List<JointRollout.Scored<double[][]>> episode, int k) {
        return withTargets(item, episode.stream().map(this::withCritic).toList(), k);
    }

    /**
     * A scored turn with, per agent i and generation g, the response cut at the agent's first pad id,
     * its {@code Σ_t log π(y_t)} of the sampling over the same tokens, its reference KL (0 when shaping
     * is off) and the critic's old value.
     */
    private record Turn(JointRollout.Turn sampled, double[][] rewards, List<List<long[]>> responses,
            double[][] logprobs, double[][] kls, Critic.Values critic) {
    }

    /** The critic's old values of a scored turn (in the agents split every agent's from its owner). */
    private Turn withCritic(JointRollout.Scored<double[][]> scored) {
        int numAgents = args.numAgents();
        JointRollout.Turn turn = scored.turn();
        int k = turn.completions().get(0).size();
        List<List<long[]>> responses = new ArrayList<>();
        double[][] logprobs = new double[numAgents][k];
        for (int i = 0; i < numAgents; i++) {
            List<long[]> ys = new ArrayList<>();
            for (int g = 0; g < k; g++) {
                Completion c = turn.completions().get(i).get(g);
                int len = ReferenceKl.responseLength(c.tokenIds(), padIds[i]);
                ys.add(Arrays.copyOf(c.tokenIds(), len));
                for (int j = 0; j < len; j++) {
                    logprobs[i][g] += c.logprobs()[j];
                }
            }
            responses.add(ys);
        }
        Critic.Values values = critic.values(turn.state().turn(), turn.state().prompts(), turn.promptIds(), responses,
                turn.texts());
        double[][] kls = turn.referenceKls() != null ? turn.referenceKls() : new double[numAgents][k];
        return new Turn(turn, scored.rewards(), responses, logprobs, kls, values);
    }

    /** Samples of an episode with targets {@code y_t}, returns and advantages ({@link ActorCriticLoss#episode}). */
    private List<RolloutSample> withTargets(TaskItem item, List<Turn> turns, int k) {
        int n = turns.size();
        int numAgents = args.numAgents();
        RolloutSample[][][] out = new RolloutSample[n][numAgents][k];
        for (int i = 0; i < numAgents; i++) {
            for (int g = 0; g < k; g++) {
                double[] rewards = new double[n];
                double[] kls = new double[n];
                double[] old = new double[n];
                for (int t = 0; t < n; t++) {
                    rewards[t] = turns.get(t).rewards[i][g];
                    kls[t] = turns.get(t).kls[i][g];
                    old[t] = turns.get(t).critic.values()[i][g];
                }
                var e = ActorCriticLoss.episode(rewards, kls, old, beta, args.discount(), returnGamma);
                for (int t = 0; t < n; t++) {
                    Turn turn = turns.get(t);
                    long[] p = turn.sampled.promptIds().get(i);
                    long[] r = turn.responses.get(i).get(g);
                    long[] full = Arrays.copyOf(p, p.length + r.length);
                    System.arraycopy(r, 0, full, p.length, r.length);
                    double a = e.advantages()[t];
                    List<long[]> joint = turn.critic.jointIds();
                    out[t][i][g] = new RolloutSample(i, turn.sampled.state().prompts().get(i),
                            turn.sampled.texts().get(i).get(g), full, p.length, r.length, turn.logprobs[i][g], old[t],
                            rewards[t], e.returns()[t], a, a, t, kls[t], beta * kls[t], e.targets()[t], g,
                            joint == null ? null : joint.get(g), item);
                }
            }
        }
        return Arrays.stream(out).flatMap(Arrays::stream).flatMap(Arrays::stream).toList();
    }
}
