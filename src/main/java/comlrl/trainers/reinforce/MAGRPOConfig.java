package comlrl.trainers.reinforce;

import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.utils.CollaborationMode;
import comlrl.utils.ConfigMaps;
import comlrl.utils.ParallelTraining;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * Training configuration of MAGRPO and the MA-REINFORCE family (reference §3.1): every field of the
 * Python {@code MAGRPOConfig} with the same defaults, plus {@code seed}. Immutable and validated
 * when built; each getter documents its field (snake_case config key, default, valid range).
 *
 * <pre>{@code
 * MAGRPOConfig config = MAGRPOConfig.builder()
 *         .numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(4).maxNewTokens(128)
 *         .build();
 * MAGRPOConfig fromYaml = MAGRPOConfig.fromMap(Map.of("num_turns", 1, "num_generations", 8));
 * }</pre>
 *
 * <p>The variants are sub-types with other defaults: {@link MAREINFORCEConfig} (advantage_mode
 * raw), {@link MAReMaxConfig} (max), {@link MARLOOConfig} (rloo), {@link CentralizedMAGRPOConfig}
 * (num_turns 1, collaboration_mode centralized). Each has its own {@code builder()} and
 * {@code fromMap}; every variant is a {@code MAGRPOConfig}, so trainers take this type. Obtain
 * instances only from these builders (implementing this interface elsewhere bypasses validation).
 *
 * <p>Where we differ from the reference: {@code eval_num_samples} must be ≥ 1 (the reference allowed
 * 0 and still evaluated one item, §14 item 11); {@code temperature}, {@code top_p}, {@code top_k},
 * {@code max_new_tokens}, {@code agent_learning_rate} and {@code discount} are range-checked here
 * rather than failing later in generation or training.
 */
public interface MAGRPOConfig {

    /** Which algorithm of the family these defaults belong to. */
    ReinforceAlgorithm algorithm();

    /** {@code num_train_epochs} (default 20, ≥ 1): passes over the training task items. */
    int numTrainEpochs();

    /**
     * {@code agent_learning_rate} (default 5e-6, finite, ≥ 0): AdamW learning rate of every agent.
     * AdamW otherwise keeps PyTorch's defaults (betas 0.9/0.999, eps 1e-8, weight decay 0.01); there
     * is no schedule and no gradient clipping.
     */
    double agentLearningRate();

    /** {@code logging_steps} (default 50, ≥ 1): minimum env_step gap between training log entries. */
    int loggingSteps();

    /**
     * {@code num_agents} (default 2, ≥ 1): number of cooperating agents (for the centralized variant,
     * the number of roles one actor plays).
     */
    int numAgents();

    /**
     * {@code parallel_training} (default "none"): "none" (or "null"/null) keeps every agent on one
     * device; "mp" places each agent on its own device from {@link #agentDevices()} (required) and
     * runs agents on their own threads; "ddp" runs one training in several processes started by
     * {@code bin/comlrl launch} (or torchrun, or Slurm), each on its own device, divided as
     * {@link #ddpSplit()} says. "auto" and anything else are rejected.
     */
    ParallelTraining parallelTraining();

    /**
     * {@code ddp_split} (default "data"; used with {@code parallel_training: ddp}): "data" — every
     * process holds every agent and samples, scores and backpropagates its share of each group's
     * completions, gradients summed before each step; "agents" — agent i lives on process
     * {@code i mod W} only. Both compute what one process computes with the same seed.
     */
    comlrl.utils.DdpSplit ddpSplit();

    /**
     * {@code agent_devices} (default null = automatic): a device string for every agent
     * ({@code "cuda:0"}), a one-element list (broadcast) or one device per agent. A single string is
     * stored as a one-element list. Null when unset.
     */
    List<String> agentDevices();

    /**
     * {@code num_generations} (default 4, ≥ 2): completions sampled per agent at each rollout-tree
     * node (G). The group baseline requires multiple samples.
     */
    int numGenerations();

    /** {@code max_new_tokens} (default 256, ≥ 1): generation length cap per completion. */
    int maxNewTokens();

    /** {@code temperature} (default 0.6, finite, &gt; 0): sampling temperature. */
    double temperature();

    /** {@code top_p} (default 0.6, in (0, 1]): nucleus-sampling probability mass. */
    double topP();

    /**
     * {@code top_k} (default 50, ≥ 0): top-k filtering; 0 disables it. Null leaves it out of the
     * generate call as the Python trainers do, so the model's {@code generation_config.json} value
     * applies, else transformers' default of 50.
     */
    Integer topK();

