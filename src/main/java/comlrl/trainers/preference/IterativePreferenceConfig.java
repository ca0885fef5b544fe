package comlrl.trainers.preference;

import comlrl.generation.api.ApiComparatorSettings;
import comlrl.rl.ReplayMode;
import comlrl.utils.CollaborationMode;
import comlrl.utils.ConfigField;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The fields and rules the iterative preference trainers share (reference §7.4, fields in
 * {@link PreferenceFields}): iterations, the replay of earlier iterations' pairs, and the comparator.
 * The replay modes' and comparator policies' own fields are required by their mode and refused by
 * the others; {@code collaboration_mode: centralized} needs a centralized comparator written by agent 0.
 */
public abstract sealed class IterativePreferenceConfig extends PreferenceConfig permits MADPOIterConfig,
        MARLHFIterConfig {

    IterativePreferenceConfig(Builder<?, ?> b) {
        super(b);
        ReplayMode mode = preferenceReplayMode();
        check(mode == ReplayMode.NEAREST_K && preferenceReplayK() == null ? "preference_replay_mode=\"nearest_k\" "
                + "requires preference_replay_k (how many of the newest iterations' shards to train on)" : null);
        check(mode == ReplayMode.LAMBDA_DECAY && preferenceReplayLambda() == null ? "preference_replay_mode="
                + "\"lambda_decay\" requires preference_replay_lambda in [0, 1] (shard weights (1-λ)λ^age)" : null);
        ComparatorPolicy policy = comparatorPolicy();
        check(policy != ComparatorPolicy.MODEL && (comparatorModelName() != null || comparatorAgents() != null)
                ? "comparator_model_name and comparator_agents are only used with comparator_policy=\"model\" (got \""
                + policy + "\"); remove them or set comparator_policy: model" : null);
        check(policy == ComparatorPolicy.MODEL && comparatorModelName() == null && comparatorAgents() == null
                ? "comparator_policy=\"model\" requires comparator_model_name (one model for every agent) or "
                + "comparator_agents (one per agent)" : null);
        check(comparatorAgents() != null && comparatorModelName() != null ? "give comparator_model_name or "
                + "comparator_agents, not both" : null);
        check(comparatorAgents() != null && comparatorAgents().size() != actorCount() ? "comparator_agents length ("
                + comparatorAgents().size() + ") must match the number of agents (" + actorCount() + ")" : null);
        check(policy != ComparatorPolicy.HISTORY && get(PreferenceFields.COMPARATOR_HISTORY_K) != null
                ? "comparator_history_k is only used with comparator_policy=\"history\" (got \"" + policy + "\")" : null);
        check(!policy.loadsFrozenModels() && comparatorDevices() != null ? "comparator_devices places frozen "
                + "comparator models (comparator_policy current_copy, model or history), got comparator_policy=\""
                + policy + "\"" : null);
        for (ConfigField<?> field : PreferenceFields.COMPARATOR_API) {
            boolean changed = !Objects.equals(get(field), field.defaultValue);
            check(policy != ComparatorPolicy.API && changed ? field.key + " is only used with comparator_policy="
                    + "\"api\" (got \"" + policy + "\"); remove it or set comparator_policy: api" : null);
        }
        check(policy == ComparatorPolicy.API && comparatorApiFields().get(ApiComparatorSettings.URL) == null ? "comparator_policy=\"api\" requires "
                + "comparator_api_url (the endpoint comparator candidates are requested from)" : null);
        check(collaborationMode() == CollaborationMode.CENTRALIZED
                && (comparatorGenerationMode() != CollaborationMode.CENTRALIZED || comparatorCentralizedAgentIndex() != 0)
                ? "collaboration_mode=\"centralized\" requires comparator_generation_mode=\"centralized\" and "
                + "comparator_centralized_agent_index=0 (one actor writes every role's answer)" : null);
        check(comparatorGenerationMode() == CollaborationMode.CENTRALIZED && comparatorCentralizedAgentIndex() >= actorCount()
                ? "comparator_centralized_agent_index (" + comparatorCentralizedAgentIndex() + ") must name one of the "
                + actorCount() + " agents" : null);
    }

    public int numIterations() {
        return get(PreferenceFields.NUM_ITERATIONS);
    }

    public ReplayMode preferenceReplayMode() {
        return get(PreferenceFields.PREFERENCE_REPLAY_MODE);
    }

    public Integer preferenceReplayK() {
        return get(PreferenceFields.PREFERENCE_REPLAY_K);
    }

    public Double preferenceReplayLambda() {
        return get(PreferenceFields.PREFERENCE_REPLAY_LAMBDA);
    }

    public Integer preferenceReplaySampleSize() {
        return get(PreferenceFields.PREFERENCE_REPLAY_SAMPLE_SIZE);
    }

    public String preferenceReplayDir() {
        return get(PreferenceFields.PREFERENCE_REPLAY_DIR);
    }

    public boolean logRewardDistribution() {
        return get(PreferenceFields.LOG_REWARD_DISTRIBUTION);
    }

    public String policyCheckpointDir() {
        return get(PreferenceFields.POLICY_CHECKPOINT_DIR);
    }

    public ComparatorPolicy comparatorPolicy() {
        return get(PreferenceFields.COMPARATOR_POLICY);
    }

    public CollaborationMode comparatorGenerationMode() {
        return get(PreferenceFields.COMPARATOR_GENERATION_MODE);
    }

    public int comparatorCentralizedAgentIndex() {
        return get(PreferenceFields.COMPARATOR_CENTRALIZED_AGENT_INDEX);
    }

    public String comparatorModelName() {
        return get(PreferenceFields.COMPARATOR_MODEL_NAME);
    }

    public List<String> comparatorAgents() {
        return get(PreferenceFields.COMPARATOR_AGENTS);
    }

    public List<String> comparatorDevices() {
        return get(PreferenceFields.COMPARATOR_DEVICES);
    }

    public int comparatorNumCandidates() {
        Integer n = get(PreferenceFields.COMPARATOR_NUM_CANDIDATES);
        return n != null ? n : preferenceNumCandidates();
    }

    public int comparatorHistoryK() {
        Integer k = get(PreferenceFields.COMPARATOR_HISTORY_K);
        return k != null ? k : 1;
    }

    /** The {@code comparator_api_*} fields by key ({@link ApiComparatorSettings#FIELDS}). */
    public Map<String, Object> comparatorApiFields() {
        return PreferenceFields.COMPARATOR_API.stream().collect(LinkedHashMap::new, (out, f) -> out.put(f.key, get(f)),
                Map::putAll);
    }

    @Override
    protected Object resolved(ConfigField<?> field) {
        return field == PreferenceFields.COMPARATOR_NUM_CANDIDATES ? comparatorNumCandidates() : super.resolved(field);
    }

    /** The setters of the iterative fields most set from Java; every field is set by key ({@link #set}). */
    public abstract static sealed class Builder<C extends IterativePreferenceConfig, B extends Builder<C, B>>
            extends PreferenceConfig.Builder<C, B> permits MADPOIterConfig.Builder, MARLHFIterConfig.Builder {
        Builder(String configTypeName, String algorithmName, List<ConfigField<?>> fields, Map<String, String> hints) {
            super(configTypeName, algorithmName, fields, hints);
        }

        public B numIterations(int numIterations) {
            return put(PreferenceFields.NUM_ITERATIONS, numIterations);
        }

        public B preferenceReplayMode(String mode) {
            return put(PreferenceFields.PREFERENCE_REPLAY_MODE, ReplayMode.parse(mode));
        }

        public B logRewardDistribution(boolean log) {
            return put(PreferenceFields.LOG_REWARD_DISTRIBUTION, log);
        }

        public B policyCheckpointDir(String dir) {
            return put(PreferenceFields.POLICY_CHECKPOINT_DIR, dir);
        }

        public B comparatorPolicy(String policy) {
            return put(PreferenceFields.COMPARATOR_POLICY, ComparatorPolicy.parse(policy));
        }

        public B comparatorGenerationMode(String mode) {
            return put(PreferenceFields.COMPARATOR_GENERATION_MODE, CollaborationMode.parse(mode));
        }

        public B comparatorCentralizedAgentIndex(int index) {
            return put(PreferenceFields.COMPARATOR_CENTRALIZED_AGENT_INDEX, index);
        }

        public B comparatorAgents(List<String> agents) {
            return put(PreferenceFields.COMPARATOR_AGENTS, agents);
        }

        public B comparatorDevices(List<String> devices) {
            return put(PreferenceFields.COMPARATOR_DEVICES, devices);
        }

        public B comparatorHistoryK(Integer k) {
            return put(PreferenceFields.COMPARATOR_HISTORY_K, k);
        }
    }
}
