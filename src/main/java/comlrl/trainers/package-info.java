/**
 * What every trainer shares: agent-source rules, device placement, the multi-turn transition contract
 * and custom evaluation callbacks, and the algorithm registry ({@link comlrl.trainers.Algorithms}).
 * The algorithms live in sub-packages: {@code reinforce} (the MAGRPO family), {@code actorcritic}
 * (IAC, MAAC), {@code preference} (MADPO, MARLHF and their iterative versions); {@code common} holds
 * the assembly they share (agents, rollouts, rewards, checkpoints, settings).
 */
package comlrl.trainers;
