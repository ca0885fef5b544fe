package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_LEARNING_RATE;
import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_TYPE;
import static comlrl.trainers.actorcritic.ActorCriticFields.DISCOUNT;
import static comlrl.trainers.actorcritic.ActorCriticFields.NUM_GENERATIONS;
import static comlrl.utils.TrainerFields.ADVANTAGE_NORMALIZATION;
import static comlrl.utils.TrainerFields.CRITIC_DEVICES;
import static comlrl.utils.TrainerFields.CRITIC_VALUE_HEAD_HIDDEN_DIM;
import static comlrl.utils.TrainerFields.DDP_SPLIT;
import static comlrl.utils.TrainerFields.EARLY_TERMINATION_THRESHOLD;
import static comlrl.utils.TrainerFields.EVAL_INTERVAL;
import static comlrl.utils.TrainerFields.LOGGING_STEPS;
import static comlrl.utils.TrainerFields.NUM_AGENTS;
import static comlrl.utils.TrainerFields.NUM_TRAIN_EPOCHS;
import static comlrl.utils.TrainerFields.NUM_TURNS;
import static comlrl.utils.TrainerFields.PARALLEL_TRAINING;
import static comlrl.utils.TrainerFields.REFERENCE_DEVICES;
import static comlrl.utils.TrainerFields.REFERENCE_KL_ENABLED;
import static comlrl.utils.TrainerFields.ROLLOUT_BUFFER_SIZE;
import static comlrl.utils.TrainerFields.TOP_K;
import static comlrl.utils.TrainerFields.TRAIN_BATCH_SIZE;
import static comlrl.utils.TrainerFields.VALUE_LOSS_COEF;

import comlrl.utils.ConfigField;
import comlrl.utils.FieldTableConfig;
import comlrl.utils.ParallelTraining;
import java.util.List;
import java.util.Map;

/**
 * What {@link IACConfig} and {@link MAACConfig} share: the fields of both (each getter documents its
 * field: snake_case key, default, valid range; the getters that mean the same in every trainer
 * config are in {@link FieldTableConfig}) and the cross-field validation. Immutable. The fields are
 * declared once, in {@code ActorCriticFields} or, when the preference configs have them too, in
 * {@link comlrl.utils.TrainerFields}; the value table, its map form and the builder machinery are
 * {@link FieldTableConfig}'s.
 */
public abstract sealed class ActorCriticConfig extends FieldTableConfig permits IACConfig, MAACConfig {

    ActorCriticConfig(Builder<?, ?> b) {
        super(b);
        check(numTurns() > 1 && numGenerations() != 1 ? "Multi-turn " + algorithmName() + " currently supports "
                + "num_generations == 1, got num_generations=" + numGenerations() + " with num_turns=" + numTurns()
                + "; set num_generations to 1, or num_turns to 1 for several samples per prompt" : null);
        check(parallelTraining() == ParallelTraining.DDP && (agentDevices() != null || criticDevices() != null)
                ? "parallel_training=\"ddp\" puts every model of a process on that process's device (cuda:LOCAL_RANK, "
                + "or the cpu); remove agent_devices and critic_devices" : null);
        boolean mp = parallelTraining() == ParallelTraining.MP;
        check(mp && agentDevices() == null ? "parallel_training=\"mp\" requires explicit agent_devices (one device "
                + "per agent, e.g. [\"cuda:0\", \"cuda:1\"]); set agent_devices or use parallel_training=\"none\"" : null);
        check(mp && criticDevices() == null ? missingCriticDevices() : null);
        int n = numAgents();
        List<String> references = referenceDevices();
        check(referenceKlEnabled() && references != null && references.size() != 1 && references.size() != n
                ? "reference_devices length (" + references.size() + ") must be 1 or " + n + " (one frozen reference "
                + "per agent, or one device for all)" : null);
    }

    /**
     * The message when {@code parallel_training="mp"} lacks {@code critic_devices} that this config
     * needs, or null when it needs none.
     */
    abstract String missingCriticDevices();

    /**
     * {@code critic_learning_rate} (default 5e-6, finite, ≥ 0): AdamW learning rate of the critic(s).
     * In {@link IACConfig} it may be null, meaning {@link #agentLearningRate()}; this returns the
     * resolved value. MAAC requires a number.
     */
    public double criticLearningRate() {
        return get(CRITIC_LEARNING_RATE);
    }