    /**
     * {@code generation_kwargs} (default {}): further settings of transformers' {@code generate}
     * ({@code repetition_penalty}, {@code no_repeat_ngram_size}, {@code min_p}, {@code typical_p},
     * {@code min_new_tokens}, ...; the Python trainers forward {@code train(**kwargs)} the same way).
     * A setting not given here comes from the model's generation config, then transformers' default;
     * a null value switches it off. The resolved values and their sources are written to the run's
     * {@code config.json}.
     */
    Map<String, Object> generationKwargs();

    /**
     * {@code num_turns} (default 2, ≥ 1): turns per episode; more than one requires an external
     * transition in the trainer. Note the default {@link #earlyTerminationThreshold()} of −0.2 stops
     * expanding any node whose mean reward exceeds −0.2, so with non-negative rewards multi-turn
     * training stops after the first turn unless the threshold is raised or set to null.
     */
    int numTurns();

    /**
     * {@code discount} (default 1.0, finite): kept for compatibility with the Python API and its
     * docs; <b>MAGRPO does not use it</b>: returns along the rollout tree are undiscounted (§14 item 2).
     */
    double discount();

    /**
     * {@code joint_mode} (default "aligned"): "aligned"/"align" pairs the k-th completions of all
     * agents (G joint actions per node); "cross"/"crossed" scores every combination (G^N).
     */
    JointMode jointMode();

    /**
     * {@code early_termination_threshold} (default −0.2, or null = never terminate early): a node
     * whose mean reward is greater than this gets no children. See {@link #numTurns()}.
     */
    Double earlyTerminationThreshold();

    /**
     * {@code external_prompt_passthrough} (default false): use the prompts returned by the external
     * transition verbatim instead of passing them through the agents' formatters.
     */
    boolean externalPromptPassthrough();

    /**
     * {@code eval_interval} (default 16, ≥ 0): evaluate before training item b of each epoch when
     * {@code b % eval_interval == 0} (so always before item 0); 0 = manual evaluation only.
     */
    int evalInterval();

    /**
     * {@code eval_num_samples} (default 4, ≥ 1): task items evaluated per evaluation, from the start
     * of the evaluation split. The reference also accepted 0 and then evaluated one item anyway
     * (§14 item 11); we require a positive limit, as the documentation describes.
     */
    int evalNumSamples();

    /** {@code eval_batch_size} (default 1, ≥ 1): evaluation data-loader batch size. */
    int evalBatchSize();

    /**
     * {@code rollout_buffer_size} (default 2, ≥ 1): node samples collected per agent before that
     * agent's buffer is drained into an update.
     */
    int rolloutBufferSize();

    /**
     * {@code train_batch_size} (default null → {@link #rolloutBufferSize()}, ≥ 1): node samples per
     * minibatch (one optimizer step each) when a buffer is drained. Returns the resolved value.
     */
    int trainBatchSize();

    /**
     * {@code advantage_normalization} (default true): z-normalise the advantages within each node,
     * {@code A ← (A − mean A) / max(std_pop A, 1e-6)}. With it on, all four advantage modes give the
     * same advantages (§3.4).
     */
    boolean advantageNormalization();

    /**
     * {@code advantage_mode} (default "mean" for MAGRPO; "raw", "max", "rloo" for the variants): the
     * group baseline, see {@link AdvantageMode}.
     */
    AdvantageMode advantageMode();

    /**
     * {@code reference_kl_enabled} (default false): shape returns with a KL penalty against frozen
     * copies of the initial agents, {@code R' = R − β·KL}.
     */
    boolean referenceKlEnabled();

    /** {@code reference_kl_coef} (default 0.1, finite, ≥ 0): β of the reference-KL shaping. */
    double referenceKlCoef();

    /**
     * {@code reference_devices} (default null = the agents' devices): where the reference models
     * live; same forms as {@link #agentDevices()}. Null when unset.
     */
    List<String> referenceDevices();

    /**
     * {@code seed} (default 42): seed of every random stream of a run (sampling, shuffling), so runs
     * repeat. Not in the Python config, which relies on global RNG state.
     */
    long seed();

    /**
     * {@code gradient_checkpointing} (default false): during updates keep only each layer's input
     * and recompute the layer in the backward pass, so activation memory no longer grows with the
     * number of layers (one extra forward per update). Not in the Python config (HF models enable
     * it on the model); gradients are the same.
     */
    boolean gradientCheckpointing();

    /**
     * {@code skip_nonfinite_samples} (default false): a NaN or infinite reward, return or loss stops
     * training with an error naming the task item, agent and value, before any optimizer step (the
     * last checkpoint stays as it was). True drops such samples from the update instead and counts
     * them in {@code agent_i/nonfinite_samples_skipped}. Not in the Python config, which replaces a
     * non-finite loss by a constant.
     */
    boolean skipNonfiniteSamples();

