package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ActorCriticFields.ADVANTAGE_NORMALIZATION;
import static comlrl.trainers.actorcritic.ActorCriticFields.AGENT_DEVICES;
import static comlrl.trainers.actorcritic.ActorCriticFields.AGENT_LEARNING_RATE;
import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_DEVICES;
import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_LEARNING_RATE;
import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_TYPE;
import static comlrl.trainers.actorcritic.ActorCriticFields.CRITIC_VALUE_HEAD_HIDDEN_DIM;
import static comlrl.trainers.actorcritic.ActorCriticFields.DISCOUNT;
import static comlrl.trainers.actorcritic.ActorCriticFields.EARLY_TERMINATION_THRESHOLD;
import static comlrl.trainers.actorcritic.ActorCriticFields.EVAL_BATCH_SIZE;
import static comlrl.trainers.actorcritic.ActorCriticFields.EVAL_INTERVAL;
import static comlrl.trainers.actorcritic.ActorCriticFields.EVAL_NUM_SAMPLES;
import static comlrl.trainers.actorcritic.ActorCriticFields.EXTERNAL_PROMPT_PASSTHROUGH;
import static comlrl.trainers.actorcritic.ActorCriticFields.GENERATION_KWARGS;
import static comlrl.trainers.actorcritic.ActorCriticFields.GRADIENT_CHECKPOINTING;
import static comlrl.trainers.actorcritic.ActorCriticFields.LOGGING_STEPS;
import static comlrl.trainers.actorcritic.ActorCriticFields.MAX_NEW_TOKENS;
import static comlrl.trainers.actorcritic.ActorCriticFields.NUM_AGENTS;
import static comlrl.trainers.actorcritic.ActorCriticFields.NUM_GENERATIONS;
import static comlrl.trainers.actorcritic.ActorCriticFields.NUM_TRAIN_EPOCHS;
import static comlrl.trainers.actorcritic.ActorCriticFields.NUM_TURNS;
import static comlrl.trainers.actorcritic.ActorCriticFields.PARALLEL_TRAINING;
import static comlrl.trainers.actorcritic.ActorCriticFields.REFERENCE_DEVICES;
import static comlrl.trainers.actorcritic.ActorCriticFields.REFERENCE_KL_COEF;
import static comlrl.trainers.actorcritic.ActorCriticFields.REFERENCE_KL_ENABLED;
import static comlrl.trainers.actorcritic.ActorCriticFields.ROLLOUT_BUFFER_SIZE;
import static comlrl.trainers.actorcritic.ActorCriticFields.SAVE_TOTAL_LIMIT;
import static comlrl.trainers.actorcritic.ActorCriticFields.SEED;
import static comlrl.trainers.actorcritic.ActorCriticFields.SKIP_NONFINITE_SAMPLES;
import static comlrl.trainers.actorcritic.ActorCriticFields.TEMPERATURE;
import static comlrl.trainers.actorcritic.ActorCriticFields.TOP_K;
import static comlrl.trainers.actorcritic.ActorCriticFields.TOP_P;
import static comlrl.trainers.actorcritic.ActorCriticFields.TRAIN_BATCH_SIZE;

import comlrl.utils.ConfigMaps;
import comlrl.utils.ParallelTraining;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What {@link IACConfig} and {@link MAACConfig} share: the fields of both (each getter documents its
 * field: snake_case key, default, valid range), validation at construction, and the snake_case map
 * form. Immutable. The fields are declared once, in {@code ActorCriticFields}; a config holds their
 * values by key.
 */
public abstract sealed class ActorCriticConfig permits IACConfig, MAACConfig {
    private final String configTypeName;
    private final String algorithmName;
    /** This config's fields by key, in field order. */
    private final Map<String, ConfigField<?>> fields;
    /** Value of every field by key, in field order; unset nullable fields hold null. */
    private final Map<String, Object> values;

