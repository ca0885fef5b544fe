/**
 * Preference-based trainers (reference §7): {@link comlrl.trainers.preference.MADPOTrainer}
 * (multi-agent DPO on pairs of joint completions ranked by the task reward) and
 * {@link comlrl.trainers.preference.MARLHFTrainer} (a {@link comlrl.trainers.preference.JointRewardModel}
 * learned from such pairs, then an RL backend against it), configured by
 * {@link comlrl.trainers.preference.PreferenceConfig}s whose fields are declared once in one table.
 * Both build their preference set with one collector from the initial policy;
 * {@link comlrl.trainers.preference.PairSelection} selects an item's pairs and {@link comlrl.trainers.preference.MADPOLoss}
 * holds the DPO loss and its gradient as weights for the scorer. MARLHF runs its backend as a stage:
 * the backend logs into MARLHF's logger and its checkpoints carry MARLHF's state
 * ({@link comlrl.checkpoint.TrainerCheckpoint.Extension}).
 */
package comlrl.trainers.preference;
