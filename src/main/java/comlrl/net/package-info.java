/**
 * What every HTTP call of the project stands on, and what keeps its credentials off disk: response
 * bodies read under a stall limit and a whole-response deadline with a size cap
 * ({@link comlrl.net.ResponseBodies}), the {@code Retry-After} header ({@link comlrl.net.RetryAfter}),
 * and the process-wide registry of secrets (API keys, tokens) that every writer scrubs from its text
 * ({@link comlrl.net.Secrets}). Plain Java over {@code java.net.http}; it depends on no other package
 * of the project, so any of them may use it.
 */
package comlrl.net;
