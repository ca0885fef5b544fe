package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.trainers.TestRewards;
import comlrl.trainers.TinyAgents;
import comlrl.trainers.reinforce.ImportanceSamplingLevel;
import comlrl.trainers.reinforce.LossType;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.trainers.reinforce.ScaleRewards;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MAGRPO family's update rules ({@link MAGRPOConfig#updateRuleFields()}) in MARLHF configs: each
 * non-default value reaches the RL stage's config (MARLHF and, through its inner MARLHF config,
 * MARLHFIter), and an IAC/MAAC backend rejects them by name.
 */
class MARLHFUpdateRulesTest {
    @TempDir
    static Path models;
    static List<String> team;

    @BeforeAll
    static void writeAgents() {
        team = List.of(TinyAgents.create(models.resolve("a"), 11).toString(),
                TinyAgents.create(models.resolve("b"), 12).toString());
    }

    /** Every update rule at a value other than its default. */
    private static Map<String, Object> rules() {
        Map<String, Object> rules = new LinkedHashMap<>();
        rules.put("loss_type", "dr_grpo");
        rules.put("scale_rewards", "none");
        rules.put("mask_truncated_completions", true);
        rules.put("dynamic_sampling", true);
        rules.put("dynamic_sampling_max_draws", 3);
        return rules;
    }

    private static Map<String, Object> marlhf(String rl) {
        Map<String, Object> c = new LinkedHashMap<>(Map.of("num_agents", 2, "preference_num_candidates", 2,
                "num_generations", 2, "max_new_tokens", 4, "reward_model_device", "cpu", "rl_algorithm", rl));
        c.putAll(rules());
        return c;
    }

    private static void assertRules(MAGRPOConfig rl) {
        assertThat(rl.lossType()).isEqualTo(LossType.DR_GRPO);
        assertThat(rl.scaleRewards()).isEqualTo(ScaleRewards.NONE);
        assertThat(rl.advantageNormalization()).isFalse();
        assertThat(rl.maskTruncatedCompletions()).isTrue();
        assertThat(rl.dynamicSampling()).isTrue();
        assertThat(rl.dynamicSamplingMaxDraws()).isEqualTo(3);
    }

    @Test
    void everyUpdateRuleReachesTheRlStage() {
        assertThat(MARLHFConfig.keys()).containsAll(rules().keySet());
        assertThat(MARLHFIterConfig.keys()).containsAll(rules().keySet());
        // the rule set does not contain every defaulted field: the test sets them all
        assertThat(MAGRPOConfig.updateRuleFields()).extracting(f -> f.key).containsExactlyElementsOf(rules().keySet());
        for (String rl : List.of("magrpo", "marloo")) {
            try (MARLHFTrainer t = MARLHFTrainer.builder().agents(team).rewardFunc(TestRewards.lengthDifference())
                    .trainDataset(MADPOTrainerTest.tasks(2)).args(MARLHFConfig.fromMap(marlhf(rl))).verbose(false)
                    .build()) {
                assertRules(((MAGRPOTrainer) t.rlTrainer()).args());
            }
        }
        // MARLHFIter's iterations run MARLHF with its inner config
        MARLHFIterConfig iter = MARLHFIterConfig.fromMap(marlhf("maremax"));
        MARLHFConfig inner = iter.marlhf();
        assertThat(inner.valuesOf(rules().keySet(), java.util.Set.of())).isEqualTo(Map.of("loss_type", "dr_grpo",
                "scale_rewards", "none", "mask_truncated_completions", true, "dynamic_sampling", true,
                "dynamic_sampling_max_draws", 3));
    }

    @Test
    void anActorCriticBackendRejectsEachRuleByName() {
        for (Map.Entry<String, Object> rule : rules().entrySet()) {
            Map<String, Object> c = new LinkedHashMap<>(marlhf("iac"));
            c.put("num_generations", 1);
            c.keySet().removeAll(rules().keySet());
            c.put(rule.getKey(), rule.getValue());
            assertThatThrownBy(() -> MARLHFConfig.fromMap(c)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(rule.getKey() + "=" + rule.getValue())
                    .hasMessageContaining("rl_algorithm=\"iac\" does not use");
        }
        assertThat(MARLHFConfig.fromMap(Map.of("rl_algorithm", "iac", "num_generations", 1, "loss_type", "sequence_sum"))
                .rlAlgorithm()).isEqualTo(RlAlgorithm.IAC);
    }

    /** The clipped-surrogate fields at values other than their defaults (num_iterations under its MARLHF key). */
    private static Map<String, Object> clip() {
        Map<String, Object> clip = new LinkedHashMap<>();
        clip.put("rl_num_iterations", 3);
        clip.put("epsilon", 0.1);
        clip.put("epsilon_high", 0.28);
        clip.put("importance_sampling_level", "sequence");
        return clip;
    }

    @Test
    void theClippedSurrogateReachesTheRlStage() {
        Map<String, Object> c = new LinkedHashMap<>(marlhf("magrpo"));
        c.putAll(clip());
        try (MARLHFTrainer t = MARLHFTrainer.builder().agents(team).rewardFunc(TestRewards.lengthDifference())
                .trainDataset(MADPOTrainerTest.tasks(2)).args(MARLHFConfig.fromMap(c)).verbose(false).build()) {
            MAGRPOConfig rl = ((MAGRPOTrainer) t.rlTrainer()).args();
            assertThat(rl.numIterations()).isEqualTo(3);
            assertThat(rl.epsilon()).isEqualTo(0.1);
            assertThat(rl.epsilonHigh()).isEqualTo(0.28);
            assertThat(rl.importanceSamplingLevel()).isEqualTo(ImportanceSamplingLevel.SEQUENCE);
        }
        // MARLHFIter: num_iterations counts its iterations, rl_num_iterations reaches the inner MARLHF config
        Map<String, Object> iter = new LinkedHashMap<>(c);
        iter.put("num_iterations", 2);
        MARLHFConfig inner = MARLHFIterConfig.fromMap(iter).marlhf();
        assertThat(inner.rlNumIterations()).isEqualTo(3);
        assertThat(inner.valuesOf(List.of("epsilon", "epsilon_high", "importance_sampling_level"), java.util.Set.of()))
                .isEqualTo(Map.of("epsilon", 0.1, "epsilon_high", 0.28, "importance_sampling_level", "sequence"));
    }

    @Test
    void anActorCriticBackendRejectsTheClippedSurrogate() {
        for (Map.Entry<String, Object> field : clip().entrySet()) {
            for (String rl : List.of("iac", "maac")) {
                Map<String, Object> c = new LinkedHashMap<>(Map.of("rl_algorithm", rl, "num_generations", 1));
                c.put(field.getKey(), field.getValue());
                assertThatThrownBy(() -> MARLHFConfig.fromMap(c)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining(field.getKey() + "=" + field.getValue())
                        .hasMessageContaining("rl_algorithm=\"" + rl + "\" does not use");
            }
        }
        assertThatThrownBy(() -> MARLHFConfig.fromMap(Map.of("num_iterations", 2)))
                .hasMessageContaining("rl_num_iterations");
    }
}
