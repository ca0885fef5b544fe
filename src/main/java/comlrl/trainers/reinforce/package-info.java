/**
 * MAGRPO and the MA-REINFORCE family: one config type per algorithm (MAGRPOConfig, MAREINFORCEConfig,
 * MAReMaxConfig, MARLOOConfig, CentralizedMAGRPOConfig) and its trainer, all running
 * {@link comlrl.trainers.reinforce.ReinforceTrainer} (rollout tree, returns, loss step, the epoch loop)
 * with another baseline, or, centralized, with one actor playing every role
 * ({@link comlrl.trainers.reinforce.Centralization}).
 */
package comlrl.trainers.reinforce;
