package comlrl.trainers.preference;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * One preference pair of the preference set (reference §7.2 {@code PreferencePair}): per agent the
 * prompt, the winner's and the loser's completion, as text and as token ids (completion ids cut at
 * the first pad), with the joint rewards; in a checkpoint one object of {@code preference_pairs.json}
 * with the snake_case keys below.
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
record PreferencePair(@JsonProperty("prompt_texts") List<String> promptTexts,
        @JsonProperty("winner_texts") List<String> winnerTexts, @JsonProperty("loser_texts") List<String> loserTexts,
        @JsonProperty("prompts") List<long[]> prompts, @JsonProperty("winners") List<long[]> winners,
        @JsonProperty("losers") List<long[]> losers, @JsonProperty("winner_reward") double winnerReward,
        @JsonProperty("loser_reward") double loserReward,
        @JsonProperty("candidate_reward_mean") double candidateRewardMean,
        @JsonProperty("reference_winners") double[] referenceWinners,
        @JsonProperty("reference_losers") double[] referenceLosers) {

    /** The winner's joint text for the reward model ({@link JointRewardModel#jointText}). */
    String winnerJointText() {
        return JointRewardModel.jointText(promptTexts, winnerTexts);
    }

    /** The loser's joint text for the reward model. */
    String loserJointText() {
        return JointRewardModel.jointText(promptTexts, loserTexts);
    }
}
