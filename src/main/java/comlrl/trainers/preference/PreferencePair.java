package comlrl.trainers.preference;

import java.util.List;

/**
 * One preference pair of the preference set (reference §7.2 {@code PreferencePair}): per agent the
 * prompt, the winner's and the loser's completion, as text and as token ids (completion ids cut at
 * the first pad), with the joint rewards.
 *
 * @param promptTexts each agent's formatted prompt ({@code formatter_i(item)}, before any chat template)
 * @param winnerTexts each agent's completion in the preferred joint response
 * @param loserTexts each agent's completion in the other joint response
 * @param prompts each agent's encoded prompt
 * @param winners each agent's winner completion ids
 * @param losers each agent's loser completion ids
 * @param winnerReward the winner's joint reward
 * @param loserReward the loser's joint reward
 * @param candidateRewardMean mean joint reward of the item's candidates (the logged reward_mean)
 * @param referenceWinners with {@code dpo_reference: frozen_initial}, each agent's frozen log π_ref(w|x); else null
 * @param referenceLosers likewise for the losers
 */
record PreferencePair(List<String> promptTexts, List<String> winnerTexts, List<String> loserTexts, List<long[]> prompts,
        List<long[]> winners, List<long[]> losers, double winnerReward, double loserReward, double candidateRewardMean,
        double[] referenceWinners, double[] referenceLosers) {

    /** The winner's joint text for the reward model ({@link JointRewardModel#jointText}). */
    String winnerJointText() {
        return JointRewardModel.jointText(promptTexts, winnerTexts);
    }

    /** The loser's joint text for the reward model. */
    String loserJointText() {
        return JointRewardModel.jointText(promptTexts, loserTexts);
    }
}
