package comlrl.trainers.actorcritic;

import comlrl.distributed.RankWork;
import comlrl.generation.CausalLm;
import comlrl.tensor.DType;
import comlrl.tensor.Tensor;
import comlrl.tokenizer.Tokenizer;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.trainers.common.TrainerSettings;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The setters and checks of {@link ActorCriticTrainerBase.Builder}, which builds an IAC or MAAC trainer;
 * names follow the reference's constructor keywords ({@code agent_model}, {@code critic_model}, ...).
 */
public abstract sealed class ActorCriticBuilder<T extends ActorCriticTrainerBase>
        extends TrainerBuilder<ActorCriticConfig, ActorCriticTrainerBase.Builder<T>> permits ActorCriticTrainerBase.Builder {
    /** {@code metrics_callback(rollouts)}. */
    public static final TrainerSettings.Key<ActorCriticTrainerBase.MetricsCallback> METRICS_CALLBACK =
            TrainerSettings.key("metrics_callback", null);
    /** {@code model_config.critic_value_head_hidden_dim} (MAAC's critic head; null: the config's). */
    public static final TrainerSettings.Key<Integer> CRITIC_VALUE_HEAD_HIDDEN_DIM =
            TrainerSettings.key("critic_value_head_hidden_dim", null);

    /** Sees what each update uses (tests): its minibatches and, just before each optimizer step, the gradients. */
    interface UpdateObserver {
        void beforeStep(int agent, String which, List<Tensor> parameters);

        default void minibatch(int agent, List<RolloutSample> minibatch) {
        }
    }

    private final Function<ActorCriticTrainerBase.Builder<T>, T> factory;
    UpdateObserver observer;

    ActorCriticBuilder(Function<ActorCriticTrainerBase.Builder<T>, T> factory) {
        this.factory = factory;
    }

    @Override
    protected final ActorCriticTrainerBase.Builder<T> self() {
        return (ActorCriticTrainerBase.Builder<T>) this;
    }

    /** Homogeneous actors: one model id or directory (a loaded {@link CausalLm} for one agent). */
    public ActorCriticTrainerBase.Builder<T> agentModel(Object agentModel) {
        return set(TrainerSettings.AGENT_MODEL, agentModel);
    }

    /** The critic: a model id or directory (IAC: one copy per agent; MAAC: the shared critic). */
    public ActorCriticTrainerBase.Builder<T> criticModel(Object criticModel) {
        return set(TrainerSettings.CRITIC_MODEL, criticModel);
    }

    /** Critics: IAC one per agent; MAAC a one-element list. */
    public ActorCriticTrainerBase.Builder<T> critics(List<?> critics) {
        return set(TrainerSettings.CRITICS, critics);
    }

    /** One tokenizer for every agent (replacing the agents' own). */
    public ActorCriticTrainerBase.Builder<T> tokenizer(Tokenizer tokenizer) {
        return set(TrainerSettings.TOKENIZERS, tokenizer == null ? null : List.of(tokenizer));
    }

    /** One tokenizer per agent. */
    public ActorCriticTrainerBase.Builder<T> tokenizers(List<Tokenizer> tokenizers) {
        return set(TrainerSettings.TOKENIZERS, tokenizers);
    }

    /** {@code metrics_callback(rollouts)}: logged at rollout time in training, averaged under {@code eval/}. */
    public ActorCriticTrainerBase.Builder<T> metricsCallback(ActorCriticTrainerBase.MetricsCallback metricsCallback) {
        return set(METRICS_CALLBACK, metricsCallback);
    }

    /**
     * The reference's {@code model_config}: {@code torch_dtype}/{@code dtype} (top level or in
     * {@code model_kwargs}), and MAAC's {@code critic_value_head_hidden_dim}.
     */
    public ActorCriticTrainerBase.Builder<T> modelConfig(Map<String, ?> modelConfig) {
        if (modelConfig == null) {
            return self();
        }
        Object dt = modelConfig.get("torch_dtype") != null ? modelConfig.get("torch_dtype") : modelConfig.get("dtype");
        if (dt == null && modelConfig.get("model_kwargs") instanceof Map<?, ?> kw) {
            dt = kw.get("torch_dtype") != null ? kw.get("torch_dtype") : kw.get("dtype");
        }
        if (dt != null) {
            dtype(DType.fromTorchName(String.valueOf(dt).replace("torch.", "")));
        }
        Object hd = modelConfig.get("critic_value_head_hidden_dim");
        if (hd instanceof Number num) {
            set(CRITIC_VALUE_HEAD_HIDDEN_DIM, num.intValue());
        } else if (hd != null) {
            throw new IllegalArgumentException("model_config.critic_value_head_hidden_dim must be an integer, got " + hd);
        }
        return self();
    }

    ActorCriticTrainerBase.Builder<T> observer(UpdateObserver observer) {
        this.observer = observer;
        return self();
    }

    public T build() {
        ActorCriticConfig args = args();
        if (args == null) {
            throw new IllegalArgumentException("args must be provided (an IACConfig or MAACConfig)");
        }
        settings().refuse(args.getClass().getSimpleName().replace("Config", ""),
                "evaluation reports the reward and metrics_callback's metrics",
                TrainerSettings.EVAL_LOGGER, TrainerSettings.EVAL_AGGREGATOR);
        return factory.apply(self());
    }

    /** Which models an algorithm builds ({@link ActorCriticSources#iac}, {@link ActorCriticSources#maac}). */
    interface SourceRule<C extends ActorCriticConfig> {
        ActorCriticSources.Sources resolve(C config, Object agentModel, List<?> agents, List<Tokenizer> tokenizers,
                Object criticModel, List<?> critics);
    }

    interface Factory<C extends ActorCriticConfig, T> {
        T make(C config, ActorCriticSources.Sources sources, ActorCriticSources.Placement placement, RankWork work);
    }

    /**
     * The trainer of a {@code type} config ({@code described}: "an IACConfig"): runs the checks that need
     * no model, joins the processes of a ddp run, then {@code make}s the trainer (leaving them on failure).
     */
    <C extends ActorCriticConfig> T create(Class<C> type, String described, String algorithmName,
            SourceRule<C> sources, Factory<C, T> make) {
        if (!type.isInstance(args())) {
            String name = type.getSimpleName();
            throw new IllegalArgumentException("args must be " + described + " (" + name + ".builder()...build() or "
                    + name + ".fromMap(...)), got " + (args() == null ? "null" : args().getClass().getSimpleName()));
        }
        C c = type.cast(args());
        requireCommon(algorithmName, c.numTurns());
        Integer given = get(TrainerSettings.NUM_AGENTS);
        if (given != null && given != c.numAgents()) {
            throw new IllegalArgumentException("num_agents given to the builder (" + given + ") must equal "
                    + "args.num_agents (" + c.numAgents() + "); set it in the config");
        }
        ActorCriticSources.Sources resolved = sources.resolve(c, get(TrainerSettings.AGENT_MODEL),
                get(TrainerSettings.AGENTS), get(TrainerSettings.TOKENIZERS), get(TrainerSettings.CRITIC_MODEL),
                get(TrainerSettings.CRITICS));
        settings().requireTaskData();
        RankWork work = RankWork.forRun(c.parallelTraining(), c.ddpSplit(), c.numAgents(), get(TrainerSettings.DISTRIBUTED));
        try {
            return make.make(c, resolved, ActorCriticSources.place(c, work.device()), work);
        } catch (RuntimeException | Error e) {
            work.close();
            throw e;
        }
    }
}
