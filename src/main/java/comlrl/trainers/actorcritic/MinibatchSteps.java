package comlrl.trainers.actorcritic;

import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.model.ValueHead;
import comlrl.tensor.AdamW;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.trainers.common.TrainerParts;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * The optimizer steps of one minibatch, in one process or across a ddp run ({@link RankWork}). Data
 * split: each process computes the samples {@code j ≡ rank (mod W)} ({@link #local}); a minibatch loss
 * is a sum over its samples, each divided by |B|, so the processes' sums of losses and of gradients are
 * the one-process values. Every step checks that its loss and gradients are finite before it uses them.
 */
final class MinibatchSteps {
    private final RankWork work;
    private final ActorCriticBuilder.UpdateObserver observer;

    MinibatchSteps(RankWork work, ActorCriticBuilder.UpdateObserver observer) {
        this.work = work;
        this.observer = observer;
    }

    /** A minibatch loss's backward pass over this process's samples; returns the loss, then what else it reports. */
    interface LocalLoss {
        double[] backward(List<RolloutSample> mine);
    }

    /**
     * One optimizer step of {@code opt} on a minibatch loss ({@code what}): its backward pass here, its
     * values summed over the processes ({@code size} zeros without samples here), the loss checked, {@link #step}.
     */
    double[] minimize(int agent, String which, String what, AdamW opt, List<RolloutSample> mb, int size, LocalLoss loss) {
        List<RolloutSample> mine = local(mb);
        opt.zeroGrad();
        double[] values;
        try (Scope s = Scope.open()) {
            values = mine.isEmpty() ? new double[size] : loss.backward(mine);
            values = work.splitsRows() ? work.sum(values) : values; // summed over the processes
            if (!Double.isFinite(values[0])) {
                opt.zeroGrad();
                throw nonFinite(what + " is " + values[0] + " for " + describe(mb));
            }
        }
        step(agent, which, opt, mb);
        return values;
    }

    /**
     * The actor's step of {@code agent} on
     * <pre>
     *   actor_loss = (1/|B|) Σ_j −Â_j · log π_j,    log π_j = Σ_t log π(y_{j,t} | x_j, y_{j,&lt;t})
     * </pre>
     * (each completion's Σ_t log π weighted by {@code −Â_j/|B|}); returns actor_loss.
     */
    double actorStep(int agent, CausalLm actor, List<RolloutSample> mb, AdamW opt, boolean checkpointing) {
        int n = mb.size();
        return minimize(agent, "actor", "the actor loss", opt, mb, 1, mine -> new double[] {Scorer.backwardWeighted(
                actor.model(), mine.stream().map(RolloutSample::promptIds).toList(),
                mine.stream().map(RolloutSample::responseIds).toList(), actor.padId(),
                mine.stream().mapToDouble(s -> -s.normalizedAdvantage() / n).toArray(), checkpointing)})[0];
    }

    /**
     * The critic's step of {@code agent}'s minibatch on
     * <pre>
     *   value_loss_coef · value_loss,   value_loss = (1/|B|) Σ_j (y_j − V_j)²     (no clipping)
     *   V_j = head(critic(row_j))[last token],   row_j = prompt(s_j) ⊕ response(s_j)
     * </pre>
     * returns value_loss.
     */
    double criticStep(int agent, DecoderLm critic, ValueHead head, long pad, Function<RolloutSample, long[]> prompt,
            Function<RolloutSample, long[]> response, List<RolloutSample> mb, AdamW opt, double coef,
            boolean checkpointing) {
        int n = mb.size();
        return minimize(agent, "critic", "the critic loss", opt, mb, 1, mine -> {
            double[] targets = mine.stream().mapToDouble(RolloutSample::valueTarget).toArray();
            return new double[] {Scorer.backwardFromPromptEnd(critic, mine.stream().map(prompt).toList(),
                    mine.stream().map(response).toList(), pad, false, sc -> {
                        long len = sc.hidden().size(1);
                        Tensor v = head.forward(sc.hidden()).select(1, len - 1).toFloat(); // [B] at the last token
                        return meanOverMinibatch(ActorCriticLoss.valueErrors(v, targets, null, null), n).mul(coef);
                    }, checkpointing)};
        })[0] / coef;
    }

    /** The samples of {@code mb} this process computes: all, or its share in a ddp run. */
    List<RolloutSample> local(List<RolloutSample> mb) {
        return work.splitsRows() ? Arrays.stream(work.localRows(mb.size())).mapToObj(mb::get).toList() : mb;
    }

    /** {@code (1/n) Σ_rows perRow}: the mean over the whole minibatch of n samples, of which these rows are a share. */
    Tensor meanOverMinibatch(Tensor perRow, int n) {
        return work.splitsRows() ? perRow.sum().div(n) : perRow.mean();
    }

    /** One optimizer step once its gradients are checked to be finite (the tests' observer sees them first). */
    void step(int agent, String which, AdamW opt, List<RolloutSample> mb) {
        if (!TrainerParts.stepIfFinite(work, opt, observer == null ? null
                : () -> observer.beforeStep(agent, which, opt.parameters()))) {
            throw nonFinite("the " + which + " gradient of agent " + agent + " is not finite for " + describe(mb));
        }
    }

    /** Tells the observer of the tests which samples one minibatch update reads. */
    void seen(int agent, List<RolloutSample> minibatch) {
        if (observer != null) {
            observer.minibatch(agent, minibatch);
        }
    }

    /** The error that stops training when a loss or gradient is not finite, before any step uses it. */
    static IllegalStateException nonFinite(String detail) {
        return new IllegalStateException("Training stopped: " + detail + ". No optimizer step used it, so the weights "
                + "and the last checkpoint are intact; check the rewards (and their scale), the learning rates and "
                + "value_loss_coef.");
    }

    static String describe(List<RolloutSample> minibatch) {
        RolloutSample s = minibatch.get(0);
        return minibatch.size() + " samples of agent " + s.agentIdx() + ", turn " + (s.turnIdx() + 1);
    }
}
