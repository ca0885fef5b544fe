/**
 * MAGRPO and the MA-REINFORCE family: one config type per algorithm (MAGRPOConfig, MAREINFORCEConfig,
 * MAReMaxConfig, MARLOOConfig, CentralizedMAGRPOConfig) and its trainer. {@link
 * comlrl.trainers.reinforce.MAGRPOTrainer} holds the whole algorithm (rollout tree, returns, loss,
 * evaluation, logging, checkpoints); MAREINFORCETrainer, MAReMaxTrainer and MARLOOTrainer only change the
 * baseline through their config; CentralizedMAGRPOTrainer runs it with one actor playing every role
 * through a {@link comlrl.trainers.reinforce.CentralizedAdapter}.
 */
package comlrl.trainers.reinforce;
