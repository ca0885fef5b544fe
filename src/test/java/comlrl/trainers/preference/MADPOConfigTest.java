package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.rl.PairSelection;
import comlrl.utils.CollaborationMode;
import comlrl.utils.ParallelTraining;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class MADPOConfigTest {

    @Test
    void defaultsMatchTheReferenceTable() {
        MADPOConfig c = MADPOConfig.builder().build();
        // §7.1, in the reference's order
        assertThat(c.numTrainEpochs()).isEqualTo(20);
        assertThat(c.agentLearningRate()).isEqualTo(5e-6);
        assertThat(c.loggingSteps()).isEqualTo(50);
        assertThat(c.numAgents()).isEqualTo(2);
        assertThat(c.collaborationMode()).isEqualTo(CollaborationMode.DECENTRALIZED);
        assertThat(c.parallelTraining()).isEqualTo(ParallelTraining.NONE);
        assertThat(c.agentDevices()).isNull();
        assertThat(c.maxNewTokens()).isEqualTo(256);
        assertThat(c.temperature()).isEqualTo(0.6);
        assertThat(c.topP()).isEqualTo(0.6);
        assertThat(c.topK()).isEqualTo(50);
        assertThat(c.numTurns()).isEqualTo(1);
        assertThat(c.get(PreferenceFields.DISCOUNT)).isEqualTo(1.0);
        assertThat(c.jointMode()).isEqualTo(JointMode.ALIGNED);
        assertThat(c.earlyTerminationThreshold()).isNull();
        assertThat(c.externalPromptPassthrough()).isFalse();
        assertThat(c.evalInterval()).isEqualTo(16);
        assertThat(c.evalNumSamples()).isEqualTo(4);
        assertThat(c.evalBatchSize()).isEqualTo(1);
        assertThat(c.rolloutBufferSize()).isEqualTo(2);
        assertThat(c.trainBatchSize()).isEqualTo(2); // null → rollout_buffer_size
        assertThat(c.advantageNormalization()).isTrue();
        assertThat(c.advantageMode()).isEqualTo(AdvantageMode.MEAN);
        assertThat(c.referenceKlEnabled()).isFalse();
        assertThat(c.referenceKlCoef()).isEqualTo(0.1);
        assertThat(c.referenceDevices()).isNull();
        assertThat(c.preferenceNumCandidates()).isEqualTo(80);
        assertThat(c.preferencePairsPerSample()).isEqualTo(16);
        assertThat(c.pairSelection()).isEqualTo(PairSelection.REWARD_GAP);
        assertThat(c.dpoBeta()).isEqualTo(0.1);
        assertThat(c.useEnvironmentStep()).isTrue();
        assertThat(c.environmentStepsPerPair()).isEqualTo(2);
        // ours
        assertThat(c.dpoReference()).isEqualTo(DpoReference.NONE);
        assertThat(c.seed()).isEqualTo(42L);
        assertThat(c.gradientCheckpointing()).isFalse();
        assertThat(c.generationKwargs()).isEmpty();
        assertThat(c.skipNonfiniteSamples()).isFalse();
        assertThat(c.saveTotalLimit()).isNull();
        assertThat(c.algorithmName()).isEqualTo("MADPO");
        assertThat(c.actorCount()).isEqualTo(2);
    }

    @Test
    void keysAreTheReferenceOrderThenOurs() {
        assertThat(MADPOConfig.keys()).containsExactly("num_train_epochs", "agent_learning_rate", "logging_steps",
                "num_agents", "collaboration_mode", "parallel_training", "agent_devices", "max_new_tokens",
                "temperature", "top_p", "top_k", "num_turns", "discount", "joint_mode", "early_termination_threshold",
                "external_prompt_passthrough", "eval_interval", "eval_num_samples", "eval_batch_size",
                "rollout_buffer_size", "train_batch_size", "advantage_normalization", "advantage_mode",
                "reference_kl_enabled", "reference_kl_coef", "reference_devices", "preference_num_candidates",
                "preference_pairs_per_sample", "pair_selection", "dpo_beta", "use_environment_step",
                "environment_steps_per_pair", "dpo_reference", "ddp_split", "seed", "gradient_checkpointing",
                "generation_kwargs", "skip_nonfinite_samples", "save_total_limit", "stop_strings", "eval_num_generations");
        assertThat(MADPOConfig.builder().build().toMap().keySet()).containsExactlyElementsOf(MADPOConfig.keys());
    }

    @Test
    void toMapWritesResolvedValuesAndEnumsAsConfigStrings() {
        Map<String, Object> map = MADPOConfig.builder().rolloutBufferSize(6).build().toMap();
        assertThat(map).contains(entry("train_batch_size", 6), entry("collaboration_mode", "decentralized"),
                entry("parallel_training", "none"), entry("joint_mode", "aligned"), entry("advantage_mode", "mean"),
                entry("pair_selection", "reward_gap"), entry("dpo_reference", "none"), entry("top_k", 50),
                entry("preference_pairs_per_sample", 16), entry("seed", 42L), entry("agent_devices", null));
    }

    @Test
    void fromMapReadsSnakeCaseAndRoundTrips() {
        Map<String, Object> yaml = new LinkedHashMap<>();
        yaml.put("num_train_epochs", "3");
        yaml.put("collaboration_mode", "Centralized");
        yaml.put("pair_selection", "ALL");
        yaml.put("preference_pairs_per_sample", "null");
        yaml.put("preference_num_candidates", 6);
        yaml.put("dpo_beta", "0.05");
        yaml.put("dpo_reference", "frozen_initial");
        yaml.put("reference_devices", "cpu");
        yaml.put("top_k", "none");
        yaml.put("joint_mode", "align");
        yaml.put("generation_kwargs", Map.of("repetition_penalty", 1.05));
        MADPOConfig c = MADPOConfig.fromMap(yaml);
        assertThat(c.numTrainEpochs()).isEqualTo(3);
        assertThat(c.collaborationMode()).isEqualTo(CollaborationMode.CENTRALIZED);
        assertThat(c.actorCount()).isEqualTo(1);
        assertThat(c.pairSelection()).isEqualTo(PairSelection.ALL);
        assertThat(c.preferencePairsPerSample()).isNull();
        assertThat(c.preferenceNumCandidates()).isEqualTo(6);
        assertThat(c.dpoBeta()).isEqualTo(0.05);
        assertThat(c.dpoReference()).isEqualTo(DpoReference.FROZEN_INITIAL);
        assertThat(c.referenceDevices()).containsExactly("cpu");
        assertThat(c.topK()).isNull();
        assertThat(c.jointMode()).isEqualTo(JointMode.ALIGNED);
        assertThat(c.generationKwargs()).containsEntry("repetition_penalty", 1.05);
        assertThat(MADPOConfig.fromMap(c.toMap())).isEqualTo(c);
        assertThat(c.toBuilder().build()).isEqualTo(c);
        assertThat(c.toBuilder().dpoBeta(0.2).build()).isNotEqualTo(c);
        assertThat(c.toString()).startsWith("MADPOConfig{num_train_epochs=3, agent_learning_rate=5.0E-6");
    }

    @Test
    void builderSettersMatchTheirKeys() {
        MADPOConfig c = MADPOConfig.builder().numTrainEpochs(2).agentLearningRate(1e-5).loggingSteps(3).numAgents(3)
                .collaborationMode("centralized").parallelTraining("mp").agentDevices(List.of("cuda:0", "cuda:1"))
                .maxNewTokens(32).temperature(0.9).topP(0.95).topK(0).numTurns(1).discount(0.9)
                .jointMode(JointMode.ALIGNED).earlyTerminationThreshold(0.5).externalPromptPassthrough(true)
                .evalInterval(0).evalNumSamples(2).evalBatchSize(3).rolloutBufferSize(4).trainBatchSize(8)
                .advantageNormalization(false).advantageMode("rloo").referenceKlEnabled(true).referenceKlCoef(0.2)
                .referenceDevices("cpu").preferenceNumCandidates(4).preferencePairsPerSample(3)
                .pairSelection(PairSelection.RANDOM).dpoBeta(0.5).useEnvironmentStep(false).environmentStepsPerPair(5)
                .dpoReference(DpoReference.FROZEN_INITIAL).seed(7).gradientCheckpointing(true)
                .generationKwargs(Map.of("min_p", 0.1)).skipNonfiniteSamples(true).saveTotalLimit(2).build();
        Map<String, Object> expected = new HashMap<>();
        expected.put("num_train_epochs", 2);
        expected.put("agent_learning_rate", 1e-5);
        expected.put("logging_steps", 3);
        expected.put("num_agents", 3);
        expected.put("collaboration_mode", "centralized");
        expected.put("parallel_training", "mp");
        expected.put("agent_devices", List.of("cuda:0", "cuda:1"));
        expected.put("max_new_tokens", 32);
        expected.put("temperature", 0.9);
        expected.put("top_p", 0.95);
        expected.put("top_k", 0);
        expected.put("num_turns", 1);
        expected.put("discount", 0.9);
        expected.put("joint_mode", "aligned");
        expected.put("early_termination_threshold", 0.5);
        expected.put("external_prompt_passthrough", true);
        expected.put("eval_interval", 0);
        expected.put("eval_num_samples", 2);
        expected.put("eval_batch_size", 3);
        expected.put("rollout_buffer_size", 4);
        expected.put("train_batch_size", 8);
        expected.put("advantage_normalization", false);
        expected.put("advantage_mode", "rloo");
        expected.put("reference_kl_enabled", true);
        expected.put("reference_kl_coef", 0.2);
        expected.put("reference_devices", List.of("cpu"));
        expected.put("preference_num_candidates", 4);
        expected.put("preference_pairs_per_sample", 3);
        expected.put("pair_selection", "random");
        expected.put("dpo_beta", 0.5);
        expected.put("use_environment_step", false);
        expected.put("environment_steps_per_pair", 5);
        expected.put("dpo_reference", "frozen_initial");
        expected.put("ddp_split", "data");
        expected.put("seed", 7L);
        expected.put("gradient_checkpointing", true);
        expected.put("generation_kwargs", Map.of("min_p", 0.1));
        expected.put("skip_nonfinite_samples", true);
        expected.put("save_total_limit", 2);
        expected.put("stop_strings", null);
        expected.put("eval_num_generations", 1);
        assertThat(c.toMap()).containsExactlyInAnyOrderEntriesOf(expected);
        assertThat(MADPOConfig.builder().advantageMode((AdvantageMode) null).build().advantageMode())
                .isEqualTo(AdvantageMode.MEAN);
    }

    static Stream<Arguments> rules() {
        return Stream.of(
                rule("num_train_epochs", b -> b.numTrainEpochs(0), "num_train_epochs must be >= 1, got 0"),
                rule("agent_learning_rate", b -> b.agentLearningRate(-1e-6), "agent_learning_rate must be a finite "
                        + "number >= 0 (the default is 5e-6), got -1.0E-6"),
                rule("logging_steps", b -> b.loggingSteps(0), "logging_steps must be >= 1, got 0 (1 logs every entry)"),
                rule("num_agents", b -> b.numAgents(0), "num_agents must be >= 1, got 0"),
                rule("mp without agent_devices", b -> b.parallelTraining("mp"), "parallel_training=\"mp\" requires "
                        + "explicit agent_devices (one device per agent, e.g. [\"cuda:0\", \"cuda:1\"]); set "
                        + "agent_devices or use parallel_training=\"none\""),
                rule("agent_devices empty", b -> b.agentDevices(List.of()), "agent_devices must not be an empty list"),
                rule("max_new_tokens", b -> b.maxNewTokens(0), "max_new_tokens must be >= 1, got 0"),
                rule("temperature", b -> b.temperature(0), "temperature must be a finite number > 0"),
                rule("top_p", b -> b.topP(1.5), "top_p must be in (0, 1] (1 disables nucleus sampling), got 1.5"),
                rule("top_k", b -> b.topK(-1), "top_k must be >= 0, got -1 (0 disables top-k"),
                rule("num_turns 0", b -> b.numTurns(0), "num_turns must be >= 1, got 0"),
                rule("num_turns 2", b -> b.numTurns(2), "MADPO currently supports num_turns=1 only, got num_turns=2"),
                rule("discount", b -> b.discount(1.5), "discount must be in [0, 1]"),
                rule("joint_mode cross", b -> b.jointMode("cross"), "MADPO preference generation currently supports "
                        + "aligned joint_mode only, got \"cross\""),
                rule("early_termination_threshold", b -> b.earlyTerminationThreshold(Double.NaN),
                        "early_termination_threshold must be a number, or null to disable early termination"),
                rule("eval_interval", b -> b.evalInterval(-1), "eval_interval must be >= 0, got -1"),
                rule("eval_num_samples", b -> b.evalNumSamples(0), "eval_num_samples must be >= 1, got 0"),
                rule("eval_batch_size", b -> b.evalBatchSize(0), "eval_batch_size must be >= 1, got 0"),
                rule("rollout_buffer_size", b -> b.rolloutBufferSize(0), "rollout_buffer_size must be >= 1, got 0"),
                rule("train_batch_size", b -> b.trainBatchSize(0), "train_batch_size must be >= 1, got 0 (leave it "
                        + "unset to use rollout_buffer_size)"),
                rule("reference_kl_coef", b -> b.referenceKlCoef(-0.1), "reference_kl_coef must be a finite number "
                        + ">= 0, got -0.1"),
                rule("reference_devices count", b -> b.referenceKlEnabled(true).referenceDevices(List.of("a", "b", "c")),
                        "reference_devices length (3) must be 1 or 2"),
                rule("reference_devices count with frozen_initial", b -> b.dpoReference("frozen_initial")
                        .referenceDevices(List.of("a", "b", "c")), "reference_devices length (3) must be 1 or 2"),
                rule("reference_devices count centralized", b -> b.collaborationMode("centralized")
                        .referenceKlEnabled(true).referenceDevices(List.of("a", "b")),
                        "reference_devices length (2) must be 1 (one frozen reference per actor"),
                rule("preference_num_candidates", b -> b.preferenceNumCandidates(1), "preference_num_candidates must "
                        + "be >= 2, got 1"),
                rule("preference_pairs_per_sample", b -> b.preferencePairsPerSample(0), "preference_pairs_per_sample "
                        + "must be >= 1, got 0 (or null to keep every pair with a reward gap)"),
                rule("all with a cap", b -> b.pairSelection("all"), "preference_pairs_per_sample must be null when "
                        + "pair_selection='all', got 16"),
                rule("dpo_beta zero", b -> b.dpoBeta(0), "dpo_beta must be a finite number > 0"),
                rule("dpo_beta infinite", b -> b.dpoBeta(Double.POSITIVE_INFINITY), "dpo_beta must be a finite "
                        + "number > 0"),
                rule("environment_steps_per_pair", b -> b.environmentStepsPerPair(0), "environment_steps_per_pair "
                        + "must be >= 1, got 0"),
                rule("generation_kwargs temperature", b -> b.generationKwargs(Map.of("temperature", 1.0)),
                        "generation_kwargs must not set temperature"),
                rule("save_total_limit", b -> b.saveTotalLimit(0), "save_total_limit must be >= 1, got 0"));
    }

    private static Arguments rule(String name, Consumer<MADPOConfig.Builder> change, String message) {
        return Arguments.of(name, change, message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void eachRuleRejectsWithItsMessage(String name, Consumer<MADPOConfig.Builder> change, String message) {
        MADPOConfig.Builder builder = MADPOConfig.builder();
        change.accept(builder);
        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("MADPOConfig: ")
                .hasMessageContaining(message)
                .hasMessageEndingWith(".");
    }

    @Test
    void theBoundariesAreAccepted() {
        MADPOConfig c = MADPOConfig.builder().preferenceNumCandidates(2).preferencePairsPerSample(1).dpoBeta(1e-9)
                .environmentStepsPerPair(1).evalInterval(0).discount(0).referenceKlEnabled(true)
                .referenceDevices(List.of("cpu", "cpu")).build();
        assertThat(c.preferenceNumCandidates()).isEqualTo(2);
        assertThat(MADPOConfig.builder().pairSelection("all").preferencePairsPerSample(null).build().pairSelection())
                .isEqualTo(PairSelection.ALL);
        // without references, reference_devices is not counted (as the reference)
        assertThat(MADPOConfig.builder().referenceDevices(List.of("a", "b", "c")).build().referenceDevices()).hasSize(3);
    }

    @Test
    void enumValuesAreParsedWithTheirMessages() {
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("pair_selection", "best")))
                .hasMessage("pair_selection must be one of: reward_gap, all, random, comparator_reward (got \"best\")");
        assertThat(MADPOConfig.fromMap(Map.of("pair_selection", "null")).pairSelection())
                .isEqualTo(PairSelection.REWARD_GAP);
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("dpo_reference", "initial")))
                .hasMessageStartingWith("dpo_reference must be one of: none, frozen_initial (got \"initial\"): "
                        + "\"none\" is reference-free");
        assertThat(MADPOConfig.fromMap(Map.of("dpo_reference", "~")).dpoReference()).isEqualTo(DpoReference.NONE);
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("collaboration_mode", "shared")))
                .hasMessageStartingWith("collaboration_mode must be \"decentralized\" or \"centralized\"");
        assertThat(MADPOConfig.fromMap(Map.of("parallel_training", "ddp")).parallelTraining())
                .isEqualTo(comlrl.utils.ParallelTraining.DDP);
        assertThat(MARLHFConfig.fromMap(Map.of("parallel_training", "ddp")).parallelTraining())
                .isEqualTo(comlrl.utils.ParallelTraining.DDP);
        assertThat(MARLHFConfig.fromMap(Map.of("parallel_training", "ddp", "ddp_split", "agents")).ddpSplit())
                .isEqualTo(comlrl.utils.DdpSplit.AGENTS);
        assertThat(MADPOConfig.builder().ddpSplit("agents").build().toMap()).containsEntry("ddp_split", "agents");
        assertThat(MADPOIterConfig.builder().build().ddpSplit()).isEqualTo(comlrl.utils.DdpSplit.DATA);
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("ddp_split", "pairs")))
                .hasMessageContaining("ddp_split must be \"data\"");
        assertThat(MADPOIterConfig.fromMap(Map.of("parallel_training", "ddp", "ddp_split", "agents")).ddpSplit())
                .isEqualTo(comlrl.utils.DdpSplit.AGENTS);
        assertThat(MADPOIterConfig.fromMap(Map.of("parallel_training", "ddp")).parallelTraining())
                .isEqualTo(comlrl.utils.ParallelTraining.DDP);
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("parallel_training", "ddp", "agent_devices", List.of("cpu"))))
                .hasMessageContaining("remove agent_devices");
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("dpo_beta", "hot")))
                .hasMessage("MADPOConfig key 'dpo_beta' must be a number, got \"hot\" (String)");
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("use_environment_step", 1)))
                .hasMessage("MADPOConfig key 'use_environment_step' must be true or false, got 1 (Integer)");
    }

    @Test
    void unknownKeysFailWithHints() {
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("beta", 0.1)))
                .hasMessageStartingWith("Unknown MADPOConfig key 'beta': use 'dpo_beta'.");
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("num_generations", 4)))
                .hasMessageContaining("num_generations is a MARLHFConfig field");
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("reward_model_name", "m")))
                .hasMessageContaining("reward_model_name is a MARLHFConfig field");
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("learning_rate", 1e-5)))
                .hasMessageContaining("use 'agent_learning_rate'");
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("num_iterations", 3)))
                .hasMessageContaining("MADPOIterConfig");
        assertThatThrownBy(() -> MADPOConfig.fromMap(Map.of("pair_selectoin", "all")))
                .hasMessageStartingWith("Unknown MADPOConfig key 'pair_selectoin'; did you mean 'pair_selection'?");
    }
}
