/**
 * What every trainer shares: agent-source rules, device placement, the multi-turn transition contract and custom evaluation callbacks. Algorithms live in sub-packages (reinforce; later actorcritic and preference).
 */
package comlrl.trainers;