    /**
     * {@code save_total_limit} (default null = keep every checkpoint, ≥ 1): keep only the newest N
     * {@code checkpoint-*} directories, deleting older ones after each new checkpoint is complete, as
     * transformers' Trainer does.
     */
    Integer saveTotalLimit();

    /**
     * The config as snake_case keys in field order, with resolved values (train_batch_size filled in)
     * and enums as their config strings: what a run writes to {@code config.json}.
     * {@code fromMap(toMap())} equals this config.
     */
    Map<String, Object> toMap();

    /** A builder holding this config's values (train_batch_size stays unset if it was). */
    Builder<? extends MAGRPOConfig> toBuilder();

    /** A builder with MAGRPO's defaults. */
    static Builder<MAGRPOConfig> builder() {
        return new Builder<>(ReinforceAlgorithm.MAGRPO, BaseReinforceConfig.Magrpo::new);
    }

    /**
     * An MAGRPO config from snake_case keys (a YAML/JSON {@code args:} section); missing keys keep
     * their defaults. Values are type-checked (numbers may be numeric strings); an unknown key fails
     * with the closest valid key.
     */
    static MAGRPOConfig fromMap(Map<String, ?> values) {
        return builder().apply(values).build();
    }

    /** The snake_case keys of an MAGRPO config, in field order. */
    static List<String> keys() {
        return BaseReinforceConfig.keys(ReinforceAlgorithm.MAGRPO);
    }

    /**
     * Builds a config of type {@code C}; setters take the Java values, {@link #apply(Map)} and
     * {@link #set(String, Object)} the snake_case config keys. {@link #build()} validates.
     *
     * @param <C> the config type built
     */
    final class Builder<C extends MAGRPOConfig> {
        final ReinforceAlgorithm algorithm;
        private final Function<Builder<C>, C> factory;

        int numTrainEpochs = 20;
        double agentLearningRate = 5e-6;
        int loggingSteps = 50;
        int numAgents = 2;
        ParallelTraining parallelTraining = ParallelTraining.NONE;
        List<String> agentDevices;
        comlrl.utils.DdpSplit ddpSplit = comlrl.utils.DdpSplit.DATA;
        int numGenerations = 4;
        int maxNewTokens = 256;
        double temperature = 0.6;
        double topP = 0.6;
        Integer topK = 50;
        int numTurns;
        double discount = 1.0;
        JointMode jointMode = JointMode.ALIGNED;
        Double earlyTerminationThreshold = -0.2;
        boolean externalPromptPassthrough;
        int evalInterval = 16;
        int evalNumSamples = 4;
        int evalBatchSize = 1;
        int rolloutBufferSize = 2;
        Integer trainBatchSize;
        boolean advantageNormalization = true;
        AdvantageMode advantageMode;
        boolean referenceKlEnabled;
        double referenceKlCoef = 0.1;
        List<String> referenceDevices;
        long seed = 42;
        boolean gradientCheckpointing;
        Map<String, Object> generationKwargs = Map.of();
        boolean skipNonfiniteSamples;
        Integer saveTotalLimit;
        CollaborationMode collaborationMode;

        Builder(ReinforceAlgorithm algorithm, Function<Builder<C>, C> factory) {
            this.algorithm = algorithm;
            this.factory = factory;
            this.numTurns = algorithm.defaultNumTurns();
            this.advantageMode = algorithm.defaultAdvantageMode();
            this.collaborationMode = algorithm == ReinforceAlgorithm.CENTRALIZED_MAGRPO ? CollaborationMode.CENTRALIZED : null;
        }

        /** See {@link MAGRPOConfig#numTrainEpochs()}. */
        public Builder<C> numTrainEpochs(int numTrainEpochs) {
            this.numTrainEpochs = numTrainEpochs;
            return this;
        }

        /** See {@link MAGRPOConfig#agentLearningRate()}. */
        public Builder<C> agentLearningRate(double agentLearningRate) {
            this.agentLearningRate = agentLearningRate;
            return this;
        }

        /** See {@link MAGRPOConfig#loggingSteps()}. */
        public Builder<C> loggingSteps(int loggingSteps) {
            this.loggingSteps = loggingSteps;
            return this;
        }

        /** See {@link MAGRPOConfig#numAgents()}. */
        public Builder<C> numAgents(int numAgents) {
            this.numAgents = numAgents;
            return this;
        }