    /** {@code rollout_buffer_size} (default 8, ≥ 1): samples collected per agent before its update. */
    public int rolloutBufferSize() {
        return get(ROLLOUT_BUFFER_SIZE);
    }

    /**
     * {@code train_batch_size} (default null → {@link #rolloutBufferSize()}, ≥ 1): samples per
     * minibatch (one optimizer step each) in an update. Returns the resolved value.
     */
    public int trainBatchSize() {
        return get(TRAIN_BATCH_SIZE);
    }

    /**
     * {@code value_loss_coef} (default 0.6, finite, &gt; 0): weight of the critic's loss,
     * {@code value_loss_coef · mean((y − V)²)}.
     */
    public double valueLossCoef() {
        return get(VALUE_LOSS_COEF);
    }

    /**
     * {@code advantage_normalization} (default true): z-normalise the advantages of each update group
     * (one agent, one turn) when it has more than one sample, {@code Â = (A − mean A) / max(std_pop A, 1e-6)}.
     */
    public boolean advantageNormalization() {
        return get(ADVANTAGE_NORMALIZATION);
    }

    /**
     * {@code top_k} (default null, ≥ 0): top-k filtering, 0 disables it. Null leaves it out of the
     * generate call as the reference does, so the model's {@code generation_config.json} value
     * applies, else transformers' default of 50.
     */
    public Integer topK() {
        return get(TOP_K);
    }

    /** {@code num_train_epochs} (default 40, ≥ 1): passes over the training task items. */
    public int numTrainEpochs() {
        return get(NUM_TRAIN_EPOCHS);
    }

    /**
     * {@code critic_type} (default "v"): {@link CriticType#V} values the prompt, {@link CriticType#Q}
     * the prompt with the response. Null or any case of "v"/"q" is accepted.
     */
    public CriticType criticType() {
        return get(CRITIC_TYPE);
    }

    /**
     * {@code critic_value_head_hidden_dim} (default null, ≥ 0): hidden width of the value heads of
     * IAC's separate critics or MAAC's shared critic, {@code Linear(E, d) → Tanh → Linear(d, 1)};
     * null or 0 = one {@code Linear(E, 1)}. For MAAC the reference reads it from
     * {@code model_config["critic_value_head_hidden_dim"]}; the config key is our convenience there.
     */
    public Integer criticValueHeadHiddenDim() {
        return get(CRITIC_VALUE_HEAD_HIDDEN_DIM);
    }

    /** {@code num_agents} (default 2, ≥ 1): the number of actors (the trainer's agent count). */
    public int numAgents() {
        return get(NUM_AGENTS);
    }

    /**
     * {@code num_turns} (default 2, ≥ 1): turns per episode; more than one requires
     * {@code num_generations == 1} here and an external transition in the trainer. The default
     * {@link #earlyTerminationThreshold()} of −0.2 ends an episode after any turn whose mean reward
     * exceeds −0.2.
     */
    public int numTurns() {
        return get(NUM_TURNS);
    }

    /**
     * {@code parallel_training} (default "none"): "none" (or "null"/null) puts every model on one
     * device, the first of {@code agent_devices}, else of {@code critic_devices}, else automatic;
     * "mp" places each model on its own device (agent_devices and critic_devices required) and runs
     * per-agent work on threads; "ddp" trains with several processes, dividing the work as
     * {@link #ddpSplit()} says. "auto" and anything else are rejected.
     */
    public ParallelTraining parallelTraining() {
        return get(PARALLEL_TRAINING);
    }

    /**
     * {@code ddp_split} (default "data"; used with {@code parallel_training: ddp}): "data" — every
     * process holds every model, a minibatch's samples are divided between the processes and the
     * gradients summed before each step; "agents" — agent i's actor (IAC: with its critic or value
     * head) lives on process i mod W only, which samples, values and updates it, and the completions,
     * log-probabilities and values are exchanged; MAAC's shared critic is on every process, each
     * taking the same critic steps. Either way the run trains as one process does with the same seed.
     */
    public comlrl.utils.DdpSplit ddpSplit() {
        return get(DDP_SPLIT);
    }