    ActorCriticConfig(Builder<?, ?> b) {
        this.configTypeName = b.configTypeName;
        this.algorithmName = b.algorithmName;
        this.fields = Collections.unmodifiableMap(b.byKey);
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(b.values));
        for (ConfigField<?> field : fields.values()) {
            check(field.problem(values.get(field.key)));
        }
        check(numTurns() > 1 && numGenerations() != 1 ? "Multi-turn " + algorithmName + " currently supports "
                + "num_generations == 1, got num_generations=" + numGenerations() + " with num_turns=" + numTurns()
                + "; set num_generations to 1, or num_turns to 1 for several samples per prompt" : null);
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

    private void check(String problem) {
        if (problem != null) {
            throw new IllegalArgumentException(configTypeName + ": " + problem + ".");
        }
    }

    /**
     * The value of the field with {@code field}'s key, or, when unset, of the field this config's
     * declaration of it falls back to (IAC's critic_learning_rate does, MAAC's does not).
     */
    <T> T get(ConfigField<T> field) {
        ConfigField<?> own = fields.get(field.key);
        Object value = values.get(field.key);
        if (value == null && own.fallback != null) {
            value = values.get(own.fallback.key);
        }
        return field.cast(value);
    }

    /** The reference's {@code algorithm_name}: "IAC" or "MAAC". */
    public String algorithmName() {
        return algorithmName;
    }

