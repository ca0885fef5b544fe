package comlrl.trainers.reinforce;

import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.utils.CollaborationMode;
import comlrl.utils.ConfigMaps;
import comlrl.utils.ParallelTraining;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The one implementation of {@link MAGRPOConfig} and its variants: fields, validation, snake_case
 * map conversion. The nested classes only bind the variant interfaces (and their builders' types).
 */
abstract class BaseReinforceConfig implements MAGRPOConfig {
    private static final String CENTRALIZED_ONLY = "collaboration_mode is a CentralizedMAGRPOConfig field; the agents of "
            + "this config are always decentralized. For one actor playing every role use CentralizedMAGRPOConfig "
            + "(algorithm: centralized_magrpo).";

    /** Advice for keys users bring from the reference docs or other libraries (§14 item 1). */
    static final Map<String, String> HINTS = Map.of(
            "learning_rate", "use 'agent_learning_rate' (older docs call it learning_rate).",
            "termination_threshold", "use 'early_termination_threshold'.",
            "weight_decay", "not configurable: AdamW weight decay is fixed at 0.01, as in the reference.",
            "dataloader_drop_last", "not supported: training reads task items in order, one per step.",
            "dataloader_num_workers", "not supported: training reads task items in order, one per step.",
            "model", "the model is a trainer argument (agent_model / agents), not a config field.",
            "per_device_train_batch_size", "not a config field; see rollout_buffer_size and train_batch_size.",
            "collaboration_mode", CENTRALIZED_ONLY);

    /** Setter of every snake_case key, in field order. */
    static final Map<String, BiConsumer<MAGRPOConfig.Builder<?>, Object>> SETTERS = setters();

    private final ReinforceAlgorithm algorithm;
    private final int numTrainEpochs;
    private final double agentLearningRate;
    private final int loggingSteps;
    private final int numAgents;
    private final ParallelTraining parallelTraining;
    private final List<String> agentDevices;
    private final comlrl.utils.DdpSplit ddpSplit;
    private final int numGenerations;
    private final int maxNewTokens;
    private final double temperature;
    private final double topP;
    private final Integer topK;
    private final int numTurns;
    private final double discount;
    private final JointMode jointMode;
    private final Double earlyTerminationThreshold;
    private final boolean externalPromptPassthrough;
    private final int evalInterval;
    private final int evalNumSamples;
    private final int evalBatchSize;
    private final int rolloutBufferSize;
    private final Integer trainBatchSizeSetting;   // null = follow rolloutBufferSize
    private final boolean advantageNormalization;
    private final AdvantageMode advantageMode;
    private final boolean referenceKlEnabled;
    private final double referenceKlCoef;
    private final List<String> referenceDevices;
    private final long seed;
    private final boolean gradientCheckpointing;
    private final Map<String, Object> generationKwargs;
    private final boolean skipNonfiniteSamples;
    private final Integer saveTotalLimit;

    BaseReinforceConfig(MAGRPOConfig.Builder<?> b) {
        this.algorithm = b.algorithm;
        this.numTrainEpochs = b.numTrainEpochs;
        this.agentLearningRate = b.agentLearningRate;
        this.loggingSteps = b.loggingSteps;
        this.numAgents = b.numAgents;
        this.parallelTraining = b.parallelTraining;
        this.agentDevices = b.agentDevices;
        this.ddpSplit = b.ddpSplit;
        this.numGenerations = b.numGenerations;
        this.maxNewTokens = b.maxNewTokens;
        this.temperature = b.temperature;
        this.topP = b.topP;
        this.topK = b.topK;
        this.numTurns = b.numTurns;
        this.discount = b.discount;
        this.jointMode = b.jointMode;
        this.earlyTerminationThreshold = b.earlyTerminationThreshold;
        this.externalPromptPassthrough = b.externalPromptPassthrough;
        this.evalInterval = b.evalInterval;
        this.evalNumSamples = b.evalNumSamples;
        this.evalBatchSize = b.evalBatchSize;
        this.rolloutBufferSize = b.rolloutBufferSize;
        this.trainBatchSizeSetting = b.trainBatchSize;
        this.advantageNormalization = b.advantageNormalization;
        this.advantageMode = b.advantageMode;
        this.referenceKlEnabled = b.referenceKlEnabled;
        this.referenceKlCoef = b.referenceKlCoef;
        this.referenceDevices = b.referenceDevices;
        this.seed = b.seed;
        this.gradientCheckpointing = b.gradientCheckpointing;
        this.generationKwargs = b.generationKwargs;
        this.skipNonfiniteSamples = b.skipNonfiniteSamples;
        this.saveTotalLimit = b.saveTotalLimit;
        validate(b.collaborationMode);
    }

    private void validate(CollaborationMode collaborationMode) {
        atLeast("num_train_epochs", numTrainEpochs, 1, "");
        check(Double.isFinite(agentLearningRate) && agentLearningRate >= 0, "agent_learning_rate must be a finite "
                + "number >= 0, got " + agentLearningRate + " (the default is 5e-6)");
        atLeast("logging_steps", loggingSteps, 1, " (1 logs every entry)");
        atLeast("num_agents", numAgents, 1, "");
        check(parallelTraining != ParallelTraining.MP || agentDevices != null, "parallel_training=\"mp\" requires "
                + "agent_devices (one device per agent, e.g. [\"cuda:0\", \"cuda:1\"]); set agent_devices or use "
                + "parallel_training=\"none\"");
        checkDevices("agent_devices", agentDevices);
        check(parallelTraining != ParallelTraining.DDP || agentDevices == null, "parallel_training=\"ddp\" puts "
                + "every model of a process on that process's device (cuda:LOCAL_RANK, or the cpu); remove agent_devices "
                + "(got " + agentDevices + ")");
        check(numGenerations >= 2, "num_generations must be >= 2, got " + numGenerations
                + ": the group baseline requires multiple samples per agent");
        atLeast("max_new_tokens", maxNewTokens, 1, "");
        check(Double.isFinite(temperature) && temperature > 0, "temperature must be a finite number > 0, got "
                + temperature + " (sampling divides the logits by it; use a small value such as 0.1 for nearly "
                + "greedy sampling)");
        check(topP > 0 && topP <= 1, "top_p must be in (0, 1], got " + topP + " (1 disables nucleus sampling)");
        check(topK == null || topK >= 0, "top_k must be >= 0 (0 disables top-k), or null to take the model's "
                + "generation_config.json value (else 50), got " + topK);
        try {
            comlrl.generation.GenerationSettings.requireKnown("generation_kwargs", generationKwargs.keySet());
        } catch (IllegalArgumentException e) {
            check(false, e.getMessage());
        }
        for (String key : List.of("temperature", "top_p", "top_k")) {
            check(!generationKwargs.containsKey(key), "generation_kwargs must not set " + key + ": it is a config field "
                    + "of its own (" + key + ": ...)");
        }
        check(saveTotalLimit == null || saveTotalLimit >= 1, "save_total_limit must be >= 1, or null to keep every "
                + "checkpoint, got " + saveTotalLimit);
        atLeast("num_turns", numTurns, 1, "");
        check(Double.isFinite(discount), "discount must be a finite number, got " + discount
                + " (MAGRPO keeps it for compatibility and does not use it)");
        check(earlyTerminationThreshold == null || !earlyTerminationThreshold.isNaN(),
                "early_termination_threshold must be a number, or null to disable early termination; got NaN");
        atLeast("eval_interval", evalInterval, 0, " (0 = evaluate only when evaluate() is called)");
        check(evalNumSamples >= 1, "eval_num_samples must be >= 1, got " + evalNumSamples + ": it is the number of "
                + "evaluation task items per evaluation (use eval_interval=0 to turn automatic evaluation off)");
        atLeast("eval_batch_size", evalBatchSize, 1, "");
        atLeast("rollout_buffer_size", rolloutBufferSize, 1, "");
        check(trainBatchSizeSetting == null || trainBatchSizeSetting >= 1, "train_batch_size must be >= 1, got "
                + trainBatchSizeSetting + " (leave it unset to use rollout_buffer_size)");
        check(Double.isFinite(referenceKlCoef) && referenceKlCoef >= 0, "reference_kl_coef must be a finite number "
                + ">= 0, got " + referenceKlCoef);
        checkDevices("reference_devices", referenceDevices);
        if (algorithm == ReinforceAlgorithm.CENTRALIZED_MAGRPO) {
            check(collaborationMode == CollaborationMode.CENTRALIZED, "CentralizedMAGRPOConfig requires "
                    + "collaboration_mode=\"centralized\", got \"" + collaborationMode + "\"; use MAGRPOConfig for "
                    + "decentralized agents");
            check(numTurns == 1, "CentralizedMAGRPOConfig requires num_turns=1, got " + numTurns + ": the centralized "
                    + "actor writes every role's response in one joint completion");
        } else {
            check(collaborationMode == null, CENTRALIZED_ONLY);
        }
    }

    private void atLeast(String key, long value, long min, String note) {
        check(value >= min, key + " must be >= " + min + ", got " + value + note);
    }

    private void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(algorithm.configTypeName() + ": " + message + ".");
        }
    }

    private void checkDevices(String key, List<String> devices) {
        if (devices == null) {
            return;
        }
        check(!devices.isEmpty(), key + " must not be an empty list; leave it unset (null) for automatic placement");
        for (String device : devices) {
            check(device != null && !device.isBlank(), key + " entries must be device names such as \"cuda:0\" or "
                    + "\"cpu\", got " + devices);
        }
    }

    @Override
    public ReinforceAlgorithm algorithm() {
        return algorithm;
    }

    @Override
    public int numTrainEpochs() {
        return numTrainEpochs;
    }

    @Override
    public double agentLearningRate() {
        return agentLearningRate;
    }

    @Override
    public int loggingSteps() {
        return loggingSteps;
    }

    @Override
    public int numAgents() {
        return numAgents;
    }

    @Override
    public ParallelTraining parallelTraining() {
        return parallelTraining;
    }

    @Override
    public List<String> agentDevices() {
        return agentDevices;
    }

    @Override
    public int numGenerations() {
        return numGenerations;
    }

    @Override
    public int maxNewTokens() {
        return maxNewTokens;
    }

    @Override
    public double temperature() {
        return temperature;
    }

    @Override
    public double topP() {
        return topP;
    }

    @Override
    public Integer topK() {
        return topK;
    }

    @Override
    public int numTurns() {
        return numTurns;
    }

    @Override
    public double discount() {
        return discount;
    }

    @Override
    public JointMode jointMode() {
        return jointMode;
    }

    @Override
    public Double earlyTerminationThreshold() {
        return earlyTerminationThreshold;
    }

    @Override
    public boolean externalPromptPassthrough() {
        return externalPromptPassthrough;
    }

    @Override
    public int evalInterval() {
        return evalInterval;
    }

    @Override
    public int evalNumSamples() {
        return evalNumSamples;
    }

    @Override
    public int evalBatchSize() {
        return evalBatchSize;
    }

    @Override
    public int rolloutBufferSize() {
        return rolloutBufferSize;
    }

    @Override
    public int trainBatchSize() {
        return trainBatchSizeSetting == null ? rolloutBufferSize : trainBatchSizeSetting;
    }

    @Override
    public boolean advantageNormalization() {
        return advantageNormalization;
    }

    @Override
    public AdvantageMode advantageMode() {
        return advantageMode;
    }

    @Override
    public boolean referenceKlEnabled() {
        return referenceKlEnabled;
    }

    @Override
    public double referenceKlCoef() {
        return referenceKlCoef;
    }

    @Override
    public List<String> referenceDevices() {
        return referenceDevices;
    }

    @Override
    public long seed() {
        return seed;
    }

    @Override
    public boolean gradientCheckpointing() {
        return gradientCheckpointing;
    }

    @Override
    public Map<String, Object> generationKwargs() {
        return generationKwargs;
    }

    @Override
    public boolean skipNonfiniteSamples() {
        return skipNonfiniteSamples;
    }

    @Override
    public comlrl.utils.DdpSplit ddpSplit() {
        return ddpSplit;
    }

    @Override
    public Integer saveTotalLimit() {
        return saveTotalLimit;
    }

    /** {@code collaboration_mode} of the centralized variant; null for the others. */
    CollaborationMode collaborationModeOrNull() {
        return null;
    }

    @Override
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("num_train_epochs", numTrainEpochs);
        map.put("agent_learning_rate", agentLearningRate);
        map.put("logging_steps", loggingSteps);
        map.put("num_agents", numAgents);
        if (collaborationModeOrNull() != null) {
            map.put("collaboration_mode", collaborationModeOrNull().configName());
        }
        map.put("parallel_training", parallelTraining.configName());
        map.put("agent_devices", agentDevices);
        map.put("ddp_split", ddpSplit.configName());
        map.put("num_generations", numGenerations);
        map.put("max_new_tokens", maxNewTokens);
        map.put("temperature", temperature);
        map.put("top_p", topP);
        map.put("top_k", topK);
        map.put("num_turns", numTurns);
        map.put("discount", discount);
        map.put("joint_mode", jointMode.configName());
        map.put("early_termination_threshold", earlyTerminationThreshold);
        map.put("external_prompt_passthrough", externalPromptPassthrough);
        map.put("eval_interval", evalInterval);
        map.put("eval_num_samples", evalNumSamples);
        map.put("eval_batch_size", evalBatchSize);
        map.put("rollout_buffer_size", rolloutBufferSize);
        map.put("train_batch_size", trainBatchSize());
        map.put("advantage_normalization", advantageNormalization);
        map.put("advantage_mode", advantageMode.configName());
        map.put("reference_kl_enabled", referenceKlEnabled);
        map.put("reference_kl_coef", referenceKlCoef);
        map.put("reference_devices", referenceDevices);
        map.put("seed", seed);
        map.put("gradient_checkpointing", gradientCheckpointing);
        map.put("generation_kwargs", generationKwargs);
        map.put("skip_nonfinite_samples", skipNonfiniteSamples);
        map.put("save_total_limit", saveTotalLimit);
        return Collections.unmodifiableMap(map);
    }

    /** Copies every value (train_batch_size unresolved) into {@code b}. */
    <C extends MAGRPOConfig> MAGRPOConfig.Builder<C> copyInto(MAGRPOConfig.Builder<C> b) {
        b.numTrainEpochs = numTrainEpochs;
        b.agentLearningRate = agentLearningRate;
        b.loggingSteps = loggingSteps;
        b.numAgents = numAgents;
        b.parallelTraining = parallelTraining;
        b.agentDevices = agentDevices;
        b.numGenerations = numGenerations;
        b.maxNewTokens = maxNewTokens;
        b.temperature = temperature;
        b.topP = topP;
        b.topK = topK;
        b.numTurns = numTurns;
        b.discount = discount;
        b.jointMode = jointMode;
        b.earlyTerminationThreshold = earlyTerminationThreshold;
        b.externalPromptPassthrough = externalPromptPassthrough;
        b.evalInterval = evalInterval;
        b.evalNumSamples = evalNumSamples;
        b.evalBatchSize = evalBatchSize;
        b.rolloutBufferSize = rolloutBufferSize;
        b.trainBatchSize = trainBatchSizeSetting;
        b.advantageNormalization = advantageNormalization;
        b.advantageMode = advantageMode;
        b.referenceKlEnabled = referenceKlEnabled;
        b.referenceKlCoef = referenceKlCoef;
        b.referenceDevices = referenceDevices;
        b.seed = seed;
        b.gradientCheckpointing = gradientCheckpointing;
        b.generationKwargs = generationKwargs;
        b.skipNonfiniteSamples = skipNonfiniteSamples;
        b.saveTotalLimit = saveTotalLimit;
        b.ddpSplit = ddpSplit;
        b.collaborationMode = collaborationModeOrNull();
        return b;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BaseReinforceConfig c && c.algorithm == algorithm && c.toMap().equals(toMap());
    }

    @Override
    public int hashCode() {
        return 31 * algorithm.hashCode() + toMap().hashCode();
    }

    @Override
    public String toString() {
        return algorithm.configTypeName() + toMap();
    }

    /** The snake_case keys of {@code algorithm}'s config, in field order. */
    static List<String> keys(ReinforceAlgorithm algorithm) {
        List<String> keys = new ArrayList<>();
        for (String key : SETTERS.keySet()) {
            if (!key.equals("collaboration_mode") || algorithm == ReinforceAlgorithm.CENTRALIZED_MAGRPO) {
                keys.add(key);
            }
        }
        return Collections.unmodifiableList(keys);
    }

    private static Map<String, BiConsumer<MAGRPOConfig.Builder<?>, Object>> setters() {
        Map<String, BiConsumer<MAGRPOConfig.Builder<?>, Object>> s = new LinkedHashMap<>();
        s.put("num_train_epochs", (b, v) -> b.numTrainEpochs(ConfigMaps.toInt(owner(b), "num_train_epochs", v)));
        s.put("agent_learning_rate", (b, v) -> b.agentLearningRate(ConfigMaps.toDouble(owner(b), "agent_learning_rate", v)));
        s.put("logging_steps", (b, v) -> b.loggingSteps(ConfigMaps.toInt(owner(b), "logging_steps", v)));
        s.put("num_agents", (b, v) -> b.numAgents(ConfigMaps.toInt(owner(b), "num_agents", v)));
        s.put("collaboration_mode", (b, v) -> b.collaborationMode(ConfigMaps.toStr(owner(b), "collaboration_mode", v)));
        s.put("parallel_training", (b, v) -> b.parallelTraining(
                ConfigMaps.isNullLike(v) ? null : ConfigMaps.toStr(owner(b), "parallel_training", v)));
        s.put("agent_devices", (b, v) -> b.agentDevices(ConfigMaps.toNullableStringList(owner(b), "agent_devices", v)));
        s.put("ddp_split", (b, v) -> b.ddpSplit(
                ConfigMaps.isNullLike(v) ? null : ConfigMaps.toStr(owner(b), "ddp_split", v)));
        s.put("num_generations", (b, v) -> b.numGenerations(ConfigMaps.toInt(owner(b), "num_generations", v)));
        s.put("max_new_tokens", (b, v) -> b.maxNewTokens(ConfigMaps.toInt(owner(b), "max_new_tokens", v)));
        s.put("temperature", (b, v) -> b.temperature(ConfigMaps.toDouble(owner(b), "temperature", v)));
        s.put("top_p", (b, v) -> b.topP(ConfigMaps.toDouble(owner(b), "top_p", v)));
        s.put("top_k", (b, v) -> b.topK(ConfigMaps.toNullableInt(owner(b), "top_k", v)));
        s.put("num_turns", (b, v) -> b.numTurns(ConfigMaps.toInt(owner(b), "num_turns", v)));
        s.put("discount", (b, v) -> b.discount(ConfigMaps.toDouble(owner(b), "discount", v)));
        s.put("joint_mode", (b, v) -> b.jointMode(ConfigMaps.toStr(owner(b), "joint_mode", v)));
        s.put("early_termination_threshold", (b, v) -> b.earlyTerminationThreshold(
                ConfigMaps.toNullableDouble(owner(b), "early_termination_threshold", v)));
        s.put("external_prompt_passthrough", (b, v) -> b.externalPromptPassthrough(
                ConfigMaps.toBoolean(owner(b), "external_prompt_passthrough", v)));
        s.put("eval_interval", (b, v) -> b.evalInterval(ConfigMaps.toInt(owner(b), "eval_interval", v)));
        s.put("eval_num_samples", (b, v) -> b.evalNumSamples(ConfigMaps.toInt(owner(b), "eval_num_samples", v)));
        s.put("eval_batch_size", (b, v) -> b.evalBatchSize(ConfigMaps.toInt(owner(b), "eval_batch_size", v)));
        s.put("rollout_buffer_size", (b, v) -> b.rolloutBufferSize(ConfigMaps.toInt(owner(b), "rollout_buffer_size", v)));
        s.put("train_batch_size", (b, v) -> b.trainBatchSize(ConfigMaps.toNullableInt(owner(b), "train_batch_size", v)));
        s.put("advantage_normalization", (b, v) -> b.advantageNormalization(
                ConfigMaps.toBoolean(owner(b), "advantage_normalization", v)));
        s.put("advantage_mode", (b, v) -> b.advantageMode(ConfigMaps.toStr(owner(b), "advantage_mode", v)));
        s.put("reference_kl_enabled", (b, v) -> b.referenceKlEnabled(
                ConfigMaps.toBoolean(owner(b), "reference_kl_enabled", v)));
        s.put("reference_kl_coef", (b, v) -> b.referenceKlCoef(ConfigMaps.toDouble(owner(b), "reference_kl_coef", v)));
        s.put("reference_devices", (b, v) -> b.referenceDevices(
                ConfigMaps.toNullableStringList(owner(b), "reference_devices", v)));
        s.put("seed", (b, v) -> b.seed(ConfigMaps.toLong(owner(b), "seed", v)));
        s.put("gradient_checkpointing", (b, v) -> b.gradientCheckpointing(
                ConfigMaps.toBoolean(owner(b), "gradient_checkpointing", v)));
        s.put("generation_kwargs", (b, v) -> b.generationKwargs(ConfigMaps.isNullLike(v) ? null
                : ConfigMaps.stringKeys(owner(b) + " generation_kwargs", asMap(owner(b), v))));
        s.put("skip_nonfinite_samples", (b, v) -> b.skipNonfiniteSamples(
                ConfigMaps.toBoolean(owner(b), "skip_nonfinite_samples", v)));
        s.put("save_total_limit", (b, v) -> b.saveTotalLimit(ConfigMaps.toNullableInt(owner(b), "save_total_limit", v)));
        return Collections.unmodifiableMap(s);
    }

    private static Map<?, ?> asMap(String owner, Object v) {
        if (v instanceof Map<?, ?> m) {
            return m;
        }
        throw new IllegalArgumentException(owner + " key 'generation_kwargs' must be a mapping of generate settings "
                + "(e.g. {repetition_penalty: 1.05}), got " + v);
    }

    private static String owner(MAGRPOConfig.Builder<?> b) {
        return b.algorithm.configTypeName();
    }

    static final class Magrpo extends BaseReinforceConfig {
        Magrpo(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public MAGRPOConfig.Builder<MAGRPOConfig> toBuilder() {
            return copyInto(MAGRPOConfig.builder());
        }
    }

    static final class Mareinforce extends BaseReinforceConfig implements MAREINFORCEConfig {
        Mareinforce(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public MAGRPOConfig.Builder<MAREINFORCEConfig> toBuilder() {
            return copyInto(MAREINFORCEConfig.builder());
        }
    }

    static final class Maremax extends BaseReinforceConfig implements MAReMaxConfig {
        Maremax(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public MAGRPOConfig.Builder<MAReMaxConfig> toBuilder() {
            return copyInto(MAReMaxConfig.builder());
        }
    }

    static final class Marloo extends BaseReinforceConfig implements MARLOOConfig {
        Marloo(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public MAGRPOConfig.Builder<MARLOOConfig> toBuilder() {
            return copyInto(MARLOOConfig.builder());
        }
    }

    static final class Centralized extends BaseReinforceConfig implements CentralizedMAGRPOConfig {
        Centralized(MAGRPOConfig.Builder<?> b) {
            super(b);
        }

        @Override
        public CollaborationMode collaborationMode() {
            return CollaborationMode.CENTRALIZED;
        }

        @Override
        CollaborationMode collaborationModeOrNull() {
            return CollaborationMode.CENTRALIZED;
        }

        @Override
        public MAGRPOConfig.Builder<CentralizedMAGRPOConfig> toBuilder() {
            return copyInto(CentralizedMAGRPOConfig.builder());
        }
    }
}
