package comlrl.trainers.preference;

import comlrl.utils.TrainerConfig;

/** What the DPO configs ({@link MADPOConfig}, {@link MADPOIterConfig}) have that the RLHF ones do not. */
interface DpoConfig extends TrainerConfig {
    /** {@code dpo_reference}: what each agent's log-ratio Δ is measured against ({@link DpoReference}). */
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