    /** {@code agent_learning_rate} (default 5e-6, finite, ≥ 0): AdamW learning rate of every actor. */
    public double agentLearningRate() {
        return get(AGENT_LEARNING_RATE);
    }

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
        return get(ActorCriticFields.VALUE_LOSS_COEF);
    }

    /**
     * {@code advantage_normalization} (default true): z-normalise the advantages of each update group
     * (one agent, one turn) when it has more than one sample, {@code Â = (A − mean A) / max(std_pop A, 1e-6)}.
     */
    public boolean advantageNormalization() {
        return get(ADVANTAGE_NORMALIZATION);
    }

    /** {@code max_new_tokens} (default 256, ≥ 1): generation length cap per completion. */
    public int maxNewTokens() {
        return get(MAX_NEW_TOKENS);
    }

    /** {@code temperature} (default 0.6, finite, &gt; 0): sampling temperature. */
    public double temperature() {
        return get(TEMPERATURE);
    }

    /** {@code top_p} (default 0.6, in (0, 1]): nucleus-sampling probability mass. */
    public double topP() {
        return get(TOP_P);
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
     * per-agent work on threads. "auto", "ddp" and anything else are rejected.
     */
    public ParallelTraining parallelTraining() {
        return get(PARALLEL_TRAINING);
    }

    /**
     * {@code agent_devices} (default null = automatic): a device for all actors ({@code "cuda:0"}),
     * a one-element list (broadcast) or one device per actor. A single string is stored as a
     * one-element list.
     */
    public List<String> agentDevices() {
        return get(AGENT_DEVICES);
    }

    /**
     * {@code critic_devices} (default null): where the critics live, same forms as
     * {@link #agentDevices()}; unset, each critic sits with its actor (IAC) or with agent 0 (MAAC).
     */
    public List<String> criticDevices() {
        return get(CRITIC_DEVICES);
    }

    /**
     * {@code external_prompt_passthrough} (default false): use the prompts returned by the external
     * transition verbatim instead of passing them through the agents' formatters.
     */
    public boolean externalPromptPassthrough() {
        return get(EXTERNAL_PROMPT_PASSTHROUGH);
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
     * {@code eval_num_samples} (default 4, ≥ 1): task items per evaluation. The reference also
     * accepted 0 and then evaluated one item anyway (§14 item 11); as in MAGRPOConfig we require a
     * positive count.
     */
    public int evalNumSamples() {
        return get(EVAL_NUM_SAMPLES);
    }

    /** {@code eval_batch_size} (default 1, ≥ 1): evaluation data-loader batch size. */
    public int evalBatchSize() {
        return get(EVAL_BATCH_SIZE);
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

    /** {@code reference_kl_coef} (default 0.1, finite, ≥ 0): β of the reference-KL shaping. */
    public double referenceKlCoef() {
        return get(REFERENCE_KL_COEF);
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
     * {@code seed} (default 42): seed of every random stream of a run (sampling, shuffling). Not in
     * the reference, which relies on global RNG state.
     */
    public long seed() {
        return get(SEED);
    }

    /**
     * {@code gradient_checkpointing} (default false): recompute each layer in the backward pass
     * instead of keeping its activations (same gradients, one extra forward). Not in the reference.
     */
    public boolean gradientCheckpointing() {
        return get(GRADIENT_CHECKPOINTING);
    }

    /**
     * {@code generation_kwargs} (default {}): further settings of transformers' {@code generate}
     * ({@code repetition_penalty}, {@code min_p}, ...), as in MAGRPOConfig; a setting not given comes
     * from the model's generation config, then transformers' default; a null value switches it off.
     * {@code temperature}, {@code top_p} and {@code top_k} are fields of their own.
     */
    public Map<String, Object> generationKwargs() {
        return get(GENERATION_KWARGS);
    }

    /**
     * {@code skip_nonfinite_samples} (default false): a NaN or infinite reward, target or loss stops
     * training with an error before any optimizer step; true drops such samples from the update
     * instead. Not in the reference, which raises FloatingPointError on a non-finite loss.
     */
    public boolean skipNonfiniteSamples() {
        return get(SKIP_NONFINITE_SAMPLES);
    }

    /**
     * {@code save_total_limit} (default null = keep every checkpoint, ≥ 1): keep only the newest N
     * {@code checkpoint-*} directories. Not in the reference.
     */
    public Integer saveTotalLimit() {
        return get(SAVE_TOTAL_LIMIT);
    }

    /**
     * The config as snake_case keys in field order, with resolved values (train_batch_size, and
     * IAC's critic_learning_rate, filled in) and enums as their config strings: what a run writes to
     * {@code config.json}. {@code fromMap(toMap())} equals this config.
     */
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        for (ConfigField<?> field : fields.values()) {
            map.put(field.key, field.write(get(field)));
        }
        return Collections.unmodifiableMap(map);
    }

    static List<String> keysOf(List<ConfigField<?>> fields) {
        List<String> keys = new ArrayList<>();
        for (ConfigField<?> field : fields) {
            keys.add(field.key);
        }
        return Collections.unmodifiableList(keys);
    }

    /** Copies this config's values, unresolved (an unset train_batch_size stays unset), into {@code b}. */
    void copyInto(Builder<?, ?> b) {
        b.values.putAll(values);
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && ((ActorCriticConfig) o).toMap().equals(toMap());
    }

    @Override
    public int hashCode() {
        return 31 * getClass().hashCode() + toMap().hashCode();
    }

    @Override
    public String toString() {
        return configTypeName + toMap();
    }

    /**
     * Builds a config of type {@code C}; the setters take Java values, {@link #apply(Map)} and
     * {@link #set(String, Object)} snake_case config keys. {@link #build()} validates.
     *
     * @param <C> the config built
     * @param <B> the builder's own type, so that chained setters keep it
     */
    public abstract static sealed class Builder<C extends ActorCriticConfig, B extends Builder<C, B>>
            permits IACConfig.Builder, MAACConfig.Builder {
        final String configTypeName;
        final String algorithmName;
        final Map<String, ConfigField<?>> byKey = new LinkedHashMap<>();
        private final Map<String, String> hints;
        final Map<String, Object> values = new LinkedHashMap<>();

        Builder(String configTypeName, String algorithmName, List<ConfigField<?>> fields, Map<String, String> hints) {
            this.configTypeName = configTypeName;
            this.algorithmName = algorithmName;
            this.hints = hints;
            for (ConfigField<?> field : fields) {
                byKey.put(field.key, field);
                values.put(field.key, field.defaultValue);
            }
        }

        abstract B self();

        /** Validates and builds; fails with a message naming the field and how to fix it. */
        public abstract C build();

        /** Sets {@code field} (which this config must have) to {@code value}. */
        <T> B put(ConfigField<T> field, T value) {
            if (byKey.get(field.key) == null) {
                throw new IllegalStateException(configTypeName + " has no field " + field.key);
            }
            values.put(field.key, value);
            return self();
        }

        /**
         * Sets every snake_case key of {@code values} (a YAML/JSON section). Unknown keys fail naming
         * the key, with a hint for keys of older versions or the closest valid key; values are
         * type-checked (numbers may be numeric strings, and null-like strings mean null).
         */
        public B apply(Map<String, ?> values) {
            Objects.requireNonNull(values, "values");
            Map<String, Object> map = ConfigMaps.stringKeys(configTypeName, values);
            ConfigMaps.requireKnownKeys(configTypeName, map, new LinkedHashSet<>(byKey.keySet()), hints);
            for (Map.Entry<String, Object> entry : map.entrySet()) {
                ConfigField<?> field = byKey.get(entry.getKey());
                this.values.put(field.key, field.read(configTypeName, entry.getValue()));
            }
            return self();
        }

        /** Sets one snake_case key, e.g. from {@code --set discount=0.95} (string values are parsed). */
        public B set(String key, Object value) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put(key, value);
            return apply(one);
        }

        /** See {@link ActorCriticConfig#agentLearningRate()}. */
        public B agentLearningRate(double agentLearningRate) {
            return put(AGENT_LEARNING_RATE, agentLearningRate);
        }

        /** See {@link ActorCriticConfig#rolloutBufferSize()}. */
        public B rolloutBufferSize(int rolloutBufferSize) {
            return put(ROLLOUT_BUFFER_SIZE, rolloutBufferSize);
        }

        /** Null = follow rollout_buffer_size. See {@link ActorCriticConfig#trainBatchSize()}. */
        public B trainBatchSize(Integer trainBatchSize) {
            return put(TRAIN_BATCH_SIZE, trainBatchSize);
        }

        /** See {@link ActorCriticConfig#valueLossCoef()}. */
        public B valueLossCoef(double valueLossCoef) {
            return put(ActorCriticFields.VALUE_LOSS_COEF, valueLossCoef);
        }

        /** See {@link ActorCriticConfig#advantageNormalization()}. */
        public B advantageNormalization(boolean advantageNormalization) {
            return put(ADVANTAGE_NORMALIZATION, advantageNormalization);
        }

        /** See {@link ActorCriticConfig#maxNewTokens()}. */
        public B maxNewTokens(int maxNewTokens) {
            return put(MAX_NEW_TOKENS, maxNewTokens);
        }

        /** See {@link ActorCriticConfig#temperature()}. */
        public B temperature(double temperature) {
            return put(TEMPERATURE, temperature);
        }

        /** See {@link ActorCriticConfig#topP()}. */
        public B topP(double topP) {
            return put(TOP_P, topP);
        }

        /** 0 disables top-k; null takes the model's value. See {@link ActorCriticConfig#topK()}. */
        public B topK(Integer topK) {
            return put(TOP_K, topK);
        }

        /** See {@link ActorCriticConfig#numTrainEpochs()}. */
        public B numTrainEpochs(int numTrainEpochs) {
            return put(NUM_TRAIN_EPOCHS, numTrainEpochs);
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

        /** See {@link ActorCriticConfig#numAgents()}. */
        public B numAgents(int numAgents) {
            return put(NUM_AGENTS, numAgents);
        }

        /** See {@link ActorCriticConfig#numTurns()}. */
        public B numTurns(int numTurns) {
            return put(NUM_TURNS, numTurns);
        }

        /** Null = NONE. See {@link ActorCriticConfig#parallelTraining()}. */
        public B parallelTraining(ParallelTraining parallelTraining) {
            return put(PARALLEL_TRAINING, parallelTraining == null ? ParallelTraining.NONE : parallelTraining);
        }

        /** "none", "null" or null → NONE; "mp" → MP. */
        public B parallelTraining(String parallelTraining) {
            return put(PARALLEL_TRAINING, ParallelTraining.parse(parallelTraining));
        }

        /** One device per actor, or one to broadcast; null = automatic. */
        public B agentDevices(List<String> agentDevices) {
            return put(AGENT_DEVICES, copy(agentDevices));
        }

        /** The same device for every actor. */
        public B agentDevices(String device) {
            return put(AGENT_DEVICES, device == null ? null : List.of(device));
        }

        /** One device per critic (IAC) or the shared critic's device (MAAC); null = with the actors. */
        public B criticDevices(List<String> criticDevices) {
            return put(CRITIC_DEVICES, copy(criticDevices));
        }

        /** The same device for every critic. */
        public B criticDevices(String device) {
            return put(CRITIC_DEVICES, device == null ? null : List.of(device));
        }

        /** See {@link ActorCriticConfig#externalPromptPassthrough()}. */
        public B externalPromptPassthrough(boolean externalPromptPassthrough) {
            return put(EXTERNAL_PROMPT_PASSTHROUGH, externalPromptPassthrough);
        }

        /** See {@link ActorCriticConfig#discount()}. */
        public B discount(double discount) {
            return put(DISCOUNT, discount);
        }

        /** See {@link ActorCriticConfig#numGenerations()}. */
        public B numGenerations(int numGenerations) {
            return put(NUM_GENERATIONS, numGenerations);
        }

        /** See {@link ActorCriticConfig#evalInterval()}. */
        public B evalInterval(int evalInterval) {
            return put(EVAL_INTERVAL, evalInterval);
        }

        /** See {@link ActorCriticConfig#evalNumSamples()}. */
        public B evalNumSamples(int evalNumSamples) {
            return put(EVAL_NUM_SAMPLES, evalNumSamples);
        }

        /** See {@link ActorCriticConfig#evalBatchSize()}. */
        public B evalBatchSize(int evalBatchSize) {
            return put(EVAL_BATCH_SIZE, evalBatchSize);
        }

        /** Null disables early termination. See {@link ActorCriticConfig#earlyTerminationThreshold()}. */
        public B earlyTerminationThreshold(Double earlyTerminationThreshold) {
            return put(EARLY_TERMINATION_THRESHOLD, earlyTerminationThreshold);
        }

        /** See {@link ActorCriticConfig#loggingSteps()}. */
        public B loggingSteps(int loggingSteps) {
            return put(LOGGING_STEPS, loggingSteps);
        }

        /** See {@link ActorCriticConfig#referenceKlEnabled()}. */
        public B referenceKlEnabled(boolean referenceKlEnabled) {
            return put(REFERENCE_KL_ENABLED, referenceKlEnabled);
        }

        /** See {@link ActorCriticConfig#referenceKlCoef()}. */
        public B referenceKlCoef(double referenceKlCoef) {
            return put(REFERENCE_KL_COEF, referenceKlCoef);
        }

        /** Null = the actors' devices. See {@link ActorCriticConfig#referenceDevices()}. */
        public B referenceDevices(List<String> referenceDevices) {
            return put(REFERENCE_DEVICES, copy(referenceDevices));
        }

        /** The same reference device for every actor. */
        public B referenceDevices(String device) {
            return put(REFERENCE_DEVICES, device == null ? null : List.of(device));
        }

        /** See {@link ActorCriticConfig#seed()}. */
        public B seed(long seed) {
            return put(SEED, seed);
        }

        /** See {@link ActorCriticConfig#gradientCheckpointing()}. */
        public B gradientCheckpointing(boolean gradientCheckpointing) {
            return put(GRADIENT_CHECKPOINTING, gradientCheckpointing);
        }

        /** Null = {}. See {@link ActorCriticConfig#generationKwargs()}. */
        public B generationKwargs(Map<String, ?> generationKwargs) {
            return put(GENERATION_KWARGS, generationKwargs == null ? Map.of()
                    : Collections.unmodifiableMap(new LinkedHashMap<>(generationKwargs)));
        }

        /** See {@link ActorCriticConfig#skipNonfiniteSamples()}. */
        public B skipNonfiniteSamples(boolean skip) {
            return put(SKIP_NONFINITE_SAMPLES, skip);
        }

        /** Null keeps every checkpoint. See {@link ActorCriticConfig#saveTotalLimit()}. */
        public B saveTotalLimit(Integer saveTotalLimit) {
            return put(SAVE_TOTAL_LIMIT, saveTotalLimit);
        }

        private static List<String> copy(List<String> devices) {
            return devices == null ? null : Collections.unmodifiableList(new ArrayList<>(devices));
        }
    }
}
