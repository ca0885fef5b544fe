package comlrl.trainers.actorcritic;

import comlrl.distributed.HeldAgents;
import comlrl.generation.CausalLm;
import comlrl.generation.Scorer;
import comlrl.model.DecoderLm;
import comlrl.model.ValueHead;
import comlrl.tensor.AdamW;
import comlrl.tensor.DType;
import comlrl.tensor.Tensor;
import java.nio.file.Path;
import java.util.List;

/**
 * IAC with {@code use_separate_critic: false}: a value head on each actor's own backbone, stepped by
 * the actor's optimizer. One minibatch update of agent i is one step on
 * <pre>
 *   loss       = actor_loss + value_loss_coef · value_loss
 *   value_loss = (1/|B|) Σ_j max((y_j − V_j)², (y_j − V_clip_j)²),
 *   V_clip_j   = V_old_j + clamp(V_j − V_old_j, −ε, ε)                (ε = value_clip_range; none when null)
 * </pre>
 * with V read at the prompt's last token ({@code critic_type: v}) or the response's ({@code q}) of
 * the actor's own forward pass.
 */
final class ActorValueHeads extends PerAgentCritics {
    private ActorValueHeads(IACConfig config, Actors actors, HeldAgents<ValueHead> heads) {
        super(config, actors, heads, null, "value_head_hidden_dim");
    }

    static ActorValueHeads create(IACConfig c, Actors actors) {
        return new ActorValueHeads(c, actors, drawHeads(actors.lms(), c.valueHeadHiddenDim(), actors.work(), c.seed()));
    }

    @Override
    CausalLm backbone(int i) {
        return actors.lms().get(i);
    }

    @Override
    public ValueHead headOnActor(int agent) {
        return heads.get(agent);
    }

    @Override
    public Losses update(int agent, List<RolloutSample> mb, HeldAgents<AdamW> actorOptimizers) {
        MinibatchSteps steps = actors.steps();
        boolean q = config.criticType().readsResponse();
        DecoderLm actor = actors.lms().get(agent).model();
        ValueHead head = heads.get(agent);
        int n = mb.size();
        double[] sums = steps.minimize(agent, "shared", "the loss (actor_loss + value_loss_coef * value_loss)",
                actorOptimizers.get(agent), mb, 3, mine -> { // a ddp process's share; every sample in one process
                    double[] targets = mine.stream().mapToDouble(RolloutSample::valueTarget).toArray();
                    double[] old = mine.stream().mapToDouble(RolloutSample::oldValue).toArray();
                    double[] adv = mine.stream().mapToDouble(RolloutSample::normalizedAdvantage).toArray();
                    Tensor a = Tensor.ofDoubles(adv, actor.device()).to(DType.F32); // [B] Â
                    double[] parts = new double[3]; // loss, actor_loss, value_loss of this process's rows
                    parts[0] = Scorer.backwardFromPromptEnd(actor, mine.stream().map(RolloutSample::promptIds).toList(),
                            mine.stream().map(RolloutSample::responseIds).toList(), actors.padIds()[agent], true, sc -> {
                                Tensor actorLoss = steps.meanOverMinibatch(sc.sequenceLogprobs().mul(a).neg(), n);
                                long len = sc.hidden().size(1); // Q: the last token, V: the prompt's last
                                long[] pos = mine.stream().mapToLong(s -> q ? len - 1 : len - 1 - s.responseLen())
                                        .toArray();
                                Tensor v = ValueHead.valuesAt(head.forward(sc.hidden()), pos).toFloat(); // [B]
                                Tensor valueLoss = steps.meanOverMinibatch(
                                        ActorCriticLoss.valueErrors(v, targets, old, config.valueClipRange()), n);
                                parts[1] = actorLoss.item();
                                parts[2] = valueLoss.item();
                                return actorLoss.add(valueLoss.mul(config.valueLossCoef()));
                            }, config.gradientCheckpointing());
                    return parts;
                });
        return new Losses(sums[1], sums[2]);
    }

    @Override
    public void requireOutside(Path dir, String what) {
        // no models of its own
    }
}
