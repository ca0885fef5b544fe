/**
 * Reward functions: the {@link comlrl.reward.RewardFunction} contract (one list of completions per
 * agent in actor order, plus the task items; one reward per joint response, or with
 * {@link comlrl.reward.AgentRewardFunction} one per agent of it) with adapters for the
 * common shapes, the reward-length rule of the reference ({@link comlrl.reward.RewardLengths}), the
 * reward step every trainer takes ({@link comlrl.reward.JointRewarder}: the call with {@code batch_items},
 * the count check, the reward processor, non-finite values), and
 * the built-in rewards usable from config files: {@link comlrl.reward.LengthRatioReward} (the seed
 * documentation's example), {@link comlrl.reward.ExternalCommandReward} (a reward computed by a
 * long-lived child process speaking JSON lines) and {@link comlrl.reward.RewardModelReward} (an
 * existing Hugging Face sequence-classification reward model), all reachable through
 * {@link comlrl.reward.RewardFunctions#fromConfig(java.util.Map, java.nio.file.Path)}; and MARLHF's learned
 * reward model ({@link comlrl.reward.JointRewardModel}: a sequence classifier trained on preference pairs with
 * the Bradley–Terry loss), saved so that it can serve again as a {@code reward_model} reward.
 */
package comlrl.reward;
