package comlrl.learning;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.data.BuiltinTasks;
import comlrl.data.Dataset;
import comlrl.reward.LengthRatioReward;
import comlrl.trainers.preference.MARLHFIterConfig;
import comlrl.trainers.preference.MARLHFIterTrainer;
import comlrl.utils.Formatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * MARLHFIter improves the length-ratio evaluation reward (the task reward) over 3 iterations on
 * the built-in tiny model with the settings of examples/marlhf-iter.yaml, against the live policy
 * ({@code current}) and the policy two iterations back ({@code history}, k = 2): the mean over seeds 42,
 * 1 and 2 rises by more than 0.1, as MARLHF's (one run's gain on this 2-layer random model depends much
 * on its seed; measured with evaluation's own seed stream: history 0.374 → 0.512). Tagged slow.
 */
@Tag("slow")
class MARLHFIterLearningTest {
    @Test
    void againstTheCurrentPolicy() {
        improvesTheEvaluationReward("current");
    }

    /**
     * The history comparator: tagged {@code extra} too (CI leaves it out; run it with
     * {@code -Dgroups=extra -Dtest.excludedGroups=none}). Learning against the policy two iterations back is
     * shown in CI by {@link MADPOIterLearningTest}; the comparator itself (policies saved per iteration, the one
     * k back sampled) is the iterative trainers' shared {@code IterativeTrainer}, tested through MADPOIter
     * ({@code MADPOIterTrainerTest}, {@code PreferenceResumeTest}, {@code DdpTrainingTest}).
     */
    @Test
    @Tag("extra")
    void againstTheHistoryPolicy() {
        improvesTheEvaluationReward("history");
    }

    private static void improvesTheEvaluationReward(String comparator) {
        double[] mean = EvalRewards.overSeeds(seed -> run(comparator, seed), 42, 1, 2);
        double before = mean[0];
        double after = mean[1];
        assertThat(after).as("%s comparator: mean eval reward after 3 iterations (before: %.3f)", comparator, before)
                .isGreaterThan(before + 0.1);
    }

    /** The evaluation reward before and after one run with {@code seed}. */
    private static double[] run(String comparator, long seed) {
        Dataset.Split split = BuiltinTasks.load("builtin:length-ratio").trainTestSplit(0.2, 42);
        Formatter brief = item -> "Write a short response to this task:\n" + item.getString("prompt");
        Formatter detailed = item -> "Write a detailed response to this task:\n" + item.getString("prompt");
        Map<String, Object> fields = new LinkedHashMap<>(Map.ofEntries(Map.entry("num_agents", 2),
                Map.entry("num_iterations", 3), Map.entry("rl_algorithm", "magrpo"),
                Map.entry("comparator_policy", comparator), Map.entry("preference_num_candidates", 32),
                Map.entry("pair_selection", "reward_gap"), Map.entry("preference_pairs_per_sample", 16),
                Map.entry("preference_replay_mode", "all_history"), Map.entry("reward_model_device", "cpu"),
                Map.entry("reward_learning_rate", 1e-3), Map.entry("reward_num_train_epochs", 1),
                Map.entry("reward_train_batch_size", 8), Map.entry("num_train_epochs", 4),
                Map.entry("num_generations", 8), Map.entry("rollout_buffer_size", 2), Map.entry("max_new_tokens", 24),
                Map.entry("temperature", 1.0), Map.entry("top_p", 1.0), Map.entry("agent_learning_rate", 3e-3),
                Map.entry("eval_interval", 0), Map.entry("eval_num_samples", 2), Map.entry("logging_steps", 64),
                Map.entry("seed", seed)));
        fields.put("top_k", null);
        if (comparator.equals("history")) {
            fields.put("comparator_history_k", 2);
        }
        try (MARLHFIterTrainer trainer = MARLHFIterTrainer.builder().agentModel("builtin:tiny").numAgents(2)
                .formatters(List.of(brief, detailed)).rewardFunc(new LengthRatioReward())
                .trainDataset(split.train()).evalDataset(split.test()).args(MARLHFIterConfig.fromMap(fields))
                .verbose(false).build()) {
            double before = EvalRewards.mean(trainer, 8);
            trainer.train();
            double after = EvalRewards.mean(trainer, 8);
            assertThat(trainer.iterationsDone()).isEqualTo(3);
            return new double[] {before, after};
        }
    }
}
