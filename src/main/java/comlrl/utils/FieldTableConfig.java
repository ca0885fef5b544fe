package comlrl.utils;

import static comlrl.utils.TrainerFields.ADVANTAGE_NORMALIZATION;
import static comlrl.utils.TrainerFields.AGENT_DEVICES;
import static comlrl.utils.TrainerFields.AGENT_LEARNING_RATE;
import static comlrl.utils.TrainerFields.EARLY_TERMINATION_THRESHOLD;
import static comlrl.utils.TrainerFields.EVAL_BATCH_SIZE;
import static comlrl.utils.TrainerFields.EVAL_INTERVAL;
import static comlrl.utils.TrainerFields.EVAL_NUM_SAMPLES;
import static comlrl.utils.TrainerFields.EXTERNAL_PROMPT_PASSTHROUGH;
import static comlrl.utils.TrainerFields.GENERATION_KWARGS;
import static comlrl.utils.TrainerFields.GRADIENT_CHECKPOINTING;
import static comlrl.utils.TrainerFields.LOGGING_STEPS;
import static comlrl.utils.TrainerFields.MAX_NEW_TOKENS;
import static comlrl.utils.TrainerFields.NUM_AGENTS;
import static comlrl.utils.TrainerFields.NUM_TRAIN_EPOCHS;
import static comlrl.utils.TrainerFields.NUM_TURNS;
import static comlrl.utils.TrainerFields.PARALLEL_TRAINING;
import static comlrl.utils.TrainerFields.REFERENCE_DEVICES;
import static comlrl.utils.TrainerFields.REFERENCE_KL_COEF;
import static comlrl.utils.TrainerFields.REFERENCE_KL_ENABLED;
import static comlrl.utils.TrainerFields.ROLLOUT_BUFFER_SIZE;
import static comlrl.utils.TrainerFields.SAVE_TOTAL_LIMIT;
import static comlrl.utils.TrainerFields.SEED;
import static comlrl.utils.TrainerFields.SKIP_NONFINITE_SAMPLES;
import static comlrl.utils.TrainerFields.TEMPERATURE;
import static comlrl.utils.TrainerFields.TOP_K;
import static comlrl.utils.TrainerFields.TOP_P;
import static comlrl.utils.TrainerFields.TRAIN_BATCH_SIZE;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A trainer config that holds its values by key in a table of {@link ConfigField}s: every trainer
 * config (the MA-REINFORCE family, the actor-critic and the preference configs). The fields' range rules are checked at construction; {@link #toMap()}
 * is the snake_case map form (what a run writes to {@code config.json}); equality, hash and
 * {@code toString} follow it. Immutable.
 *
 * <p>Every such config has the {@link TrainerFields} whose builder setters live here and whose
 * getters are {@link TrainerConfig}'s; a config documents a getter of its own where the field is
 * its own.
 *
 * <p>Where every such config differs from the reference: {@code eval_num_samples} must be ≥ 1 (§14
 * item 11), and each field's range (learning rates, sampling settings, {@code max_new_tokens},
 * {@code discount}, …) is checked when the config is built rather than failing later in training.
 */
public abstract class FieldTableConfig implements TrainerConfig {
    private final String configTypeName;
    private final String algorithmName;
    /** This config's fields by key, in field order. */
    private final Map<String, ConfigField<?>> fields;
    /** Value of every field by key, in field order; unset nullable fields hold null. */
    private final Map<String, Object> values;

