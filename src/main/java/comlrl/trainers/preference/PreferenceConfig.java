package comlrl.trainers.preference;

import static comlrl.trainers.preference.PreferenceFields.ADVANTAGE_MODE;
import static comlrl.trainers.preference.PreferenceFields.ADVANTAGE_NORMALIZATION;
import static comlrl.trainers.preference.PreferenceFields.AGENT_DEVICES;
import static comlrl.trainers.preference.PreferenceFields.AGENT_LEARNING_RATE;
import static comlrl.trainers.preference.PreferenceFields.COLLABORATION_MODE;
import static comlrl.trainers.preference.PreferenceFields.DISCOUNT;
import static comlrl.trainers.preference.PreferenceFields.DPO_BETA;
import static comlrl.trainers.preference.PreferenceFields.EARLY_TERMINATION_THRESHOLD;
import static comlrl.trainers.preference.PreferenceFields.ENVIRONMENT_STEPS_PER_PAIR;
import static comlrl.trainers.preference.PreferenceFields.EVAL_BATCH_SIZE;
import static comlrl.trainers.preference.PreferenceFields.EVAL_INTERVAL;
import static comlrl.trainers.preference.PreferenceFields.EVAL_NUM_SAMPLES;
import static comlrl.trainers.preference.PreferenceFields.EXTERNAL_PROMPT_PASSTHROUGH;
import static comlrl.trainers.preference.PreferenceFields.GENERATION_KWARGS;
import static comlrl.trainers.preference.PreferenceFields.GRADIENT_CHECKPOINTING;
import static comlrl.trainers.preference.PreferenceFields.JOINT_MODE;
import static comlrl.trainers.preference.PreferenceFields.LOGGING_STEPS;
import static comlrl.trainers.preference.PreferenceFields.MAX_NEW_TOKENS;
import static comlrl.trainers.preference.PreferenceFields.NUM_AGENTS;
import static comlrl.trainers.preference.PreferenceFields.NUM_TRAIN_EPOCHS;
import static comlrl.trainers.preference.PreferenceFields.NUM_TURNS;
import static comlrl.trainers.preference.PreferenceFields.PAIR_SELECTION;
import static comlrl.trainers.preference.PreferenceFields.PARALLEL_TRAINING;
import static comlrl.trainers.preference.PreferenceFields.PREFERENCE_NUM_CANDIDATES;
import static comlrl.trainers.preference.PreferenceFields.PREFERENCE_PAIRS_PER_SAMPLE;
import static comlrl.trainers.preference.PreferenceFields.REFERENCE_DEVICES;
import static comlrl.trainers.preference.PreferenceFields.REFERENCE_KL_COEF;
import static comlrl.trainers.preference.PreferenceFields.REFERENCE_KL_ENABLED;
import static comlrl.trainers.preference.PreferenceFields.ROLLOUT_BUFFER_SIZE;
import static comlrl.trainers.preference.PreferenceFields.SAVE_TOTAL_LIMIT;
import static comlrl.trainers.preference.PreferenceFields.SEED;
import static comlrl.trainers.preference.PreferenceFields.SKIP_NONFINITE_SAMPLES;
import static comlrl.trainers.preference.PreferenceFields.TEMPERATURE;
import static comlrl.trainers.preference.PreferenceFields.TOP_K;
import static comlrl.trainers.preference.PreferenceFields.TOP_P;
import static comlrl.trainers.preference.PreferenceFields.TRAIN_BATCH_SIZE;
import static comlrl.trainers.preference.PreferenceFields.USE_ENVIRONMENT_STEP;

