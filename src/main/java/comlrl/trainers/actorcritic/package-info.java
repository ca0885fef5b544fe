/**
 * Actor-critic trainers (reference §5): {@link comlrl.trainers.actorcritic.IACConfig} (independent
 * actor-critic: a critic per agent, or a value head on each actor) and
 * {@link comlrl.trainers.actorcritic.MAACConfig} (one critic shared by all agents), both
 * {@link comlrl.trainers.actorcritic.ActorCriticConfig}s whose fields are declared once in one table;
 * {@link comlrl.trainers.actorcritic.ActorCriticSources} resolves which models, tokenizers and devices
 * a trainer uses, without loading anything. The trainers themselves come later.
 */
package comlrl.trainers.actorcritic;
