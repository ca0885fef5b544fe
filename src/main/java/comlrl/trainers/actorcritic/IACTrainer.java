package comlrl.trainers.actorcritic;

import comlrl.distributed.RankWork;

/**
 * Independent Actor-Critic (reference §5.5): every agent learns its own value function, on a separate
 * critic model ({@code use_separate_critic: true}, {@link SeparateCritics}) or in a value head on its
 * actor (false, {@link ActorValueHeads}). Targets use the agent's own shaped rewards and old values;
 * logged returns are discounted ({@link ActorCriticLoss}). The loop is {@link ActorCriticTrainerBase}'s.
 *
 * <pre>{@code
 * try (IACTrainer trainer = IACTrainer.builder().agentModel("builtin:tiny").criticModel("builtin:tiny")
 *         .rewardFunc(reward).trainDataset(train).args(IACConfig.builder().numAgents(2).numTurns(1).build())
 *         .build()) {
 *     trainer.train();
 *     trainer.saveModel(Path.of("out"));
 * }
 * }</pre>
 */
public final class IACTrainer extends ActorCriticTrainerBase {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "IAC";

    public static Builder<IACTrainer> builder() {
        return new Builder<>(b -> b.create(IACConfig.class, "an IACConfig", ALGORITHM_NAME, (c, agentModel, agents,
                tokenizers, criticModel, critics) -> {
            if (!c.useSeparateCritic() && b.settings().criticLoraAgents() != null) {
                throw new IllegalArgumentException("critic_lora makes separate critics LoRA critics, but "
                        + "use_separate_critic is false (the value head sits on each actor); set use_separate_critic: "
                        + "true or remove critic_lora");
            }
            return ActorCriticSources.iac(c, agentModel, agents, tokenizers, criticModel, critics);
        }, (c, sources, placement, work) -> new IACTrainer(b, c, sources, placement, work)));
    }

    private IACTrainer(Builder<IACTrainer> b, IACConfig c, ActorCriticSources.Sources sources,
            ActorCriticSources.Placement placement, RankWork work) {
        super(b, c, new Algorithm(ALGORITHM_NAME, true, true), sources, placement, work, actors -> c.useSeparateCritic()
                ? SeparateCritics.create(c, actors, Critic.loadModels(b, c.seed(), sources.critics(), placement.critics(),
                        actors, work::ownsAgent))
                : ActorValueHeads.create(c, actors));
    }
}