    /**
     * {@code critic_devices} (default null): where the critics live, same forms as
     * {@link #agentDevices()}; unset, each critic sits with its actor (IAC) or with agent 0 (MAAC).
     */
    public List<String> criticDevices() {
        return get(CRITIC_DEVICES);
    }

    /**
     * {@code discount} (in [0, 1]; default 0.9 for IAC, 1.0 for MAAC): γ of the multi-turn TD
     * targets {@code y_t = r'_t + γ·V_old(h_{t+1})} (the last turn's target is {@code r'}).
     */
    public double discount() {
        return get(DISCOUNT);
    }

    /** {@code num_generations} (default 1, ≥ 1): samples per agent per prompt (G). */
    public int numGenerations() {
        return get(NUM_GENERATIONS);
    }

    /**
     * {@code eval_interval} (default 16, ≥ 0): evaluate before training item b of each epoch when
     * {@code b % eval_interval == 0}; 0 = manual evaluation only.
     */
    public int evalInterval() {
        return get(EVAL_INTERVAL);
    }

    /**
     * {@code early_termination_threshold} (default −0.2, or null = never): in multi-turn training an
     * episode stops after a turn whose mean reward is greater than this.
     */
    public Double earlyTerminationThreshold() {
        return get(EARLY_TERMINATION_THRESHOLD);
    }

    /** {@code logging_steps} (default 1, ≥ 1): minimum env_step gap between training log entries. */
    public int loggingSteps() {
        return get(LOGGING_STEPS);
    }

    /**
     * {@code reference_kl_enabled} (default false): shape each sample's reward with a KL penalty
     * against a frozen copy of its initial actor, {@code r' = r − β·KL}.
     */
    public boolean referenceKlEnabled() {
        return get(REFERENCE_KL_ENABLED);
    }

    /**
     * {@code reference_devices} (default null = the actors' devices): where the frozen references
     * live; same forms as {@link #agentDevices()}, and with reference KL on a list must have 1 or
     * {@code num_agents} entries.
     */
    public List<String> referenceDevices() {
        return get(REFERENCE_DEVICES);
    }

    /**
     * Builds a config of type {@code C}; the setters take Java values, {@link #apply(Map)} and
     * {@link #set(String, Object)} snake_case config keys. {@link #build()} validates.
     *
     * @param <C> the config built
     * @param <B> the builder's own type, so that chained setters keep it
     */
    public abstract static sealed class Builder<C extends ActorCriticConfig, B extends Builder<C, B>>
            extends FieldTableConfig.Builder<C, B> permits IACConfig.Builder, MAACConfig.Builder {
        Builder(String configTypeName, String algorithmName, List<ConfigField<?>> fields, Map<String, String> hints) {
            super(configTypeName, algorithmName, fields, hints);
        }

        /** See {@link ActorCriticConfig#valueLossCoef()}. */
        public B valueLossCoef(double valueLossCoef) {
            return put(VALUE_LOSS_COEF, valueLossCoef);
        }

        /** Null = V. See {@link ActorCriticConfig#criticType()}. */
        public B criticType(CriticType criticType) {
            return put(CRITIC_TYPE, criticType == null ? CriticType.V : criticType);
        }

        /** "v" or "q" (any case); null = "v". */
        public B criticType(String criticType) {
            return put(CRITIC_TYPE, CriticType.parse(criticType));
        }

        /** Null or 0 = one linear layer. See {@link ActorCriticConfig#criticValueHeadHiddenDim()}. */
        public B criticValueHeadHiddenDim(Integer hiddenDim) {
            return put(CRITIC_VALUE_HEAD_HIDDEN_DIM, hiddenDim);
        }

        /** One device per critic (IAC) or the shared critic's device (MAAC); null = with the actors. */
        public B criticDevices(List<String> criticDevices) {
            return put(CRITIC_DEVICES, copy(criticDevices));
        }

        /** The same device for every critic. */
        public B criticDevices(String device) {
            return put(CRITIC_DEVICES, device == null ? null : List.of(device));
        }

        /** See {@link ActorCriticConfig#discount()}. */
        public B discount(double discount) {
            return put(DISCOUNT, discount);
        }

        /** See {@link ActorCriticConfig#numGenerations()}. */
        public B numGenerations(int numGenerations) {
            return put(NUM_GENERATIONS, numGenerations);
        }
    }
}
