package comlrl.trainers.actorcritic;

import comlrl.distributed.HeldAgents;
import comlrl.generation.CausalLm;
import comlrl.generation.CausalLmWithValueHead;
import comlrl.model.ValueHead;
import comlrl.tensor.AdamW;
import comlrl.trainers.common.AgentSet;
import comlrl.checkpoint.TrainerCheckpoint;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * IAC with {@code use_separate_critic: true}: agent i's critic is a model of its own with a value head,
 * fed its actor's token ids, with its own optimizer ({@code critic_learning_rate}). A minibatch update
 * of agent i is {@link MinibatchSteps#actorStep} then {@link MinibatchSteps#criticStep} (no clipping).
 */
final class SeparateCritics extends PerAgentCritics {
    private final AgentSet models; // this process's agents': closed here
    private final HeldAgents<CausalLm> critics;
    private final HeldAgents<AdamW> optimizers;

    private SeparateCritics(IACConfig config, Actors actors, AgentSet models, HeldAgents<CausalLm> critics,
            HeldAgents<ValueHead> heads, HeldAgents<AdamW> optimizers) {
        super(config, actors, heads, "critic", "critic_value_head_hidden_dim");
        this.models = models;
        this.critics = critics;
        this.optimizers = optimizers;
    }

    /** Takes {@code models} (one per agent this process holds), each with a head and an optimizer. */
    static SeparateCritics create(IACConfig c, Actors actors, AgentSet models) {
        HeldAgents<ValueHead> heads = null;
        try {
            HeldAgents<CausalLm> critics = models.held(actors.work());
            critics.indices().forEach(i -> ValueHeads.requireVocabulary("critic " + i, critics.get(i), // reads its actor's ids
                    actors.lms().get(i).tokenizer().vocabSize(), "agent " + i + "'s", "critic_model/critics"));
            HeldAgents<ValueHead> drawn = drawHeads(critics, c.criticValueHeadHiddenDim(), actors.work(), c.seed());
            heads = drawn;
            HeldAgents<AdamW> optimizers = critics.open((i, critic) -> ValueHeads.adamW(actors.work(), critic.model(),
                    drawn.get(i), c.criticLearningRate()));
            return new SeparateCritics(c, actors, models, critics, heads, optimizers);
        } catch (RuntimeException | Error e) {
            if (heads != null) {
                heads.values().forEach(ValueHead::close);
            }
            models.close();
            throw e;
        }
    }

    @Override
    CausalLm backbone(int i) {
        return critics.get(i);
    }

    @Override
    public Losses update(int agent, List<RolloutSample> mb, HeldAgents<AdamW> actorOptimizers) {
        MinibatchSteps steps = actors.steps();
        double actorLoss = steps.actorStep(agent, actors.lms().get(agent), mb, actorOptimizers.get(agent),
                config.gradientCheckpointing());
        boolean q = config.criticType().readsResponse();
        double valueLoss = steps.criticStep(agent, critics.get(agent).model(), heads.get(agent), actors.padIds()[agent],
                RolloutSample::promptIds, s -> q ? s.responseIds() : new long[0], mb, optimizers.get(agent),
                config.valueLossCoef(), config.gradientCheckpointing());
        return new Losses(actorLoss, valueLoss);
    }

    @Override
    public List<CausalLmWithValueHead> views() {
        return critics.mapIndexed((i, critic) -> new CausalLmWithValueHead(critic, heads.get(i))).asList();
    }

    @Override
    public List<TrainerCheckpoint.ShapeGroup> shapes() {
        return List.of(TrainerCheckpoint.ShapeGroup.of("critic_shapes", "critic", critics.map(CausalLm::model)));
    }

    @Override
    public Map<String, TrainerCheckpoint.Part> agentParts(int agent) {
        return Critic.modelParts("_" + agent, "critic " + agent, critics.get(agent), optimizers.get(agent),
                heads.get(agent));
    }

    @Override
    void saveBackbone(int i, Path actorDir) {
        critics.get(i).save(actorDir.resolve("critic"));
    }

    @Override
    public void requireOutside(Path dir, String what) {
        models.requireOutside(dir, what);
    }

    @Override
    public void close() {
        optimizers.values().forEach(AdamW::close);
        super.close();
        models.close();
    }
}
