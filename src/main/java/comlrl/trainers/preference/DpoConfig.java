package comlrl.trainers.preference;

import comlrl.utils.TrainerConfig;

/** What the DPO configs ({@link MADPOConfig}, {@link MADPOIterConfig}) have that the RLHF ones do not. */
interface DpoConfig extends TrainerConfig {
    /**
     * {@code dpo_reference} (default "none"): what each agent's log-ratio Δ is measured against.
     * {@link DpoReference#NONE} is the reference's reference-free loss,
     * {@code Δ = log π(w) − log π(l)}; {@link DpoReference#FROZEN_INITIAL} is standard DPO against a
     * frozen copy of the agent's initial policy (placed by {@code reference_devices}),
     * {@code Δ = (log π(w) − log π_ref(w)) − (log π(l) − log π_ref(l))}. Not in the reference.
     */
    default DpoReference dpoReference() {
        return get(PreferenceFields.DPO_REFERENCE);
    }

    /** The setter the DPO configs' builders share. */
    interface Builder<B> {
        /** Sets one snake_case key (see {@code FieldTableConfig.Builder#set}). */
        B set(String key, Object value);

        /** "none" or "frozen_initial" (any case); null = "none". */
        default B dpoReference(String dpoReference) {
            return set(PreferenceFields.DPO_REFERENCE.key, dpoReference);
        }
    }
}
