package comlrl.trainers.preference;

import com.fasterxml.jackson.annotation.JsonProperty;
import comlrl.reward.JointRewardModel;
import java.util.List;

/**
 * One preference pair of the preference set (reference §7.2 {@code PreferencePair}): per agent the
 * prompt ({@code formatter_i(item)}, before any chat template), the winner's and the loser's
 * completion, as text and as token ids (completion ids cut at the first pad), with the joint rewards
 * of the winner, the loser and the item's candidates (mean, the logged reward_mean); with
 * {@code dpo_reference: frozen_initial} each agent's frozen log π_ref(w|x) and log π_ref(l|x), else
 * null. In a checkpoint one object of {@code preference_pairs.json} with the snake_case keys below.
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

    /** The loser's joint text. */
    String loserJointText() {
        return JointRewardModel.jointText(promptTexts, loserTexts);
    }
}