    /** Takes {@code b}'s values and checks each field's rule; subclasses then check across fields. */
    protected FieldTableConfig(Builder<?, ?> b) {
        this.configTypeName = b.configTypeName;
        this.algorithmName = b.algorithmName;
        this.fields = Collections.unmodifiableMap(b.byKey);
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(b.values));
        for (ConfigField<?> field : fields.values()) {
            check(field.problem(values.get(field.key)));
        }
        for (ConfigField<?> field : fields.values()) {
            if (values.get(field.key) instanceof PerAgent<?> perAgent && perAgent.isList()) {
                check(perAgentProblem(field.key, perAgent));
            }
        }
    }

    /**
     * What is wrong with a per-agent list: it needs one entry per agent ({@code num_agents}), and a
     * centralized actor ({@code collaboration_mode: centralized}) writes every role's response in one
     * completion, so it takes one value.
     */
    private String perAgentProblem(String key, PerAgent<?> perAgent) {
        if (has(TrainerFields.COLLABORATION_MODE) && get(TrainerFields.COLLABORATION_MODE) == CollaborationMode.CENTRALIZED) {
            return key + " must be one value with collaboration_mode: centralized (one actor writes every role's "
                    + "response in one completion), got the per-agent list " + perAgent;
        }
        int numAgents = has(NUM_AGENTS) ? get(NUM_AGENTS) : perAgent.values().size();
        if (perAgent.values().size() != numAgents) {
            return key + " is a list of " + perAgent.values().size() + " values " + perAgent + " but num_agents is "
                    + numAgents + ": give one value per agent, or one value for every agent";
        }
        return null;
    }

    /**
     * The placement rules of {@code agent_devices} under {@code parallel_training}, and of
     * {@code critic_devices} where {@code critics} (the actor-critic configs): ddp places every model
     * itself, mp needs one device per agent.
     */
    protected final void checkAgentPlacement(boolean critics) {
        check(parallelTraining() == ParallelTraining.DDP && (agentDevices() != null || critics
                && get(TrainerFields.CRITIC_DEVICES) != null) ? "parallel_training=\"ddp\" puts every model of a "
                + "process on that process's device (cuda:LOCAL_RANK, or the cpu); remove agent_devices" + (critics
                ? " and critic_devices" : " (got " + agentDevices() + ")") : null);
        check(parallelTraining() == ParallelTraining.MP && agentDevices() == null ? "parallel_training=\"mp\" requires "
                + "explicit agent_devices (one device per agent, e.g. [\"cuda:0\", \"cuda:1\"]); set agent_devices or "
                + "use parallel_training=\"none\"" : null);
    }

    /**
     * The rule of {@code reference_devices} where this config loads {@code models} frozen references
     * ({@code loaded}): one device for all, or one per model ({@code per} names a model in the message).
     */
    protected final void checkReferenceDevices(boolean loaded, int models, String per) {
        List<String> references = referenceDevices();
        check(loaded && references != null && references.size() != 1 && references.size() != models
                ? "reference_devices length (" + references.size() + ") must be " + (models == 1 ? "1" : "1 or "
                + models) + " (one frozen reference per " + per + ", or one device for all)" : null);
    }

    /** Fails with "{@code <ConfigType>: <problem>.}" when {@code problem} is not null. */
    protected final void check(String problem) {
        if (problem != null) {
            throw new IllegalArgumentException(configTypeName + ": " + problem + ".");
        }
    }

    /**
     * The value of the field with {@code field}'s key, or, when unset, of the field this config's
     * declaration of it falls back to (train_batch_size → rollout_buffer_size; IAC's
     * critic_learning_rate → agent_learning_rate).
     */
    @Override
    public final <T> T get(ConfigField<T> field) {
        ConfigField<?> own = fields.get(field.key);
        if (own == null) {
            throw new IllegalStateException(configTypeName + " has no field " + field.key);
        }
        Object value = values.get(field.key);
        if (value == null && own.fallback != null) {
            value = values.get(own.fallback.key);
        }
        return field.cast(value);
    }

    /** The value {@link #toMap()} writes for {@code field}: its resolved value. */
    protected Object resolved(ConfigField<?> field) {
        return get(field);
    }

    @Override
    public final boolean has(ConfigField<?> field) {
        return fields.containsKey(field.key);
    }

    @Override
    public final List<ConfigField<?>> fields() {
        return List.copyOf(fields.values());
    }

    @Override
    public final String configTypeName() {
        return configTypeName;
    }

    @Override
    public String algorithmName() {
        return algorithmName;
    }

    @Override
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        for (ConfigField<?> field : fields.values()) {
            map.put(field.key, field.write(resolved(field)));
        }
        return Collections.unmodifiableMap(map);
    }

    /**
     * This config's {@link #toMap()} values of those of {@code keys} it has and that are set (not
     * null), in {@code keys}' order, leaving out {@code except}: the fields a trainer passes on to
     * the config of a trainer it runs as a stage.
     */
    public Map<String, Object> valuesOf(java.util.Collection<String> keys, java.util.Set<String> except) {
        Map<String, Object> all = toMap();
        Map<String, Object> out = new LinkedHashMap<>();
        for (String k : keys) {
            if (!except.contains(k) && all.get(k) != null) {
                out.put(k, all.get(k));
            }
        }
        return out;
    }

    /** The keys of {@code fields}, in order (what each config's {@code keys()} returns). */
    protected static List<String> keysOf(List<ConfigField<?>> fields) {
        List<String> keys = new ArrayList<>();
        for (ConfigField<?> field : fields) {
            keys.add(field.key);
        }
        return Collections.unmodifiableList(keys);
    }

    /** Copies this config's values, unresolved (an unset train_batch_size stays unset), into {@code b}; returns {@code b}. */
    protected final <B extends Builder<?, ?>> B copyInto(B b) {
        b.values.putAll(values);
        return b;
    }

    @Override
    public boolean equals(Object o) {
        return o != null && o.getClass() == getClass() && ((TrainerConfig) o).toMap().equals(toMap());
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
     * {@link #set(String, Object)} snake_case config keys. {@link #build()} validates. The setters
     * here are those of the {@link TrainerFields} every such config has; each setter's config getter
     * (same name) documents its field.
     *
     * @param <C> the config built
     * @param <B> the builder's own type, so that chained setters keep it
     */
    public abstract static class Builder<C extends TrainerConfig, B extends Builder<C, B>> {
        final String configTypeName;
        final String algorithmName;
        final Map<String, ConfigField<?>> byKey = new LinkedHashMap<>();
        private final Map<String, String> hints;
        final Map<String, Object> values = new LinkedHashMap<>();

        /**
         * A builder holding {@code fields}' defaults; {@code hints} advise on unknown keys (keys of
         * older versions or of other configs).
         */
        protected Builder(String configTypeName, String algorithmName, List<ConfigField<?>> fields,
                          Map<String, String> hints) {
            this.configTypeName = configTypeName;
            this.algorithmName = algorithmName;
            this.hints = hints;
            for (ConfigField<?> field : fields) {
                byKey.put(field.key, field);
                values.put(field.key, field.defaultValue);
            }
        }

        /** This builder as its concrete type {@code B} (what {@code B extends Builder<C, B>} promises). */
        @SuppressWarnings("unchecked")
        protected B self() {
            return (B) this;
        }

        /** Validates and builds; fails with a message naming the field and how to fix it. */
        public abstract C build();

        /** Sets {@code field} (which this config must have) to {@code value}. */
        protected final <T> B put(ConfigField<T> field, T value) {
            if (!byKey.containsKey(field.key)) {
                throw new IllegalStateException(configTypeName + " has no field " + field.key);
            }
            values.put(field.key, value);
            return self();
        }

        /** The default of this config's field with {@code field}'s key. */
        protected final <T> T defaultOf(ConfigField<T> field) {
            return field.cast(byKey.get(field.key).defaultValue);
        }

        /**
         * Sets every snake_case key of {@code values} (a YAML/JSON section). Unknown keys fail naming
         * the key, with a hint for keys of older versions, of a sibling config or the closest valid
         * key; values are type-checked (numbers may be numeric strings, and null-like strings mean
         * null).
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

        /** See {@link FieldTableConfig#agentLearningRate()}. */
        public B agentLearningRate(double agentLearningRate) {
            return put(AGENT_LEARNING_RATE, agentLearningRate);
        }

        /** See the config's {@code numTrainEpochs()}. */
        public B numTrainEpochs(int numTrainEpochs) {
            return put(NUM_TRAIN_EPOCHS, numTrainEpochs);
        }

        /** See the config's {@code loggingSteps()}. */
        public B loggingSteps(int loggingSteps) {
            return put(LOGGING_STEPS, loggingSteps);
        }

        /** See the config's {@code numAgents()}. */
        public B numAgents(int numAgents) {
            return put(NUM_AGENTS, numAgents);
        }

        /** Null = NONE. See the config's {@code parallelTraining()}. */
        public B parallelTraining(ParallelTraining parallelTraining) {
            return put(PARALLEL_TRAINING, parallelTraining == null ? ParallelTraining.NONE : parallelTraining);
        }

        /** "none", "null" or null → NONE; "mp" → MP. */
        public B parallelTraining(String parallelTraining) {
            return put(PARALLEL_TRAINING, ParallelTraining.parse(parallelTraining));
        }

        /**
         * Null = "data". See the config's {@code ddpSplit()} (IAC, MAAC, MADPO and MARLHF; the
         * iterative configs have no such field).
         */
        public B ddpSplit(DdpSplit split) {
            return put(TrainerFields.DDP_SPLIT, split == null ? DdpSplit.DATA : split);
        }

        /** "data" or "agents"; see {@link #ddpSplit(DdpSplit)}. */
        public B ddpSplit(String split) {
            return put(TrainerFields.DDP_SPLIT, DdpSplit.parse(split));
        }

        /** One device per actor, or one to broadcast; null = automatic. */
        public B agentDevices(List<String> agentDevices) {
            return put(AGENT_DEVICES, copy(agentDevices));
        }

        /** The same device for every actor. */
        public B agentDevices(String device) {
            return put(AGENT_DEVICES, device == null ? null : List.of(device));
        }

        /** The same max_new_tokens for every agent. See {@link FieldTableConfig#maxNewTokens()}. */
        public B maxNewTokens(int maxNewTokens) {
            return put(MAX_NEW_TOKENS, PerAgent.all(maxNewTokens));
        }

        /** Agent i's max_new_tokens at index i (one per agent). See {@link FieldTableConfig#maxNewTokens(int)}. */
        public B maxNewTokensPerAgent(List<Integer> maxNewTokens) {
            return put(MAX_NEW_TOKENS, PerAgent.each(maxNewTokens));
        }

        /** The same temperature for every agent. See {@link FieldTableConfig#temperature()}. */
        public B temperature(double temperature) {
            return put(TEMPERATURE, PerAgent.all(temperature));
        }

        /** Agent i's temperature at index i (one per agent). See {@link FieldTableConfig#temperature(int)}. */
        public B temperaturePerAgent(List<Double> temperature) {
            return put(TEMPERATURE, PerAgent.each(temperature));
        }

        /** The same top_p for every agent. See {@link FieldTableConfig#topP()}. */
        public B topP(double topP) {
            return put(TOP_P, PerAgent.all(topP));
        }

        /** Agent i's top_p at index i (one per agent). See {@link FieldTableConfig#topP(int)}. */
        public B topPPerAgent(List<Double> topP) {
            return put(TOP_P, PerAgent.each(topP));
        }

        /** The same top_k for every agent; 0 disables top-k; null takes the model's value. See the config's {@code topK()}. */
        public B topK(Integer topK) {
            return put(TOP_K, PerAgent.all(topK));
        }

        /** Agent i's top_k at index i (one per agent; null entries take the model's value). See {@code topK(int)}. */
        public B topKPerAgent(List<Integer> topK) {
            return put(TOP_K, PerAgent.each(topK));
        }

        /** The same stop strings for every agent (null: the model's). See {@link TrainerConfig#stopStrings(int)}. */
        public B stopStrings(List<String> stopStrings) {
            return put(TrainerFields.STOP_STRINGS, PerAgent.all(stopStrings));
        }

        /** Agent i's stop strings at index i (one list per agent; null entries: the model's). */
        public B stopStringsPerAgent(List<List<String>> stopStrings) {
            return put(TrainerFields.STOP_STRINGS, PerAgent.each(stopStrings));
        }

        /** See the config's {@code numTurns()}. */
        public B numTurns(int numTurns) {
            return put(NUM_TURNS, numTurns);
        }

        /** Null disables early termination. See the config's {@code earlyTerminationThreshold()}. */
        public B earlyTerminationThreshold(Double earlyTerminationThreshold) {
            return put(EARLY_TERMINATION_THRESHOLD, earlyTerminationThreshold);
        }

        /** See {@link FieldTableConfig#externalPromptPassthrough()}. */
        public B externalPromptPassthrough(boolean externalPromptPassthrough) {
            return put(EXTERNAL_PROMPT_PASSTHROUGH, externalPromptPassthrough);
        }

        /** See the config's {@code evalInterval()}. */
        public B evalInterval(int evalInterval) {
            return put(EVAL_INTERVAL, evalInterval);
        }

        /** See {@link FieldTableConfig#evalNumSamples()}. */
        public B evalNumSamples(int evalNumSamples) {
            return put(EVAL_NUM_SAMPLES, evalNumSamples);
        }

        /** See {@link FieldTableConfig#evalBatchSize()}. */
        public B evalBatchSize(int evalBatchSize) {
            return put(EVAL_BATCH_SIZE, evalBatchSize);
        }

        /** See the config's {@code rolloutBufferSize()}. */
        public B rolloutBufferSize(int rolloutBufferSize) {
            return put(ROLLOUT_BUFFER_SIZE, rolloutBufferSize);
        }

        /** Null = follow rollout_buffer_size. See the config's {@code trainBatchSize()}. */
        public B trainBatchSize(Integer trainBatchSize) {
            return put(TRAIN_BATCH_SIZE, trainBatchSize);
        }

        /** See the config's {@code advantageNormalization()}. */
        public B advantageNormalization(boolean advantageNormalization) {
            return put(ADVANTAGE_NORMALIZATION, advantageNormalization);
        }

        /** See the config's {@code referenceKlEnabled()}. */
        public B referenceKlEnabled(boolean referenceKlEnabled) {
            return put(REFERENCE_KL_ENABLED, referenceKlEnabled);
        }

        /** See {@link FieldTableConfig#referenceKlCoef()}. */
        public B referenceKlCoef(double referenceKlCoef) {
            return put(REFERENCE_KL_COEF, referenceKlCoef);
        }

        /** Null = the actors' devices. See the config's {@code referenceDevices()}. */
        public B referenceDevices(List<String> referenceDevices) {
            return put(REFERENCE_DEVICES, copy(referenceDevices));
        }

        /** The same reference device for every actor. */
        public B referenceDevices(String device) {
            return put(REFERENCE_DEVICES, device == null ? null : List.of(device));
        }

        /** See {@link FieldTableConfig#seed()}. */
        public B seed(long seed) {
            return put(SEED, seed);
        }

        /** See {@link FieldTableConfig#gradientCheckpointing()}. */
        public B gradientCheckpointing(boolean gradientCheckpointing) {
            return put(GRADIENT_CHECKPOINTING, gradientCheckpointing);
        }

        /** Null = {}. See {@link FieldTableConfig#generationKwargs()}. */
        public B generationKwargs(Map<String, ?> generationKwargs) {
            return put(GENERATION_KWARGS, generationKwargs == null ? Map.of()
                    : Collections.unmodifiableMap(new LinkedHashMap<>(generationKwargs)));
        }

        /** See {@link FieldTableConfig#skipNonfiniteSamples()}. */
        public B skipNonfiniteSamples(boolean skip) {
            return put(SKIP_NONFINITE_SAMPLES, skip);
        }

        /** Null keeps every checkpoint. See {@link FieldTableConfig#saveTotalLimit()}. */
        public B saveTotalLimit(Integer saveTotalLimit) {
            return put(SAVE_TOTAL_LIMIT, saveTotalLimit);
        }

        /** An unmodifiable copy of a device list (null stays null). */
        protected static List<String> copy(List<String> devices) {
            return devices == null ? null : Collections.unmodifiableList(new ArrayList<>(devices));
        }
    }
}
