package comlrl.trainers.preference;

import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.rl.PairSelection;
import comlrl.utils.CollaborationMode;
import comlrl.utils.ConfigField;
import comlrl.utils.FieldTableConfig;
import java.util.List;
import java.util.Map;

/**
 * What the preference configs share: every field of the reference's {@code MADPOConfig} (§7.1) and
 * ours, and the cross-field validation. Immutable; each field is declared once, in
 * {@link PreferenceFields} or {@link comlrl.utils.TrainerFields} (defaults: {@code docs/CONFIG.md}).
 * {@code num_turns} must be 1; {@code num_train_epochs} counts MADPO's passes over the preference
 * pairs (shuffled into batches of {@code train_batch_size}), or MARLHF's RL passes over the task
 * items; with {@code ddp_split: agents} agent i lives on process {@code i mod W}.
 *
 * <p>Where we differ from the reference: as every {@link FieldTableConfig}, and {@code joint_mode}
 * must be aligned when the config is built (the reference fails later, generating candidates).
 */
public abstract sealed class PreferenceConfig extends FieldTableConfig permits MADPOConfig, MARLHFConfig,
        IterativePreferenceConfig {

    PreferenceConfig(Builder<?, ?> b) {
        super(b);
        checkAgentPlacement(false);
        checkReferenceDevices(usesReferenceModels(), actorCount(), "actor");
        check(numTurns() != 1 ? algorithmName() + " currently supports num_turns=1 only, got num_turns=" + numTurns()
                + ": a preference pair compares two single-turn joint completions; set num_turns to 1" : null);
        check(jointMode() != JointMode.ALIGNED ? algorithmName() + " preference generation currently supports aligned "
                + "joint_mode only, got \"" + jointMode() + "\": joint candidate k is the k-th completion of every "
                + "agent; set joint_mode to \"aligned\"" : null);
        check(pairSelection() == PairSelection.COMPARATOR_REWARD && !(this instanceof IterativePreferenceConfig)
                ? "pair_selection=\"comparator_reward\" ranks the current policy against a comparator: it belongs to "
                + "the iterative configs (MADPOIterConfig, MARLHFIterConfig); use reward_gap, random or all" : null);
        check(!pairSelection().takesLimit() && preferencePairsPerSample() != null ? "preference_pairs_per_sample must "
                + "be null when pair_selection='all', got " + preferencePairsPerSample() + " (its default is 16): "
                + "\"all\" keeps every pair with a reward gap; set preference_pairs_per_sample to null, or use "
                + "pair_selection \"reward_gap\" or \"random\" to keep the first N" : null);
    }

    /** Whether a frozen reference model is loaded per actor: reference KL, or {@code dpo_reference: frozen_initial}. */
    final boolean usesReferenceModels() {
        return referenceKlEnabled()
                || has(PreferenceFields.DPO_REFERENCE) && get(PreferenceFields.DPO_REFERENCE).needsReference();
    }

    public CollaborationMode collaborationMode() {
        return get(PreferenceFields.COLLABORATION_MODE);
    }

    /** The number of actor models: 1 in centralized mode, else {@link #numAgents()}. */
    public int actorCount() {
        return collaborationMode() == CollaborationMode.CENTRALIZED ? 1 : numAgents();
    }

    public JointMode jointMode() {
        return get(PreferenceFields.JOINT_MODE);
    }

    /** {@code advantage_mode}; MADPO's loss has none ({@link MARLHFConfig#advantageMode()} resolves MARLHF's). */
    public AdvantageMode advantageMode() {
        return get(PreferenceFields.ADVANTAGE_MODE);
    }

    public int preferenceNumCandidates() {
        return get(PreferenceFields.PREFERENCE_NUM_CANDIDATES);
    }

    public Integer preferencePairsPerSample() {
        return get(PreferenceFields.PREFERENCE_PAIRS_PER_SAMPLE);
    }

    public PairSelection pairSelection() {
        return get(PreferenceFields.PAIR_SELECTION);
    }

    public double dpoBeta() {
        return get(PreferenceFields.DPO_BETA);
    }

    public boolean useEnvironmentStep() {
        return get(PreferenceFields.USE_ENVIRONMENT_STEP);
    }

    public int environmentStepsPerPair() {
        return get(PreferenceFields.ENVIRONMENT_STEPS_PER_PAIR);
    }

    /**
     * Builds a config of type {@code C}; the setters take Java values as {@link PreferenceFields}
     * states them (a String overload reads the config spelling), {@link #apply(Map)} and
     * {@link #set(String, Object)} snake_case keys. {@link #build()} validates.
     *
     * @param <C> the config built
     * @param <B> the builder's own type
     */
    public abstract static sealed class Builder<C extends PreferenceConfig, B extends Builder<C, B>>
            extends FieldTableConfig.Builder<C, B> permits MADPOConfig.Builder, MARLHFConfig.Builder,
            IterativePreferenceConfig.Builder {
        Builder(String configTypeName, String algorithmName, List<ConfigField<?>> fields, Map<String, String> hints) {
            super(configTypeName, algorithmName, fields, hints);
        }

        public B collaborationMode(CollaborationMode collaborationMode) {
            return put(PreferenceFields.COLLABORATION_MODE, collaborationMode == null ? CollaborationMode.DECENTRALIZED
                    : collaborationMode);
        }

        public B collaborationMode(String collaborationMode) {
            return put(PreferenceFields.COLLABORATION_MODE, CollaborationMode.parse(collaborationMode));
        }

        public B discount(double discount) {
            return put(PreferenceFields.DISCOUNT, discount);
        }

        public B jointMode(JointMode jointMode) {
            return put(PreferenceFields.JOINT_MODE, jointMode == null ? JointMode.ALIGNED : jointMode);
        }

        public B jointMode(String jointMode) {
            return put(PreferenceFields.JOINT_MODE, JointMode.parse(jointMode));
        }

        public B advantageMode(AdvantageMode advantageMode) {
            return put(PreferenceFields.ADVANTAGE_MODE, advantageMode != null ? advantageMode
                    : defaultOf(PreferenceFields.ADVANTAGE_MODE));
        }

        public B advantageMode(String advantageMode) {
            return set(PreferenceFields.ADVANTAGE_MODE.key, advantageMode);
        }

        public B preferenceNumCandidates(int preferenceNumCandidates) {
            return put(PreferenceFields.PREFERENCE_NUM_CANDIDATES, preferenceNumCandidates);
        }

        public B preferencePairsPerSample(Integer preferencePairsPerSample) {
            return put(PreferenceFields.PREFERENCE_PAIRS_PER_SAMPLE, preferencePairsPerSample);
        }

        public B pairSelection(PairSelection pairSelection) {
            return put(PreferenceFields.PAIR_SELECTION, pairSelection == null ? PairSelection.REWARD_GAP
                    : pairSelection);
        }

        public B pairSelection(String pairSelection) {
            return put(PreferenceFields.PAIR_SELECTION, PairSelection.parse(pairSelection));
        }

        public B dpoBeta(double dpoBeta) {
            return put(PreferenceFields.DPO_BETA, dpoBeta);
        }

        public B useEnvironmentStep(boolean useEnvironmentStep) {
            return put(PreferenceFields.USE_ENVIRONMENT_STEP, useEnvironmentStep);
        }

        public B environmentStepsPerPair(int environmentStepsPerPair) {
            return put(PreferenceFields.ENVIRONMENT_STEPS_PER_PAIR, environmentStepsPerPair);
        }
    }
}
