/**
 * Actor-critic trainers (reference §5): {@link comlrl.trainers.actorcritic.IACTrainer} (a critic per
 * agent, or a value head on each actor) and {@link comlrl.trainers.actorcritic.MAACTrainer} (one
 * critic shared by all agents), configured by {@link comlrl.trainers.actorcritic.IACConfig} /
 * {@link comlrl.trainers.actorcritic.MAACConfig}. The loop both share is
 * {@link comlrl.trainers.actorcritic.ActorCriticTrainerBase}, the critic a strategy, the formulas in
 * {@link comlrl.trainers.actorcritic.ActorCriticLoss}.
 */
package comlrl.trainers.actorcritic;
