/**
 * MAGRPO and the MA-REINFORCE family: one config type per algorithm (MAGRPOConfig, MAREINFORCEConfig, MAReMaxConfig, MARLOOConfig, CentralizedMAGRPOConfig) and the trainer that runs them.
 */
package comlrl.trainers.reinforce;
