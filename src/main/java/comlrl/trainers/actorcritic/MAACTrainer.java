package comlrl.trainers.actorcritic;

import comlrl.distributed.RankWork;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Multi-Agent Actor-Critic (reference §5.6): decentralised actors and one centralised critic
 * ({@link CentralCritic}) of the joint input ({@link #criticInput}). Agent i's target is built from its
 * own shaped reward and the joint value ({@link ActorCriticLoss}); logged returns are suffix sums; agents
 * are updated one after the other. The loop is {@link ActorCriticTrainerBase}'s; {@code turn_t/explained_variance}
 * is over every sample of the agents updated together (per agent under {@code agent_i/}).
 */
public final class MAACTrainer extends ActorCriticTrainerBase {
    /** The reference's algorithm name. */
    public static final String ALGORITHM_NAME = "MAAC";

    public static Builder<MAACTrainer> builder() {
        return new Builder<>(b -> b.create(MAACConfig.class, "a MAACConfig", ALGORITHM_NAME, ActorCriticSources::maac,
                (c, sources, placement, work) -> new MAACTrainer(b, c, sources, placement, work)));
    }

    private MAACTrainer(Builder<MAACTrainer> b, MAACConfig c, ActorCriticSources.Sources sources,
            ActorCriticSources.Placement placement, RankWork work) {
        super(b, c, new Algorithm(ALGORITHM_NAME, false, false), sources, placement, work, actors ->
                CentralCritic.create(c, actors, Critic.loadModels(b, c.seed(), sources.critics(), placement.critics(),
                        actors, i -> true), // on every process
                        Optional.ofNullable(b.get(Builder.CRITIC_VALUE_HEAD_HIDDEN_DIM))
                                .orElse(c.criticValueHeadHiddenDim())));
    }

    /**
     * The critic's input text (reference {@code _build_critic_input}), with the joint action for a Q critic:
     * <pre>
     *   V:  "[Agent 0] p_0\n\n[Agent 1] p_1 ..."
     *   Q:  the same + "\n\n[Joint Action]\n\n[Agent 0 action]\nc_0\n\n[Agent 1 action]\nc_1 ..."
     * </pre>
     */
    public static String criticInput(List<String> prompts, List<String> actions) {
        String text = IntStream.range(0, prompts.size()).mapToObj(i -> "[Agent " + i + "] " + prompts.get(i))
                .collect(Collectors.joining("\n\n"));
        return actions == null ? text : text + "\n\n[Joint Action]" + IntStream.range(0, actions.size())
                .mapToObj(i -> "\n\n[Agent " + i + " action]\n" + actions.get(i)).collect(Collectors.joining());
    }
}