import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.trainers.actorcritic.ConfigField;
import comlrl.utils.CollaborationMode;
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
 * What {@link MADPOConfig} and {@link MARLHFConfig} share: every field of the reference's
 * {@code MADPOConfig} (§7.1; each getter documents its field: snake_case key, default, valid range)
 * and ours, validation at construction, and the snake_case map form. Immutable. The fields are
 * declared once, in {@code PreferenceFields}; a config holds their values by key.
 *
 * <p>Where we differ from the reference: {@code eval_num_samples} must be ≥ 1 (§14 item 11);
 * {@code joint_mode} must be aligned when the config is built (the reference fails later, when
 * generating preference candidates); the learning rate, {@code temperature}, {@code top_p},
 * {@code top_k}, {@code max_new_tokens} and {@code discount} are range-checked here rather than
 * failing later in training.
 */
public abstract sealed class PreferenceConfig permits MADPOConfig, MARLHFConfig {
    private final String configTypeName;
    private final String algorithmName;
    /** This config's fields by key, in field order. */
    private final Map<String, ConfigField<?>> fields;
    /** Value of every field by key, in field order; unset nullable fields hold null. */
    private final Map<String, Object> values;

    PreferenceConfig(Builder<?, ?> b) {
        this.configTypeName = b.configTypeName;
        this.algorithmName = b.algorithmName;
        this.fields = Collections.unmodifiableMap(b.byKey);
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(b.values));
        for (ConfigField<?> field : fields.values()) {
            check(field.problem(values.get(field.key)));
        }
        check(parallelTraining() == ParallelTraining.MP && agentDevices() == null ? "parallel_training=\"mp\" requires "
                + "explicit agent_devices (one device per agent, e.g. [\"cuda:0\", \"cuda:1\"]); set agent_devices or "
                + "use parallel_training=\"none\"" : null);
        int actors = actorCount();
        List<String> references = referenceDevices();
        check(usesReferenceModels() && references != null && references.size() != 1 && references.size() != actors
                ? "reference_devices length (" + references.size() + ") must be " + (actors == 1 ? "1" : "1 or "
                + actors) + " (one frozen reference per actor, or one device for all)" : null);
        check(numTurns() != 1 ? algorithmName + " currently supports num_turns=1 only, got num_turns=" + numTurns()
                + ": a preference pair compares two single-turn joint completions; set num_turns to 1" : null);
        check(jointMode() != JointMode.ALIGNED ? algorithmName + " preference generation currently supports aligned "
                + "joint_mode only, got \"" + jointMode() + "\": joint candidate k is the k-th completion of every "
                + "agent; set joint_mode to \"aligned\"" : null);
        check(!pairSelection().takesLimit() && preferencePairsPerSample() != null ? "preference_pairs_per_sample must "
                + "be null when pair_selection='all', got " + preferencePairsPerSample() + " (its default is 16): "
                + "\"all\" keeps every pair with a reward gap; set preference_pairs_per_sample to null, or use "
                + "pair_selection \"reward_gap\" or \"random\" to keep the first N" : null);
    }

    /** Whether this config loads a frozen reference model per actor (placed by reference_devices). */
    abstract boolean usesReferenceModels();

    final void check(String problem) {
        if (problem != null) {
            throw new IllegalArgumentException(configTypeName + ": " + problem + ".");
        }
    }

    /**
     * The value of the field with {@code field}'s key, or, when unset, of the field this config's
     * declaration of it falls back to (train_batch_size → rollout_buffer_size).
     */
    final <T> T get(ConfigField<T> field) {
        ConfigField<?> own = fields.get(field.key);
        Object value = values.get(field.key);
        if (value == null && own.fallback != null) {
            value = values.get(own.fallback.key);
        }
        return field.cast(value);
    }

    /** The value {@link #toMap()} writes for {@code field}: its resolved value. */
    Object resolved(ConfigField<?> field) {
        return get(field);
    }

    /** The reference's {@code algorithm_name}: "MADPO" or "MARLHF". */
    public String algorithmName() {
        return algorithmName;
    }

    /**
     * {@code num_train_epochs} (default 20, ≥ 1): MADPO's passes over the preference pairs (each
     * epoch shuffles them into batches of {@link #trainBatchSize()}); MARLHF's RL phase passes over
     * the training task items.
     */
    public int numTrainEpochs() {
        return get(NUM_TRAIN_EPOCHS);
    }

    /** {@code agent_learning_rate} (default 5e-6, finite, ≥ 0): AdamW learning rate of every agent. */
    public double agentLearningRate() {
        return get(AGENT_LEARNING_RATE);
    }

    /** {@code logging_steps} (default 50, ≥ 1): minimum env_step gap between training log entries. */
    public int loggingSteps() {
        return get(LOGGING_STEPS);
    }

    /**
     * {@code num_agents} (default 2, ≥ 1): the number of agents; in centralized mode the number of
     * roles that the one actor writes.
     */
    public int numAgents() {
        return get(NUM_AGENTS);
    }

    /**
     * {@code collaboration_mode} (default "decentralized"): one actor per agent, or
     * {@link CollaborationMode#CENTRALIZED}: one actor writes every role's response in one joint
     * completion (reference §7.5).
     */
    public CollaborationMode collaborationMode() {
        return get(COLLABORATION_MODE);
    }

    /** The number of actor models: 1 in centralized mode, else {@link #numAgents()}. */
    public int actorCount() {
        return collaborationMode() == CollaborationMode.CENTRALIZED ? 1 : numAgents();
    }

    /**
     * {@code parallel_training} (default "none"): "none" (or "null"/null) puts every model on one
     * device; "mp" places each agent on its own device ({@code agent_devices} required) and runs
     * per-agent work on threads. "auto", "ddp" and anything else are rejected.
     */
    public ParallelTraining parallelTraining() {
        return get(PARALLEL_TRAINING);
    }

    /**
     * {@code agent_devices} (default null = automatic): a device for all agents ({@code "cuda:0"}),
     * a one-element list (broadcast) or one device per agent. A single string is stored as a
     * one-element list.
     */
    public List<String> agentDevices() {
        return get(AGENT_DEVICES);
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
     * {@code top_k} (default 50, ≥ 0, or null): top-k filtering, 0 disables it; null leaves it out of
     * the generate call, so the model's {@code generation_config.json} value applies, else 50.
     */
    public Integer topK() {
        return get(TOP_K);
    }

    /**
     * {@code num_turns} (default 1): must be 1 — the reference's preference trainers are single-turn
     * ("MADPO currently supports num_turns=1 only").
     */
    public int numTurns() {
        return get(NUM_TURNS);
    }

    /**
     * {@code discount} (default 1.0, in [0, 1]): kept for compatibility with the MAGRPO config; with
     * one turn nothing is discounted (MARLHF passes it to an IAC/MAAC backend).
     */
    public double discount() {
        return get(DISCOUNT);
    }

    /**
     * {@code joint_mode} (default "aligned"): must be aligned — joint candidate k is the k-th
     * completion of every agent, scored once.
     */
    public JointMode jointMode() {
        return get(JOINT_MODE);
    }

    /**
     * {@code early_termination_threshold} (default null = never): kept for compatibility; with one
     * turn there is nothing to terminate early.
     */
    public Double earlyTerminationThreshold() {
        return get(EARLY_TERMINATION_THRESHOLD);
    }

    /**
     * {@code external_prompt_passthrough} (default false): use prompts returned by an external
     * transition verbatim instead of passing them through the agents' formatters.
     */
    public boolean externalPromptPassthrough() {
        return get(EXTERNAL_PROMPT_PASSTHROUGH);
    }

    /**
     * {@code eval_interval} (default 16, ≥ 0): MADPO evaluates before update batch u when
     * {@code u % eval_interval == 0} (u counts DPO updates over all epochs, from 0); MARLHF's RL
     * phase counts training task items as its backend does. 0 = manual evaluation only.
     */
    public int evalInterval() {
        return get(EVAL_INTERVAL);
    }

    /**
     * {@code eval_num_samples} (default 4, ≥ 1): task items per evaluation. The reference also
     * accepted 0 and then evaluated one item anyway (§14 item 11); as in the other configs we require
     * a positive count.
     */
    public int evalNumSamples() {
        return get(EVAL_NUM_SAMPLES);
    }

    /** {@code eval_batch_size} (default 1, ≥ 1): evaluation data-loader batch size. */
    public int evalBatchSize() {
        return get(EVAL_BATCH_SIZE);
    }

    /**
     * {@code rollout_buffer_size} (default 2, ≥ 1): the default of {@link #trainBatchSize()}; MARLHF
     * passes it to its RL backend.
     */
    public int rolloutBufferSize() {
        return get(ROLLOUT_BUFFER_SIZE);
    }

    /**
     * {@code train_batch_size} (default null → {@link #rolloutBufferSize()}, ≥ 1): MADPO's DPO batch
     * size in preference pairs (one optimizer step per agent per batch); MARLHF's RL backend's
     * minibatch size. Returns the resolved value.
     */
    public int trainBatchSize() {
        return get(TRAIN_BATCH_SIZE);
    }

    /**
     * {@code advantage_normalization} (default true): kept for compatibility by MADPO (its loss has
     * no advantages); MARLHF passes it to its RL backend.
     */
    public boolean advantageNormalization() {
        return get(ADVANTAGE_NORMALIZATION);
    }

    /**
     * {@code advantage_mode} (default "mean"): kept for compatibility by MADPO (its loss has no
     * advantages). {@link MARLHFConfig#advantageMode()} resolves it from {@code rl_algorithm}.
     */
    public AdvantageMode advantageMode() {
        return get(ADVANTAGE_MODE);
    }

    /**
     * {@code reference_kl_enabled} (default false): shape rewards with a KL penalty against frozen
     * copies of the initial agents (§2.6). MARLHF's RL phase uses it; MADPO's DPO loss does not (as in
     * the reference, §14 item 7) — for a DPO loss anchored to the initial policy use
     * {@link MADPOConfig#dpoReference()} "frozen_initial".
     */
    public boolean referenceKlEnabled() {
        return get(REFERENCE_KL_ENABLED);
    }

    /** {@code reference_kl_coef} (default 0.1, finite, ≥ 0): β of the reference-KL shaping. */
    public double referenceKlCoef() {
        return get(REFERENCE_KL_COEF);
    }

    /**
     * {@code reference_devices} (default null = the agents' devices): where the frozen references
     * live; same forms as {@link #agentDevices()}, and when references are loaded a list must have 1
     * or {@link #actorCount()} entries.
     */
    public List<String> referenceDevices() {
        return get(REFERENCE_DEVICES);
    }

    /**
     * {@code preference_num_candidates} (default 80, ≥ 2): completions each agent samples per task
     * item when the preference dataset is built (aligned: candidate k of every agent forms joint
     * candidate k, scored once).
     */
    public int preferenceNumCandidates() {
        return get(PREFERENCE_NUM_CANDIDATES);
    }

    /**
     * {@code preference_pairs_per_sample} (default 16, ≥ 1, or null = every pair): at most this many
     * preference pairs per task item; must be null with {@code pair_selection="all"}.
     */
    public Integer preferencePairsPerSample() {
        return get(PREFERENCE_PAIRS_PER_SAMPLE);
    }

    /**
     * {@code pair_selection} (default "reward_gap"): which pairs an item keeps — the largest reward
     * gaps, a random sample, or all ({@link PairSelection}, {@link PreferencePairs}).
     */
    public PairSelection pairSelection() {
        return get(PAIR_SELECTION);
    }

    /**
     * {@code dpo_beta} (default 0.1, finite, &gt; 0): β of MADPO's loss {@code −log σ(β·Σ_j Δ_j)}
     * ({@link MADPOLoss}); MARLHF keeps it for compatibility (it has no DPO loss).
     */
    public double dpoBeta() {
        return get(DPO_BETA);
    }

    /**
     * {@code use_environment_step} (default true): MADPO advances env_step (the x-axis of the
     * training logs) by {@link #environmentStepsPerPair()} per preference pair of each update; false
     * leaves env_step unchanged by DPO updates.
     */
    public boolean useEnvironmentStep() {
        return get(USE_ENVIRONMENT_STEP);
    }

    /** {@code environment_steps_per_pair} (default 2, ≥ 1): env_step increment per trained preference pair. */
    public int environmentStepsPerPair() {
        return get(ENVIRONMENT_STEPS_PER_PAIR);
    }

    /**
     * {@code seed} (default 42): seed of every random stream of a run (sampling, pair shuffles,
     * random pair selection). Not in the reference, which relies on global RNG state.
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
     * {@code skip_nonfinite_samples} (default false): a NaN or infinite reward, log-probability or
     * loss stops training with an error before any optimizer step; true drops such samples (pairs)
     * instead. Not in the reference, whose MADPO replaces a non-finite loss by the constant 0.1.
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
     * The config as snake_case keys in field order, with resolved values (train_batch_size filled
     * in) and enums as their config strings: what a run writes to {@code config.json}.
     * {@code fromMap(toMap())} equals this config.
     */
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        for (ConfigField<?> field : fields.values()) {
            map.put(field.key, field.write(resolved(field)));
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
        return o != null && o.getClass() == getClass() && ((PreferenceConfig) o).toMap().equals(toMap());
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
    public abstract static sealed class Builder<C extends PreferenceConfig, B extends Builder<C, B>>
            permits MADPOConfig.Builder, MARLHFConfig.Builder {
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
            if (!byKey.containsKey(field.key)) {
                throw new IllegalStateException(configTypeName + " has no field " + field.key);
            }
            values.put(field.key, value);
            return self();
        }

        /**
         * Sets every snake_case key of {@code values} (a YAML/JSON section). Unknown keys fail naming
         * the key, with a hint for keys of older versions, of the other preference config or the
         * closest valid key; values are type-checked (numbers may be numeric strings, and null-like
         * strings mean null).
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

        /** Sets one snake_case key, e.g. from {@code --set dpo_beta=0.05} (string values are parsed). */
        public B set(String key, Object value) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put(key, value);
            return apply(one);
        }

        /** See {@link PreferenceConfig#numTrainEpochs()}. */
        public B numTrainEpochs(int numTrainEpochs) {
            return put(NUM_TRAIN_EPOCHS, numTrainEpochs);
        }

        /** See {@link PreferenceConfig#agentLearningRate()}. */
        public B agentLearningRate(double agentLearningRate) {
            return put(AGENT_LEARNING_RATE, agentLearningRate);
        }

        /** See {@link PreferenceConfig#loggingSteps()}. */
        public B loggingSteps(int loggingSteps) {
            return put(LOGGING_STEPS, loggingSteps);
        }

        /** See {@link PreferenceConfig#numAgents()}. */
        public B numAgents(int numAgents) {
            return put(NUM_AGENTS, numAgents);
        }

        /** Null = DECENTRALIZED. See {@link PreferenceConfig#collaborationMode()}. */
        public B collaborationMode(CollaborationMode collaborationMode) {
            return put(COLLABORATION_MODE, collaborationMode == null ? CollaborationMode.DECENTRALIZED
                    : collaborationMode);
        }

        /** "decentralized" or "centralized" (any case). */
        public B collaborationMode(String collaborationMode) {
            return put(COLLABORATION_MODE, CollaborationMode.parse(collaborationMode));
        }

        /** Null = NONE. See {@link PreferenceConfig#parallelTraining()}. */
        public B parallelTraining(ParallelTraining parallelTraining) {
            return put(PARALLEL_TRAINING, parallelTraining == null ? ParallelTraining.NONE : parallelTraining);
        }

        /** "none", "null" or null → NONE; "mp" → MP. */
        public B parallelTraining(String parallelTraining) {
            return put(PARALLEL_TRAINING, ParallelTraining.parse(parallelTraining));
        }

        /** One device per agent, or one to broadcast; null = automatic. */
        public B agentDevices(List<String> agentDevices) {
            return put(AGENT_DEVICES, copy(agentDevices));
        }

        /** The same device for every agent. */
        public B agentDevices(String device) {
            return put(AGENT_DEVICES, device == null ? null : List.of(device));
        }

        /** See {@link PreferenceConfig#maxNewTokens()}. */
        public B maxNewTokens(int maxNewTokens) {
            return put(MAX_NEW_TOKENS, maxNewTokens);
        }

        /** See {@link PreferenceConfig#temperature()}. */
        public B temperature(double temperature) {
            return put(TEMPERATURE, temperature);
        }

        /** See {@link PreferenceConfig#topP()}. */
        public B topP(double topP) {
            return put(TOP_P, topP);
        }

        /** 0 disables top-k; null takes the model's value. See {@link PreferenceConfig#topK()}. */
        public B topK(Integer topK) {
            return put(TOP_K, topK);
        }

        /** Must be 1. See {@link PreferenceConfig#numTurns()}. */
        public B numTurns(int numTurns) {
            return put(NUM_TURNS, numTurns);
        }

        /** See {@link PreferenceConfig#discount()}. */
        public B discount(double discount) {
            return put(DISCOUNT, discount);
        }

        /** Must be ALIGNED; null = ALIGNED. See {@link PreferenceConfig#jointMode()}. */
        public B jointMode(JointMode jointMode) {
            return put(JOINT_MODE, jointMode == null ? JointMode.ALIGNED : jointMode);
        }

        /** "aligned"/"align" or "cross"/"crossed" (the latter rejected when built). */
        public B jointMode(String jointMode) {
            return put(JOINT_MODE, JointMode.parse(jointMode));
        }

        /** Null disables early termination. See {@link PreferenceConfig#earlyTerminationThreshold()}. */
        public B earlyTerminationThreshold(Double earlyTerminationThreshold) {
            return put(EARLY_TERMINATION_THRESHOLD, earlyTerminationThreshold);
        }

        /** See {@link PreferenceConfig#externalPromptPassthrough()}. */
        public B externalPromptPassthrough(boolean externalPromptPassthrough) {
            return put(EXTERNAL_PROMPT_PASSTHROUGH, externalPromptPassthrough);
        }

        /** See {@link PreferenceConfig#evalInterval()}. */
        public B evalInterval(int evalInterval) {
            return put(EVAL_INTERVAL, evalInterval);
        }

        /** See {@link PreferenceConfig#evalNumSamples()}. */
        public B evalNumSamples(int evalNumSamples) {
            return put(EVAL_NUM_SAMPLES, evalNumSamples);
        }

        /** See {@link PreferenceConfig#evalBatchSize()}. */
        public B evalBatchSize(int evalBatchSize) {
            return put(EVAL_BATCH_SIZE, evalBatchSize);
        }

        /** See {@link PreferenceConfig#rolloutBufferSize()}. */
        public B rolloutBufferSize(int rolloutBufferSize) {
            return put(ROLLOUT_BUFFER_SIZE, rolloutBufferSize);
        }

        /** Null = follow rollout_buffer_size. See {@link PreferenceConfig#trainBatchSize()}. */
        public B trainBatchSize(Integer trainBatchSize) {
            return put(TRAIN_BATCH_SIZE, trainBatchSize);
        }

        /** See {@link PreferenceConfig#advantageNormalization()}. */
        public B advantageNormalization(boolean advantageNormalization) {
            return put(ADVANTAGE_NORMALIZATION, advantageNormalization);
        }

        /**
         * Null = this config's default ("mean" for MADPO; for MARLHF "follow rl_algorithm"). See
         * {@link PreferenceConfig#advantageMode()} and {@link MARLHFConfig#advantageMode()}.
         */
        public B advantageMode(AdvantageMode advantageMode) {
            return put(ADVANTAGE_MODE, advantageMode != null ? advantageMode
                    : ADVANTAGE_MODE.cast(byKey.get(ADVANTAGE_MODE.key).defaultValue));
        }

        /** "mean", "raw", "max" or "rloo" (any case); for MARLHF also null (follow rl_algorithm). */
        public B advantageMode(String advantageMode) {
            return set(ADVANTAGE_MODE.key, advantageMode);
        }

        /** See {@link PreferenceConfig#referenceKlEnabled()}. */
        public B referenceKlEnabled(boolean referenceKlEnabled) {
            return put(REFERENCE_KL_ENABLED, referenceKlEnabled);
        }

        /** See {@link PreferenceConfig#referenceKlCoef()}. */
        public B referenceKlCoef(double referenceKlCoef) {
            return put(REFERENCE_KL_COEF, referenceKlCoef);
        }

        /** Null = the agents' devices. See {@link PreferenceConfig#referenceDevices()}. */
        public B referenceDevices(List<String> referenceDevices) {
            return put(REFERENCE_DEVICES, copy(referenceDevices));
        }

        /** The same reference device for every agent. */
        public B referenceDevices(String device) {
            return put(REFERENCE_DEVICES, device == null ? null : List.of(device));
        }

        /** See {@link PreferenceConfig#preferenceNumCandidates()}. */
        public B preferenceNumCandidates(int preferenceNumCandidates) {
            return put(PREFERENCE_NUM_CANDIDATES, preferenceNumCandidates);
        }

        /** Null = every pair. See {@link PreferenceConfig#preferencePairsPerSample()}. */
        public B preferencePairsPerSample(Integer preferencePairsPerSample) {
            return put(PREFERENCE_PAIRS_PER_SAMPLE, preferencePairsPerSample);
        }

        /** Null = REWARD_GAP. See {@link PreferenceConfig#pairSelection()}. */
        public B pairSelection(PairSelection pairSelection) {
            return put(PAIR_SELECTION, pairSelection == null ? PairSelection.REWARD_GAP : pairSelection);
        }

        /** "reward_gap", "all" or "random" (any case); null = "reward_gap". */
        public B pairSelection(String pairSelection) {
            return put(PAIR_SELECTION, PairSelection.parse(pairSelection));
        }

        /** See {@link PreferenceConfig#dpoBeta()}. */
        public B dpoBeta(double dpoBeta) {
            return put(DPO_BETA, dpoBeta);
        }

        /** See {@link PreferenceConfig#useEnvironmentStep()}. */
        public B useEnvironmentStep(boolean useEnvironmentStep) {
            return put(USE_ENVIRONMENT_STEP, useEnvironmentStep);
        }

        /** See {@link PreferenceConfig#environmentStepsPerPair()}. */
        public B environmentStepsPerPair(int environmentStepsPerPair) {
            return put(ENVIRONMENT_STEPS_PER_PAIR, environmentStepsPerPair);
        }

        /** See {@link PreferenceConfig#seed()}. */
        public B seed(long seed) {
            return put(SEED, seed);
        }

        /** See {@link PreferenceConfig#gradientCheckpointing()}. */
        public B gradientCheckpointing(boolean gradientCheckpointing) {
            return put(GRADIENT_CHECKPOINTING, gradientCheckpointing);
        }

        /** Null = {}. See {@link PreferenceConfig#generationKwargs()}. */
        public B generationKwargs(Map<String, ?> generationKwargs) {
            return put(GENERATION_KWARGS, generationKwargs == null ? Map.of()
                    : Collections.unmodifiableMap(new LinkedHashMap<>(generationKwargs)));
        }

        /** See {@link PreferenceConfig#skipNonfiniteSamples()}. */
        public B skipNonfiniteSamples(boolean skip) {
            return put(SKIP_NONFINITE_SAMPLES, skip);
        }

        /** Null keeps every checkpoint. See {@link PreferenceConfig#saveTotalLimit()}. */
        public B saveTotalLimit(Integer saveTotalLimit) {
            return put(SAVE_TOTAL_LIMIT, saveTotalLimit);
        }

        static List<String> copy(List<String> devices) {
            return devices == null ? null : Collections.unmodifiableList(new ArrayList<>(devices));
        }
    }
}
