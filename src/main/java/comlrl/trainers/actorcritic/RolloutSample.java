package comlrl.trainers.actorcritic;

import comlrl.data.TaskItem;
import java.util.Arrays;

/**
 * One agent's sample of one turn (reference §5.4), what {@code metrics_callback} receives and what
 * an update trains on.
 *
 * @param agentIdx the agent
 * @param prompt the prompt text the agent saw
 * @param completion the decoded response (special tokens skipped)
 * @param fullInputIds prompt ⊕ response ids (the response cut at its first pad id)
 * @param promptLen prompt tokens
 * @param responseLen response tokens (before the first pad id)
 * @param oldLogprob {@code Σ_t log π(y_t)} of the response at rollout time
 * @param oldValue the critic's value at rollout time ({@code V_old}; MAAC: the joint critic's)
 * @param reward the raw reward (after the reward processor, before KL shaping)
 * @param returns the logged return ({@code G_t}, discounted for IAC; the suffix sum for MAAC)
 * @param advantage {@code A = adv_target − V_old} (not normalised)
 * @param normalizedAdvantage {@code Â} of the update group (equal to {@code advantage} until an update normalises it)
 * @param turnIdx the turn, 0-based
 * @param referenceKl the sequence KL to the reference policy (0 when shaping is off)
 * @param referenceKlPenalty {@code β·KL}
 * @param valueTarget {@code y}, the critic's target
 * @param generationIdx which of the G generations (0 in multi-turn runs)
 * @param jointInputIds MAAC: the joint critic input ids, else null
 * @param item the task item
 */
public record RolloutSample(int agentIdx, String prompt, String completion, long[] fullInputIds, int promptLen,
        int responseLen, double oldLogprob, double oldValue, double reward, double returns, double advantage,
        double normalizedAdvantage, int turnIdx, double referenceKl, double referenceKlPenalty, double valueTarget,
        int generationIdx, long[] jointInputIds, TaskItem item) {

    /** The response token ids ({@code fullInputIds[promptLen:]}). */
    public long[] responseIds() {
        return Arrays.copyOfRange(fullInputIds, promptLen, fullInputIds.length);
    }

    /** The prompt token ids. */
    public long[] promptIds() {
        return Arrays.copyOfRange(fullInputIds, 0, promptLen);
    }

    /** A copy with {@code Â} set. */
    public RolloutSample withNormalizedAdvantage(double a) {
        return new RolloutSample(agentIdx, prompt, completion, fullInputIds, promptLen, responseLen, oldLogprob, oldValue,
                reward, returns, advantage, a, turnIdx, referenceKl, referenceKlPenalty, valueTarget, generationIdx,
                jointInputIds, item);
    }
}
