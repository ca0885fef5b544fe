package comlrl.utils;

import static comlrl.utils.TrainerFields.ADVANTAGE_NORMALIZATION;
import static comlrl.utils.TrainerFields.AGENT_DEVICES;
import static comlrl.utils.TrainerFields.AGENT_LEARNING_RATE;
import static comlrl.utils.TrainerFields.DDP_SPLIT;
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

import java.util.List;
import java.util.Map;

/**
 * What every trainer config is: a table of {@link ConfigField} values ({@link FieldTableConfig}),
 * read through {@link #get(ConfigField)} or through the typed getters of the fields that every
 * algorithm has, declared here once (a config documents a getter again where its default or
 * meaning differs). A run config holds one {@code TrainerConfig} whatever the algorithm.
 */
public interface TrainerConfig {

    /**
     * The value of this config's field with {@code field}'s key, or, when unset, of the field this
     * config's declaration falls back to (train_batch_size → rollout_buffer_size).
     *
     * @throws IllegalStateException when this config has no such field
     */
    <T> T get(ConfigField<T> field);

    /** Whether this config has a field with {@code field}'s key. */
    boolean has(ConfigField<?> field);

    /** This config's fields, in order (what {@link #toMap()} writes and {@code fromMap} reads). */
    List<ConfigField<?>> fields();

    /** The Java config type users see in messages ("MAGRPOConfig", "IACConfig", ...). */
    String configTypeName();

    /** The reference's {@code algorithm_name}: "MAGRPO", "IAC", "MADPO", ... */
    String algorithmName();

    /**
     * The config as snake_case keys in field order, with resolved values (unset fields with a
     * fallback filled in) and enums as their config strings: what a run writes to
     * {@code config.json}. {@code fromMap(toMap())} equals this config.
     */
    Map<String, Object> toMap();

    /** {@code num_train_epochs} (≥ 1): passes over the training task items. */
    default int numTrainEpochs() {
        return get(NUM_TRAIN_EPOCHS);
    }

    /** {@code logging_steps} (≥ 1): minimum env_step gap between training log entries. */
    default int loggingSteps() {
        return get(LOGGING_STEPS);
    }

    /** {@code num_agents} (default 2, ≥ 1): the number of agents (for a centralized actor, of roles). */
    default int numAgents() {
        return get(NUM_AGENTS);
    }

    /** {@code num_turns} (≥ 1): turns per episode; more than one requires an external transition. */
    default int numTurns() {
        return get(NUM_TURNS);
    }

    /**
     * {@code parallel_training} (default "none"): "none" keeps every model on one device; "mp"
     * places each agent on its own device from {@code agent_devices} and runs agents on threads;
     * "ddp" runs one training in several processes, divided as {@link #ddpSplit()} says.
     */
    default ParallelTraining parallelTraining() {
        return get(PARALLEL_TRAINING);
    }

    /**
     * {@code ddp_split} (default "data"; with {@code parallel_training: ddp}): "data" divides each
     * batch's samples between the processes, every process holding every agent; "agents" puts agent
     * i on process {@code i mod W} only. Both compute what one process computes with the same seed.
     */
    default DdpSplit ddpSplit() {
        return get(DDP_SPLIT);
    }

    /**
     * {@code early_termination_threshold} (default −0.2, or null = never): a node (turn) whose mean
     * reward is greater than this gets no next turn.
     */
    default Double earlyTerminationThreshold() {
        return get(EARLY_TERMINATION_THRESHOLD);
    }

    /**
     * {@code eval_interval} (default 16, ≥ 0): evaluate before training item b of each epoch when
     * {@code b % eval_interval == 0}; 0 = manual evaluation only.
     */
    default int evalInterval() {
        return get(EVAL_INTERVAL);
    }

    /** {@code rollout_buffer_size} (≥ 1): samples collected per agent before its update. */
    default int rolloutBufferSize() {
        return get(ROLLOUT_BUFFER_SIZE);
    }

    /**
     * {@code train_batch_size} (default null → {@link #rolloutBufferSize()}, ≥ 1): samples per
     * minibatch (one optimizer step each) in an update. Returns the resolved value.
     */
    default int trainBatchSize() {
        return get(TRAIN_BATCH_SIZE);
    }

    /** {@code advantage_normalization} (default true): z-normalise the advantages of each update group. */
    default boolean advantageNormalization() {
        return get(ADVANTAGE_NORMALIZATION);
    }

    /**
     * {@code reference_kl_enabled} (default false): shape rewards with a KL penalty against frozen
     * copies of the initial agents, {@code r' = r − β·KL}.
     */
    default boolean referenceKlEnabled() {
        return get(REFERENCE_KL_ENABLED);
    }

    /**
     * {@code reference_devices} (default null = the agents' devices): where the frozen references
     * live; same forms as {@link #agentDevices()}.
     */
    default List<String> referenceDevices() {
        return get(REFERENCE_DEVICES);
    }

    /** {@code agent_learning_rate} (default 5e-6, finite, ≥ 0): AdamW learning rate of every agent's actor. */
    default double agentLearningRate() {
        return get(AGENT_LEARNING_RATE);
    }

    /**
     * {@code agent_devices} (default null = automatic): a device for all actors ({@code "cuda:0"}),
     * a one-element list (broadcast) or one device per actor. A single string is stored as a
     * one-element list.
     */
    default List<String> agentDevices() {
        return get(AGENT_DEVICES);
    }

