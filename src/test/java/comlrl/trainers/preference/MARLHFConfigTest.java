package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import comlrl.rl.AdvantageMode;
import comlrl.rl.PairSelection;
import comlrl.trainers.actorcritic.CriticType;
import comlrl.utils.TrainerFields;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class MARLHFConfigTest {

    @Test
    void defaultsMatchTheReferenceTable() {
        MARLHFConfig c = MARLHFConfig.builder().build();
        // §7.3's own fields
        assertThat(c.rlAlgorithm()).isEqualTo(RlAlgorithm.MAGRPO);
        assertThat(c.numGenerations()).isEqualTo(4);
        assertThat(c.rewardModelName()).isNull();
        assertThat(c.rewardModelDevice()).isEqualTo("cuda:0");
        assertThat(c.rewardLearningRate()).isEqualTo(1e-5);
        assertThat(c.rewardNumTrainEpochs()).isEqualTo(1);
        assertThat(c.rewardTrainBatchSize()).isEqualTo(1);
        assertThat(c.rewardMaxLength()).isNull();
        assertThat(c.rewardFreezeBackbone()).isFalse();
        assertThat(c.criticModelName()).isNull();
        assertThat(c.criticLearningRate()).isEqualTo(5e-6); // null → agent_learning_rate
        assertThat(c.criticDevices()).isNull();
        assertThat(c.get(TrainerFields.USE_SEPARATE_CRITIC)).isTrue();
        assertThat(c.get(CriticType.CONFIG_FIELD)).isEqualTo(CriticType.V);
        assertThat(c.get(TrainerFields.VALUE_LOSS_COEF)).isEqualTo(0.6);
        assertThat(c.get(TrainerFields.VALUE_CLIP_RANGE)).isEqualTo(0.2);
        assertThat(c.get(TrainerFields.CRITIC_VALUE_HEAD_HIDDEN_DIM)).isNull();
        assertThat(c.get(TrainerFields.VALUE_HEAD_HIDDEN_DIM)).isNull();
        // MADPO's fields keep MADPO's defaults
        assertThat(c.numTrainEpochs()).isEqualTo(20);
        assertThat(c.preferenceNumCandidates()).isEqualTo(80);
        assertThat(c.preferencePairsPerSample()).isEqualTo(16);
        assertThat(c.pairSelection()).isEqualTo(PairSelection.REWARD_GAP);
        assertThat(c.dpoBeta()).isEqualTo(0.1);
        assertThat(c.advantageMode()).isEqualTo(AdvantageMode.MEAN);
        assertThat(c.seed()).isEqualTo(42L);
        assertThat(c.algorithmName()).isEqualTo("MARLHF");
    }

    @Test
    void keysAreMadposReferenceFieldsThenMarlhfsThenOurs() {
        List<String> madpoReference = MADPOConfig.keys().subList(0, MADPOConfig.keys().indexOf("dpo_reference"));
        assertThat(MARLHFConfig.keys()).startsWith(madpoReference.toArray(String[]::new))
                .doesNotContain("dpo_reference")
                .endsWith("rl_algorithm", "num_generations", "reward_model_name", "reward_model_device",
                        "reward_learning_rate", "reward_num_train_epochs", "reward_train_batch_size",
                        "reward_max_length", "reward_freeze_backbone", "critic_model_name", "critic_learning_rate",
                        "critic_devices", "use_separate_critic", "critic_type", "value_loss_coef", "value_clip_range",
                        "critic_value_head_hidden_dim", "value_head_hidden_dim", "ddp_split", "seed",
                        "gradient_checkpointing", "generation_kwargs", "skip_nonfinite_samples", "save_total_limit",
                        "stop_strings", "loss_type", "scale_rewards", "mask_truncated_completions", "dynamic_sampling",
                        "dynamic_sampling_max_draws", "rl_num_iterations", "epsilon", "epsilon_high",
                        "importance_sampling_level")
                .hasSize(madpoReference.size() + 18 + 1 + 6 + 5 + 4);
    }

    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource({"magrpo, mean", "mareinforce, raw", "mareforce, raw", "maremax, max", "marloo, rloo", "MAReMax, max"})
    void theMagrpoFamilySetsTheAdvantageMode(String algorithm, String mode) {
        MARLHFConfig c = MARLHFConfig.fromMap(Map.of("rl_algorithm", algorithm));
        assertThat(c.advantageMode()).isEqualTo(AdvantageMode.parse(mode));
        assertThat(c.rlAlgorithm().isActorCritic()).isFalse();
        assertThat(c.toMap()).contains(entry("advantage_mode", mode), entry("rl_algorithm", c.rlAlgorithm().configName()));
        assertThat(MARLHFConfig.fromMap(c.toMap())).isEqualTo(c);
        // an explicit value that agrees is accepted
        assertThat(c.toBuilder().advantageMode(mode).build().advantageMode()).isEqualTo(AdvantageMode.parse(mode));
    }

    @Test
    void anUnsetAdvantageModeFollowsTheAlgorithmThroughToBuilder() {
        MARLHFConfig c = MARLHFConfig.builder().rlAlgorithm("maremax").build();
        assertThat(c.toBuilder().rlAlgorithm(RlAlgorithm.MARLOO).build().advantageMode()).isEqualTo(AdvantageMode.RLOO);
    }

    @Test
    void actorCriticBackendsKeepTheAdvantageModeAndTakeOneGeneration() {
        MARLHFConfig iac = MARLHFConfig.builder().rlAlgorithm("iac").numGenerations(1).build();
        assertThat(iac.rlAlgorithm().isActorCritic()).isTrue();
        assertThat(iac.advantageMode()).isEqualTo(AdvantageMode.MEAN);
        assertThat(MARLHFConfig.builder().rlAlgorithm(RlAlgorithm.MAAC).numGenerations(1).advantageMode("max").build()
                .advantageMode()).isEqualTo(AdvantageMode.MAX);
        assertThat(RlAlgorithm.parse(null)).isEqualTo(RlAlgorithm.MAGRPO);
        assertThat(RlAlgorithm.MAAC.minGenerations()).isEqualTo(1);
        assertThat(RlAlgorithm.MARLOO.minGenerations()).isEqualTo(2);
    }

    @Test
    void criticLearningRateNullFollowsTheAgentRate() {
        MARLHFConfig c = MARLHFConfig.builder().agentLearningRate(3e-6).build();
        assertThat(c.criticLearningRate()).isEqualTo(3e-6);
        assertThat(c.toMap()).containsEntry("critic_learning_rate", 3e-6);
        assertThat(c.toBuilder().agentLearningRate(1e-6).build().criticLearningRate()).isEqualTo(1e-6);
        assertThat(c.toBuilder().criticLearningRate(2e-5).build().criticLearningRate()).isEqualTo(2e-5);
    }

    @Test
    void fromMapReadsTheMarlhfFieldsAndRoundTrips() {
        MARLHFConfig c = MARLHFConfig.fromMap(Map.of("rl_algorithm", "IAC", "num_generations", "1",
                "reward_model_name", "Qwen/Qwen2.5-0.5B", "reward_model_device", "none", "reward_max_length", 512,
                "critic_type", "Q", "value_clip_range", "null", "critic_devices", "cuda:1",
                "reward_train_batch_size", 2, "use_separate_critic", false));
        assertThat(c.rlAlgorithm()).isEqualTo(RlAlgorithm.IAC);
        assertThat(c.rewardModelName()).isEqualTo("Qwen/Qwen2.5-0.5B");
        assertThat(c.rewardModelDevice()).isNull();
        assertThat(c.rewardMaxLength()).isEqualTo(512);
        assertThat(c.get(CriticType.CONFIG_FIELD)).isEqualTo(CriticType.Q);
        assertThat(c.get(TrainerFields.VALUE_CLIP_RANGE)).isNull();
        assertThat(c.criticDevices()).containsExactly("cuda:1");
        assertThat(c.rewardTrainBatchSize()).isEqualTo(2);
        assertThat(c.get(TrainerFields.USE_SEPARATE_CRITIC)).isFalse();
        assertThat(MARLHFConfig.fromMap(c.toMap())).isEqualTo(c);
        assertThat(c.toString()).startsWith("MARLHFConfig{num_train_epochs=20");
        assertThat(c).isNotEqualTo(MADPOConfig.builder().build());
    }

    @Test
    void builderSettersMatchTheirKeys() {
        MARLHFConfig c = MARLHFConfig.builder().rlAlgorithm(RlAlgorithm.MAAC).numGenerations(2).rewardModelName("rm")
                .rewardModelDevice("cpu").rewardLearningRate(2e-5).rewardNumTrainEpochs(3).rewardTrainBatchSize(4)
                .rewardMaxLength(64).rewardFreezeBackbone(true).criticModelName("critic").criticLearningRate(1e-4)
                .criticDevices(List.of("cuda:0", "cuda:1")).useSeparateCritic(false).criticType("q").valueLossCoef(1.0)
                .valueClipRange(0.5).criticValueHeadHiddenDim(16).valueHeadHiddenDim(0).build();
        assertThat(c.toMap()).contains(entry("rl_algorithm", "maac"), entry("num_generations", 2),
                entry("reward_model_name", "rm"), entry("reward_model_device", "cpu"),
                entry("reward_learning_rate", 2e-5), entry("reward_num_train_epochs", 3),
                entry("reward_train_batch_size", 4), entry("reward_max_length", 64),
                entry("reward_freeze_backbone", true), entry("critic_model_name", "critic"),
                entry("critic_learning_rate", 1e-4), entry("critic_devices", List.of("cuda:0", "cuda:1")),
                entry("use_separate_critic", false), entry("critic_type", "q"), entry("value_loss_coef", 1.0),
                entry("value_clip_range", 0.5), entry("critic_value_head_hidden_dim", 16),
                entry("value_head_hidden_dim", 0));
        assertThat(MARLHFConfig.builder().criticDevices("cpu").criticType((CriticType) null).rlAlgorithm((RlAlgorithm) null)
                .build().toMap()).contains(entry("critic_devices", List.of("cpu")), entry("critic_type", "v"),
                entry("rl_algorithm", "magrpo"));
    }

    static Stream<Arguments> rules() {
        return Stream.of(
                rule("rl_algorithm", b -> b.set("rl_algorithm", "ppo"), "rl_algorithm must be one of: magrpo, "
                        + "mareinforce, maremax, marloo, maac, iac (got \"ppo\")"),
                rule("num_generations MAGRPO family", b -> b.numGenerations(1), "num_generations must be >= 2 for "
                        + "MAGRPO-family MARLHF backends, got 1 with rl_algorithm=\"magrpo\""),
                rule("num_generations marloo", b -> b.rlAlgorithm("marloo").numGenerations(1), "num_generations must "
                        + "be >= 2 for MAGRPO-family MARLHF backends, got 1 with rl_algorithm=\"marloo\""),
                rule("num_generations AC", b -> b.rlAlgorithm("iac").numGenerations(0), "num_generations must be "
                        + ">= 1, got 0"),
                rule("advantage_mode conflict", b -> b.rlAlgorithm("maremax").advantageMode("rloo"),
                        "advantage_mode=\"rloo\" contradicts rl_algorithm=\"maremax\", which trains with "
                        + "advantage_mode=\"max\""),
                rule("reward_model_name blank", b -> b.rewardModelName(" "), "reward_model_name must not be blank; use "
                        + "null to use the first agent's model"),
                rule("reward_model_device blank", b -> b.rewardModelDevice(""), "reward_model_device must not be "
                        + "blank; use null for the trainer's device"),
                rule("critic_model_name blank", b -> b.criticModelName(""), "critic_model_name must not be blank"),
                rule("reward_learning_rate", b -> b.rewardLearningRate(0), "reward_learning_rate must be a finite "
                        + "number > 0 (the default is 1e-5), got 0.0"),
                rule("reward_num_train_epochs", b -> b.rewardNumTrainEpochs(0), "reward_num_train_epochs must be >= 1, "
                        + "got 0"),
                rule("reward_train_batch_size", b -> b.rewardTrainBatchSize(0), "reward_train_batch_size must be >= 1, "
                        + "got 0"),
                rule("reward_max_length", b -> b.rewardMaxLength(0), "reward_max_length must be >= 1, got 0 (or null "
                        + "to score the whole joint text)"),
                rule("critic_learning_rate", b -> b.criticLearningRate(0.0), "critic_learning_rate must be a finite "
                        + "number > 0, or null to use agent_learning_rate, got 0.0"),
                rule("critic_devices empty", b -> b.criticDevices(List.of()), "critic_devices must not be an empty list"),
                rule("critic_type", b -> b.set("critic_type", "a"), "critic_type must be one of: 'v', 'q'"),
                rule("value_loss_coef", b -> b.valueLossCoef(0), "value_loss_coef must be a finite number > 0"),
                rule("value_clip_range", b -> b.valueClipRange(0.0), "value_clip_range must be a finite number > 0, or "
                        + "null to turn value clipping off, got 0.0"),
                rule("critic_value_head_hidden_dim", b -> b.criticValueHeadHiddenDim(-1),
                        "critic_value_head_hidden_dim must be >= 0, got -1"),
                rule("value_head_hidden_dim", b -> b.valueHeadHiddenDim(-1), "value_head_hidden_dim must be >= 0, got -1"),
                // MADPO's rules hold for MARLHF, named after it
                rule("num_turns", b -> b.numTurns(2), "MARLHF currently supports num_turns=1 only, got num_turns=2"),
                rule("joint_mode", b -> b.jointMode("crossed"), "MARLHF preference generation currently supports "
                        + "aligned joint_mode only"),
                rule("all with a cap", b -> b.pairSelection("all").preferencePairsPerSample(4),
                        "preference_pairs_per_sample must be null when pair_selection='all', got 4"),
                rule("reference_devices count", b -> b.referenceKlEnabled(true).referenceDevices(List.of("a", "b", "c")),
                        "reference_devices length (3) must be 1 or 2"));
    }

    private static Arguments rule(String name, Consumer<MARLHFConfig.Builder> change, String message) {
        return Arguments.of(name, change, message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void eachRuleRejectsWithItsMessage(String name, Consumer<MARLHFConfig.Builder> change, String message) {
        assertThatThrownBy(() -> {
            MARLHFConfig.Builder builder = MARLHFConfig.builder();
            change.accept(builder);
            builder.build();
        }).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void ruleFailuresAtBuildNameTheConfig() {
        assertThatThrownBy(() -> MARLHFConfig.builder().numGenerations(1).build())
                .hasMessageStartingWith("MARLHFConfig: num_generations must be >= 2").hasMessageEndingWith(".");
    }

    @Test
    void unknownKeysFailWithHints() {
        assertThatThrownBy(() -> MARLHFConfig.fromMap(Map.of("dpo_reference", "frozen_initial")))
                .hasMessageStartingWith("Unknown MARLHFConfig key 'dpo_reference': MARLHF trains a reward model");
        assertThatThrownBy(() -> MARLHFConfig.fromMap(Map.of("weight_decay", 0.1)))
                .hasMessageContaining("AdamW weight decay is fixed at 0.01");
        assertThatThrownBy(() -> MARLHFConfig.fromMap(Map.of("reward_model", "m")))
                .hasMessageContaining("did you mean 'reward_model_name'?");
    }
}
