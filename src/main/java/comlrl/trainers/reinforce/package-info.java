/**
 * MAGRPO and the MA-REINFORCE family: one config type per algorithm (MAGRPOConfig, MAREINFORCEConfig,
 * MAReMaxConfig, MARLOOConfig, CentralizedMAGRPOConfig) and its trainer. {@link
 * comlrl.trainers.reinforce.ReinforceTrainer} holds the algorithm (rollout tree, returns, loss step, the
 * epoch loop), assembled from its builder by MAGRPOParts (agents, optimizers, rollout engine, evaluator,
 * logger, checkpoint); AgentBuffers drains the agents' samples into minibatch updates and UpdateMetrics
 * logs them; the family's builder setters are in {@link comlrl.trainers.reinforce.ReinforceBuilder}.
 * MAREINFORCETrainer, MAReMaxTrainer and MARLOOTrainer only change the
 * baseline through their config; MAGRPOTrainer and its variants extend it, and CentralizedMAGRPOTrainer runs it with one actor playing every role
 * through a {@link comlrl.trainers.reinforce.CentralizedAdapter}.
 */
package comlrl.trainers.reinforce;
