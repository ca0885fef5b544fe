package comlrl.trainers.preference;

import comlrl.utils.ConfigNames;
/**
 * {@code preference_scoring_reward} (MARLHFIter): what ranks each iteration's current and
 * comparator candidates — the task reward, or the reward model learned in the previous iteration
 * (the task reward in the first, when there is none yet).
 */
public enum PreferenceScoringReward {
    /** The task reward ({@code reward_func}); the default. */
    TASK,
    /** The previous iteration's learned reward model. */
    REWARD_MODEL;

    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Parses a config value (case and blanks ignored); null means "task". */
    public static PreferenceScoringReward parse(String value) {
        return ConfigNames.parse("preference_scoring_reward", value, TASK, values(),
                PreferenceScoringReward::configName, "");
    }

    @Override
    public String toString() {
        return configName();
    }
}
