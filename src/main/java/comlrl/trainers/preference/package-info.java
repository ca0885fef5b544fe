/**
 * Preference-based trainers (reference §7): {@link comlrl.trainers.preference.MADPOTrainer}
 * (multi-agent DPO on pairs of joint completions ranked by the task reward),
 * {@link comlrl.trainers.preference.MARLHFTrainer} (a {@link comlrl.reward.JointRewardModel}
 * learned from such pairs, then an RL backend run as its stage) and their iterative versions, configured
 * by {@link comlrl.trainers.preference.PreferenceConfig}s whose fields are declared once in one table.
 */
package comlrl.trainers.preference;