        /** See {@link MAGRPOConfig#parallelTraining()}. */
        public Builder<C> parallelTraining(ParallelTraining parallelTraining) {
            this.parallelTraining = parallelTraining == null ? ParallelTraining.NONE : parallelTraining;
            return this;
        }

        /** "none", "null" or null → NONE; "mp" → MP; see {@link MAGRPOConfig#parallelTraining()}. */
        public Builder<C> parallelTraining(String parallelTraining) {
            this.parallelTraining = ParallelTraining.parse(parallelTraining);
            return this;
        }

        /** See {@link MAGRPOConfig#ddpSplit()}; null → "data". */
        public Builder<C> ddpSplit(comlrl.utils.DdpSplit split) {
            this.ddpSplit = split == null ? comlrl.utils.DdpSplit.DATA : split;
            return this;
        }

        /** "data" or "agents"; see {@link MAGRPOConfig#ddpSplit()}. */
        public Builder<C> ddpSplit(String split) {
            this.ddpSplit = comlrl.utils.DdpSplit.parse(split);
            return this;
        }

        /** One device per agent, or one to broadcast; null = automatic. See {@link MAGRPOConfig#agentDevices()}. */
        public Builder<C> agentDevices(List<String> agentDevices) {
            this.agentDevices = agentDevices == null ? null : List.copyOf(agentDevices);
            return this;
        }

        /** The same device for every agent. */
        public Builder<C> agentDevices(String device) {
            this.agentDevices = device == null ? null : List.of(device);
            return this;
        }

        /** See {@link MAGRPOConfig#numGenerations()}. */
        public Builder<C> numGenerations(int numGenerations) {
            this.numGenerations = numGenerations;
            return this;
        }

        /** See {@link MAGRPOConfig#maxNewTokens()}. */
        public Builder<C> maxNewTokens(int maxNewTokens) {
            this.maxNewTokens = maxNewTokens;
            return this;
        }

        /** See {@link MAGRPOConfig#temperature()}. */
        public Builder<C> temperature(double temperature) {
            this.temperature = temperature;
            return this;
        }

        /** See {@link MAGRPOConfig#topP()}. */
        public Builder<C> topP(double topP) {
            this.topP = topP;
            return this;
        }

        /** 0 disables top-k; null takes the model's value. See {@link MAGRPOConfig#topK()}. */
        public Builder<C> topK(Integer topK) {
            this.topK = topK;
            return this;
        }

        /** See {@link MAGRPOConfig#numTurns()}. */
        public Builder<C> numTurns(int numTurns) {
            this.numTurns = numTurns;
            return this;
        }

        /** Not used by MAGRPO. See {@link MAGRPOConfig#discount()}. */
        public Builder<C> discount(double discount) {
            this.discount = discount;
            return this;
        }

        /** See {@link MAGRPOConfig#jointMode()}. */
        public Builder<C> jointMode(JointMode jointMode) {
            this.jointMode = Objects.requireNonNull(jointMode, "jointMode");
            return this;
        }

        /** "aligned"/"align" or "cross"/"crossed". */
        public Builder<C> jointMode(String jointMode) {
            this.jointMode = JointMode.parse(jointMode);
            return this;
        }

        /** Null disables early termination. See {@link MAGRPOConfig#earlyTerminationThreshold()}. */
        public Builder<C> earlyTerminationThreshold(Double earlyTerminationThreshold) {
            this.earlyTerminationThreshold = earlyTerminationThreshold;
            return this;
        }

        /** See {@link MAGRPOConfig#externalPromptPassthrough()}. */
        public Builder<C> externalPromptPassthrough(boolean externalPromptPassthrough) {
            this.externalPromptPassthrough = externalPromptPassthrough;
            return this;
        }

        /** See {@link MAGRPOConfig#evalInterval()}. */
        public Builder<C> evalInterval(int evalInterval) {
            this.evalInterval = evalInterval;
            return this;
        }

        /** See {@link MAGRPOConfig#evalNumSamples()}. */
        public Builder<C> evalNumSamples(int evalNumSamples) {
            this.evalNumSamples = evalNumSamples;
            return this;
        }

        /** See {@link MAGRPOConfig#evalBatchSize()}. */
        public Builder<C> evalBatchSize(int evalBatchSize) {
            this.evalBatchSize = evalBatchSize;
            return this;
        }

        /** See {@link MAGRPOConfig#rolloutBufferSize()}. */
        public Builder<C> rolloutBufferSize(int rolloutBufferSize) {
            this.rolloutBufferSize = rolloutBufferSize;
            return this;
        }

