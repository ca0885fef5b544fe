package comlrl.trainers.reinforce;

import comlrl.data.TaskItem;
import comlrl.trainers.common.TrainerSettings;
import comlrl.utils.Formatter;
import comlrl.utils.Formatters;
import java.nio.file.Path;
import java.util.List;

/**
 * Centralized MAGRPO (reference §3.7): one actor model writes every role's response in a single
 * joint completion. It is MAGRPO with one agent whose
 * <ul>
 *   <li>prompt is {@code adapter.buildPrompt(item, [formatter_0(item), …, formatter_{N−1}(item)])};</li>
 *   <li>reward is the task reward of the role outputs {@code adapter.parseCompletion(joint, item, N)}
 *       (all roles {@code ""} when the completion cannot be parsed), scored as N agents' joint response;</li>
 *   <li>loss is MAGRPO's for one agent: {@code (1/G) Σ_k −A_k · log π(y_k | x)}, every token of the
 *       joint completion including its end-of-sequence token, padding never;</li>
 *   <li>env_step advances by one per joint sample (G per task item); {@code max_new_tokens} is the
 *       budget of the whole joint completion; checkpoints and {@link #saveModel(Path)} hold {@code agent_0} only.</li>
 * </ul>
 * Evaluation splits each joint completion into roles before the {@code eval_logger}, which therefore
 * sees N "agents" as with decentralized training. Metrics keep MAGRPO's keys ({@code agent_0} is the actor).
 * The builder is MAGRPO's with the roles' settings; {@link Builder#build()} turns them into the actor's
 * with {@link Centralization} (the wrapper the preference trainers use too), every other setting
 * (LoRA, trackers, processes, ...) passing through whole.
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

    /**
     * The role outputs of one joint completion: {@code adapter.parseCompletion(...)}, or N empty
     * strings when the adapter throws ({@link Centralization#splitRoles}).
     *
     * @throws IllegalStateException when the adapter returns null or not exactly N outputs
     */
    public static List<String> splitRoles(CentralizedAdapter adapter, String completion, TaskItem item, int numRoles) {
        // a centralization that only splits completions (its role formatters are never called)
        return new Centralization(adapter, Formatters.build((Formatter) x -> "", numRoles), numRoles)
                .splitRoles(completion, item);
    }

    /**
     * Builds a {@link CentralizedMAGRPOTrainer}; the names follow the reference's keywords. Here
     * {@code numAgents} is the number of roles, {@code formatters} are the roles' formatters,
     * {@code rewardFunc} is the task reward over the roles' outputs and {@code evalLogger} receives
     * role outputs; {@link #build()} derives the single actor's settings from them
     * ({@link Centralization#actorSettings}). Every check that needs no model runs before the actor
     * loads. The agents ({@code agentModel}, {@code agents}) are the one actor; {@code args} must be a
     * {@link CentralizedMAGRPOConfig}; an {@code externalTransition} fails the build (single-turn).
     */
    public static final class Builder extends ReinforceBuilder<Builder> {
        private Builder() {
        }

        @Override
        protected Builder self() {
            return this;
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
            if (!(args instanceof CentralizedMAGRPOConfig)) {
                throw new IllegalArgumentException("CentralizedMAGRPOTrainer requires a CentralizedMAGRPOConfig "
                        + "(num_turns 1, collaboration_mode \"centralized\"), got a " + args.algorithm().configTypeName()
                        + "; build one with CentralizedMAGRPOConfig.builder()");
            }
            if (settings().keys().contains(Centralization.ADAPTER) && get(Centralization.ADAPTER) == null) {
                throw new IllegalArgumentException("centralized_adapter must be provided: a CentralizedAdapter with "
                        + "buildPrompt(item, agentPrompts) and parseCompletion(completion, item, numAgents)");
            }
            if (rewardFunc() == null) {
                throw new IllegalArgumentException("reward_func must be provided (a RewardFunction)");
            }
            if (externalTransition() != null) {
                throw new IllegalArgumentException("Centralized MAGRPO is single-turn (num_turns=1): remove the "
                        + "external_transition");
            }
            int roles = numAgents() != null ? numAgents() : args.numAgents();
            if (roles != args.numAgents()) {
                throw new IllegalArgumentException("num_agents (" + roles + ") is the number of roles and must equal "
                        + "args.num_agents (" + args.numAgents() + ")");
            }
            if ((evalLogger() == null) != (evalAggregator() == null)) {
                throw new IllegalArgumentException("eval_logger and eval_aggregator must be given together");
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
