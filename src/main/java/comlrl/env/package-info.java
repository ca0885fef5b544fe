/**
 * Built-in environments: what a team is trained on, as one {@code environment:} section of a run
 * config (its task set, its agents' prompts and its reward). {@link comlrl.env.Environments#expand}
 * fills the parts a config leaves out; a part the config gives is kept.
 * {@link comlrl.env.ExternalCommandTransition}: a multi-turn transition answered by an external process.
 * Depends on {@code comlrl.reward}, {@code comlrl.utils} and the trainers' public callbacks
 * ({@code EvalLogger}, {@code ExternalTransition}); the CLI depends on it.
 */
package comlrl.env;