        /** Null = follow rollout_buffer_size. See {@link MAGRPOConfig#trainBatchSize()}. */
        public Builder<C> trainBatchSize(Integer trainBatchSize) {
            this.trainBatchSize = trainBatchSize;
            return this;
        }

        /** See {@link MAGRPOConfig#advantageNormalization()}. */
        public Builder<C> advantageNormalization(boolean advantageNormalization) {
            this.advantageNormalization = advantageNormalization;
            return this;
        }

        /** See {@link MAGRPOConfig#advantageMode()}. */
        public Builder<C> advantageMode(AdvantageMode advantageMode) {
            this.advantageMode = Objects.requireNonNull(advantageMode, "advantageMode");
            return this;
        }

        /** "mean", "raw", "max" or "rloo". */
        public Builder<C> advantageMode(String advantageMode) {
            this.advantageMode = AdvantageMode.parse(advantageMode);
            return this;
        }

        /** See {@link MAGRPOConfig#referenceKlEnabled()}. */
        public Builder<C> referenceKlEnabled(boolean referenceKlEnabled) {
            this.referenceKlEnabled = referenceKlEnabled;
            return this;
        }

        /** See {@link MAGRPOConfig#referenceKlCoef()}. */
        public Builder<C> referenceKlCoef(double referenceKlCoef) {
            this.referenceKlCoef = referenceKlCoef;
            return this;
        }

        /** Null = the agents' devices. See {@link MAGRPOConfig#referenceDevices()}. */
        public Builder<C> referenceDevices(List<String> referenceDevices) {
            this.referenceDevices = referenceDevices == null ? null : List.copyOf(referenceDevices);
            return this;
        }

        /** The same reference device for every agent. */
        public Builder<C> referenceDevices(String device) {
            this.referenceDevices = device == null ? null : List.of(device);
            return this;
        }

        /** See {@link MAGRPOConfig#seed()}. */
        public Builder<C> seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** See {@link MAGRPOConfig#gradientCheckpointing()}. */
        public Builder<C> gradientCheckpointing(boolean gradientCheckpointing) {
            this.gradientCheckpointing = gradientCheckpointing;
            return this;
        }

        /** See {@link MAGRPOConfig#generationKwargs()}. */
        public Builder<C> generationKwargs(Map<String, ?> generationKwargs) {
            this.generationKwargs = generationKwargs == null ? Map.of()
                    : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(generationKwargs));
            return this;
        }

        /** See {@link MAGRPOConfig#skipNonfiniteSamples()}. */
        public Builder<C> skipNonfiniteSamples(boolean skip) {
            this.skipNonfiniteSamples = skip;
            return this;
        }

        /** See {@link MAGRPOConfig#saveTotalLimit()}. */
        public Builder<C> saveTotalLimit(Integer saveTotalLimit) {
            this.saveTotalLimit = saveTotalLimit;
            return this;
        }

        /**
         * {@code collaboration_mode}: only {@link CentralizedMAGRPOConfig} has it, and only
         * "centralized" is valid there; {@link #build()} rejects it for the other algorithms.
         */
        public Builder<C> collaborationMode(CollaborationMode collaborationMode) {
            this.collaborationMode = collaborationMode;
            return this;
        }

        /** "centralized"; see {@link #collaborationMode(CollaborationMode)}. */
        public Builder<C> collaborationMode(String collaborationMode) {
            this.collaborationMode = CollaborationMode.parse(collaborationMode);
            return this;
        }

        /**
         * Sets every snake_case key of {@code values} (a YAML/JSON section). Unknown keys fail with
         * the closest valid key; values are type-checked.
         */
        public Builder<C> apply(Map<String, ?> values) {
            Objects.requireNonNull(values, "values");
            Map<String, Object> map = ConfigMaps.stringKeys(algorithm.configTypeName(), values);
            ConfigMaps.requireKnownKeys(algorithm.configTypeName(), map, keySet(), BaseReinforceConfig.HINTS);
            for (Map.Entry<String, Object> entry : map.entrySet()) {
                BaseReinforceConfig.SETTERS.get(entry.getKey()).accept(this, entry.getValue());
            }
            return this;
        }

        /** Sets one snake_case key, e.g. from {@code --set num_generations=8} (string values are parsed). */
        public Builder<C> set(String key, Object value) {
            java.util.LinkedHashMap<String, Object> one = new java.util.LinkedHashMap<>();
            one.put(key, value);
            return apply(one);
        }

        /** Validates and builds; fails with a message naming the field and how to fix it. */
        public C build() {
            return factory.apply(this);
        }

        private Set<String> keySet() {
            return new java.util.LinkedHashSet<>(BaseReinforceConfig.keys(algorithm));
        }
    }
}
