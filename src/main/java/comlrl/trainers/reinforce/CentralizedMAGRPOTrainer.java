package comlrl.trainers.reinforce;

import comlrl.data.TaskItem;
import comlrl.trainers.common.TrainerSettings;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * Centralized MAGRPO (reference §3.7): MAGRPO with one agent, the actor, writing every role's response
 * in a single joint completion ({@link Centralization}). The loss is MAGRPO's over every token of it;
 * env_step advances by one per joint sample; {@code max_new_tokens} is the whole joint completion's
 * budget; checkpoints, {@link #saveModel(Path)} and the metrics hold {@code agent_0}, the actor.
 *
 * <pre>{@code
 * try (CentralizedMAGRPOTrainer trainer = CentralizedMAGRPOTrainer.builder()
 *         .centralizedAdapter(adapter).numAgents(2).agentModel("Qwen/Qwen2.5-0.5B")
 *         .formatters(List.of(brief, detailed)).rewardFunc(new LengthRatioReward())
 *         .trainDataset(train).args(CentralizedMAGRPOConfig.builder().numAgents(2).build()).build()) {
 *     trainer.train();
 * }
 * }</pre>
 */
public final class CentralizedMAGRPOTrainer extends ReinforceTrainer {
    /** The reference's {@code algorithm_name}. */
    public static final String ALGORITHM_NAME = "CentralizedMAGRPO";

    private final Centralization centralization;

    private CentralizedMAGRPOTrainer(ReinforceBuilder<?> actor, Centralization centralization) {
        super(actor, ALGORITHM_NAME);
        this.centralization = centralization;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** N, the number of roles the actor plays (the config's {@code num_agents}). */
    public int numRoles() {
        return centralization.roles();
    }

    public CentralizedAdapter adapter() {
        return centralization.adapter();
    }

    /** The role outputs of one joint completion ({@link Centralization#splitRoles}). */
    public static List<String> splitRoles(CentralizedAdapter adapter, String completion, TaskItem item, int numRoles) {
        return Centralization.splitRoles(adapter, completion, item, numRoles);
    }

    /**
     * Builds the trainer from the roles' settings ({@code numAgents}, {@code formatters}, the task
     * {@code rewardFunc}, an {@code evalLogger} of role outputs) and the one actor ({@code agentModel} /
     * {@code agents}); {@code args} must be a {@link CentralizedMAGRPOConfig}; no {@code externalTransition}.
     */
    public static final class Builder extends ReinforceBuilder<Builder> {
        private Builder() {
        }

        /** {@code centralized_adapter}: joint prompt and role parsing (default {@link TaggedCentralizedAdapter}). */
        public Builder centralizedAdapter(CentralizedAdapter adapter) {
            return set(Centralization.ADAPTER, adapter);
        }

        @Override
        public CentralizedMAGRPOTrainer build() {
            MAGRPOConfig args = args();
            if (args == null) {
                throw new IllegalArgumentException("args (a CentralizedMAGRPOConfig) must be provided");
            }
            requireConfig(CentralizedMAGRPOConfig.class, ReinforceAlgorithm.CENTRALIZED_MAGRPO);
            if (settings().keys().contains(Centralization.ADAPTER) && get(Centralization.ADAPTER) == null) {
                throw new IllegalArgumentException("centralized_adapter must be provided: a CentralizedAdapter with "
                        + "buildPrompt(item, agentPrompts) and parseCompletion(completion, item, numAgents)");
            }
            if (get(TrainerSettings.REWARD_FUNC) == null) {
                throw new IllegalArgumentException("reward_func must be provided (a RewardFunction)");
            }
            if (get(TrainerSettings.EXTERNAL_TRANSITION) != null) {
                throw new IllegalArgumentException("Centralized MAGRPO is single-turn (num_turns=1): remove the "
                        + "external_transition");
            }
            int roles = Objects.requireNonNullElse(get(TrainerSettings.NUM_AGENTS), args.numAgents());
            if (roles != args.numAgents()) {
                throw new IllegalArgumentException("num_agents (" + roles + ") is the number of roles and must equal "
                        + "args.num_agents (" + args.numAgents() + ")");
            }
            refuseCritics();
            Centralization centralization = Centralization.of(settings(), roles);
            TrainerSettings given = settings();
            settings(centralization.actorSettings(given)); // the actor's settings, for the constructor only
            try {
                return new CentralizedMAGRPOTrainer(this, centralization);
            } finally {
                settings(given);
            }
        }
    }
}