    /**
     * {@code max_new_tokens} (default 256, ≥ 1): generation length cap per completion; one value for
     * every agent, or a list with one per agent. Returns the value every agent has.
     *
     * @throws IllegalStateException when the agents' values differ (read {@link #maxNewTokens(int)})
     */
    default int maxNewTokens() {
        return get(MAX_NEW_TOKENS).common(MAX_NEW_TOKENS.key);
    }

    /** Agent {@code agent}'s {@code max_new_tokens}: the value, or entry {@code agent} of the list. */
    default int maxNewTokens(int agent) {
        return get(MAX_NEW_TOKENS).get(agent);
    }

    /**
     * {@code temperature} (default 0.6, finite, &gt; 0): sampling temperature; one value for every
     * agent, or a list with one per agent. Returns the value every agent has.
     *
     * @throws IllegalStateException when the agents' values differ (read {@link #temperature(int)})
     */
    default double temperature() {
        return get(TEMPERATURE).common(TEMPERATURE.key);
    }

    /** Agent {@code agent}'s {@code temperature}. */
    default double temperature(int agent) {
        return get(TEMPERATURE).get(agent);
    }

    /**
     * {@code top_p} (default 0.6, in (0, 1]): nucleus-sampling probability mass; one value for every
     * agent, or a list with one per agent. Returns the value every agent has.
     *
     * @throws IllegalStateException when the agents' values differ (read {@link #topP(int)})
     */
    default double topP() {
        return get(TOP_P).common(TOP_P.key);
    }

    /** Agent {@code agent}'s {@code top_p}. */
    default double topP(int agent) {
        return get(TOP_P).get(agent);
    }

    /**
     * {@code top_k} (≥ 0, or null): top-k filtering, 0 disables it; null leaves it out of the
     * generate call, so the model's {@code generation_config.json} value applies, else 50. One value
     * for every agent, or a list with one per agent (entries may be null). Returns the value every
     * agent has.
     *
     * @throws IllegalStateException when the agents' values differ (read {@link #topK(int)})
     */
    default Integer topK() {
        return get(TOP_K).common(TOP_K.key);
    }

    /** Agent {@code agent}'s {@code top_k} (null: the model's value). */
    default Integer topK(int agent) {
        return get(TOP_K).get(agent);
    }

    /**
     * Agent {@code agent}'s {@code stop_strings} (default null): its completions end once their decoded
     * text contains one of these; null leaves it to the model's generation_config.json (none when it sets
     * none); one list for every agent, or a list with one per agent.
     */
    default List<String> stopStrings(int agent) {
        return has(TrainerFields.STOP_STRINGS) ? get(TrainerFields.STOP_STRINGS).get(agent) : null;
    }

    /**
     * {@code external_prompt_passthrough} (default false): use the prompts returned by an external
     * transition verbatim instead of passing them through the agents' formatters.
     */
    default boolean externalPromptPassthrough() {
        return get(EXTERNAL_PROMPT_PASSTHROUGH);
    }

    /**
     * {@code eval_num_samples} (default 4, ≥ 1): task items per evaluation. The reference also
     * accepted 0 and then evaluated one item anyway (§14 item 11); as in MAGRPOConfig we require a
     * positive count.
     */
    default int evalNumSamples() {
        return get(EVAL_NUM_SAMPLES);
    }

    /** {@code eval_batch_size} (default 1, ≥ 1): evaluation data-loader batch size. */
    default int evalBatchSize() {
        return get(EVAL_BATCH_SIZE);
    }

    /** {@code reference_kl_coef} (default 0.1, finite, ≥ 0): β of the reference-KL shaping. */
    default double referenceKlCoef() {
        return get(REFERENCE_KL_COEF);
    }

    /**
     * {@code seed} (default 42): seed of every random stream of a run (sampling, shuffles, random
     * pair selection). Not in the reference, which relies on global RNG state.
     */
    default long seed() {
        return get(SEED);
    }

    /**
     * {@code gradient_checkpointing} (default false): recompute each layer in the backward pass
     * instead of keeping its activations (same gradients, one extra forward). Not in the reference.
     */
    default boolean gradientCheckpointing() {
        return get(GRADIENT_CHECKPOINTING);
    }

    /**
     * {@code generation_kwargs} (default {}): further settings of transformers' {@code generate}
     * ({@code repetition_penalty}, {@code min_p}, ...), as in MAGRPOConfig; a setting not given comes
     * from the model's generation config, then transformers' default; a null value switches it off.
     * {@code temperature}, {@code top_p} and {@code top_k} are fields of their own.
     */
    default Map<String, Object> generationKwargs() {
        return get(GENERATION_KWARGS);
    }

    /**
     * {@code skip_nonfinite_samples} (default false): a NaN or infinite reward, target,
     * log-probability or loss stops training with an error before any optimizer step; true drops such
     * samples (pairs) from the update instead. Not in the reference, whose IAC/MAAC raise
     * FloatingPointError on a non-finite loss and whose MADPO replaces it by the constant 0.1.
     */
    default boolean skipNonfiniteSamples() {
        return get(SKIP_NONFINITE_SAMPLES);
    }

    /**
     * {@code save_total_limit} (default null = keep every checkpoint, ≥ 1): keep only the newest N
     * {@code checkpoint-*} directories. Not in the reference.
     */
    default Integer saveTotalLimit() {
        return get(SAVE_TOTAL_LIMIT);
    }
}
