/**
 * Preference-based trainers (reference §7): {@link comlrl.trainers.preference.MADPOConfig}
 * (multi-agent DPO on pairs of joint completions ranked by the task reward) and
 * {@link comlrl.trainers.preference.MARLHFConfig} (a joint reward model learned from such pairs,
 * then online RL against it), both {@link comlrl.trainers.preference.PreferenceConfig}s whose
 * fields are declared once in one table; {@link comlrl.trainers.preference.PreferencePairs} selects
 * an item's pairs ({@link comlrl.trainers.preference.PairSelection}) and
 * {@link comlrl.trainers.preference.MADPOLoss} holds the DPO loss and its gradient as weights for
 * the scorer.
 */
package comlrl.trainers.preference;
