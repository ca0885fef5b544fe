/**
 * Actor-critic trainers (reference §5): {@link comlrl.trainers.actorcritic.IACTrainer} (independent
 * actor-critic: a critic per agent, or a value head on each actor) and
 * {@link comlrl.trainers.actorcritic.MAACTrainer} (one critic shared by all agents), configured by
 * {@link comlrl.trainers.actorcritic.IACConfig} / {@link comlrl.trainers.actorcritic.MAACConfig},
 * {@link comlrl.trainers.actorcritic.ActorCriticConfig}s whose fields are declared once in one table;
 * {@link comlrl.trainers.actorcritic.ActorCriticSources} resolves which models, tokenizers and devices
 * a trainer uses, without loading anything. The loop both trainers share is
 * {@link comlrl.trainers.actorcritic.ActorCriticTrainerBase}; the critic is a strategy (a separate
 * model per agent, a value head on each actor, or one centralised critic), the buffers and minibatch
 * updates live in one class, the formulas in {@link comlrl.trainers.actorcritic.ActorCriticLoss}, the
 * builder's setters in {@link comlrl.trainers.actorcritic.ActorCriticBuilder}.
 */
package comlrl.trainers.actorcritic;
