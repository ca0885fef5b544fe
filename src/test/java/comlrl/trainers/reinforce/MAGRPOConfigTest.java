package comlrl.trainers.reinforce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.rl.AdvantageMode;
import comlrl.rl.JointMode;
import comlrl.utils.CollaborationMode;
import comlrl.utils.ParallelTraining;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class MAGRPOConfigTest {

    @Test
    void defaultsMatchTheReference() {
        MAGRPOConfig c = MAGRPOConfig.builder().build();
        assertThat(c.algorithm()).isEqualTo(ReinforceAlgorithm.MAGRPO);
        assertThat(c.numTrainEpochs()).isEqualTo(20);
        assertThat(c.agentLearningRate()).isEqualTo(5e-6);
        assertThat(c.loggingSteps()).isEqualTo(50);
        assertThat(c.numAgents()).isEqualTo(2);
        assertThat(c.parallelTraining()).isEqualTo(ParallelTraining.NONE);
        assertThat(c.agentDevices()).isNull();
        assertThat(c.numGenerations()).isEqualTo(4);
        assertThat(c.maxNewTokens()).isEqualTo(256);
        assertThat(c.temperature()).isEqualTo(0.6);
        assertThat(c.topP()).isEqualTo(0.6);
        assertThat(c.topK()).isEqualTo(50);
        assertThat(c.numTurns()).isEqualTo(2);
        assertThat(c.discount()).isEqualTo(1.0);
        assertThat(c.jointMode()).isEqualTo(JointMode.ALIGNED);
        assertThat(c.earlyTerminationThreshold()).isEqualTo(-0.2);
        assertThat(c.externalPromptPassthrough()).isFalse();
        assertThat(c.evalInterval()).isEqualTo(16);
        assertThat(c.evalNumSamples()).isEqualTo(4);
        assertThat(c.evalBatchSize()).isEqualTo(1);
        assertThat(c.rolloutBufferSize()).isEqualTo(2);
        assertThat(c.trainBatchSize()).isEqualTo(2);                  // null → rollout_buffer_size
        assertThat(c.advantageNormalization()).isTrue();
        assertThat(c.advantageMode()).isEqualTo(AdvantageMode.MEAN);
        assertThat(c.referenceKlEnabled()).isFalse();                 // reference KL off by default
        assertThat(c.referenceKlCoef()).isEqualTo(0.1);
        assertThat(c.referenceDevices()).isNull();
        assertThat(c.seed()).isEqualTo(42L);
    }

    @Test
    void apiSketchExampleBuilds() {
        MAGRPOConfig config = MAGRPOConfig.builder()
                .numAgents(2).numTurns(1).numTrainEpochs(1).numGenerations(4).maxNewTokens(128)
                .evalInterval(4).evalNumSamples(2).evalBatchSize(1).loggingSteps(4)
                .build();
        assertThat(config.numTurns()).isEqualTo(1);
        assertThat(config.maxNewTokens()).isEqualTo(128);
        // seed doc "Training Entities": MAGRPOConfig(num_agents=3, num_turns=1, temperature=0.7, top_p=0.9, top_k=None)
        MAGRPOConfig entities = MAGRPOConfig.builder().numAgents(3).numTurns(1).temperature(0.7).topP(0.9).topK(null).build();
        assertThat(entities.topK()).isNull();
    }

    @Test
    void trainBatchSizeFollowsRolloutBufferUnlessSet() {
        assertThat(MAGRPOConfig.builder().rolloutBufferSize(5).build().trainBatchSize()).isEqualTo(5);
        assertThat(MAGRPOConfig.builder().rolloutBufferSize(5).trainBatchSize(2).build().trainBatchSize()).isEqualTo(2);
        // toBuilder keeps it unset, so it keeps following rollout_buffer_size
        MAGRPOConfig c = MAGRPOConfig.builder().rolloutBufferSize(5).build();
        assertThat(c.toBuilder().rolloutBufferSize(7).build().trainBatchSize()).isEqualTo(7);
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                rule("num_train_epochs", b -> b.numTrainEpochs(0), "num_train_epochs must be >= 1, got 0"),
                rule("agent_learning_rate negative", b -> b.agentLearningRate(-1e-5), "agent_learning_rate must be a finite number >= 0"),
                rule("agent_learning_rate NaN", b -> b.agentLearningRate(Double.NaN), "agent_learning_rate must be a finite number >= 0"),
                rule("logging_steps", b -> b.loggingSteps(0), "logging_steps must be >= 1, got 0"),
                rule("num_agents", b -> b.numAgents(0), "num_agents must be >= 1, got 0"),
                rule("mp without agent_devices", b -> b.parallelTraining("mp"),
                        "parallel_training=\"mp\" requires explicit agent_devices"),
                rule("agent_devices empty", b -> b.agentDevices(List.of()), "agent_devices must not be an empty list"),
                rule("agent_devices blank", b -> b.agentDevices(List.of("cuda:0", " ")), "agent_devices entries must be device names"),
                rule("num_generations", b -> b.numGenerations(1),
                        "num_generations must be >= 2, got 1: the group baseline requires multiple samples"),
                rule("max_new_tokens", b -> b.maxNewTokens(0), "max_new_tokens must be >= 1, got 0"),
                rule("temperature zero", b -> b.temperature(0), "temperature must be a finite number > 0 (sampling divides the logits by it; use a small value such as 0.1 for nearly greedy sampling), got 0.0"),
                rule("temperature infinite", b -> b.temperature(Double.POSITIVE_INFINITY), "temperature must be a finite number > 0"),
                rule("top_p zero", b -> b.topP(0), "top_p must be in (0, 1] (1 disables nucleus sampling), got 0.0"),
                rule("top_p above one", b -> b.topP(1.5), "top_p must be in (0, 1] (1 disables nucleus sampling), got 1.5"),
                rule("top_k", b -> b.topK(-1), "top_k must be >= 0, got -1 (0 disables top-k; null takes the model's "
                        + "generation_config.json value, else 50)"),
                rule("generation_kwargs", b -> b.generationKwargs(Map.of("repetition_penalti", 1.1)),
                        "Unknown generation_kwargs key 'repetition_penalti'"),
                rule("generation_kwargs", b -> b.generationKwargs(Map.of("top_k", 3)),
                        "generation_kwargs must not set top_k: it is a config field of its own"),
                rule("save_total_limit", b -> b.saveTotalLimit(0),
                        "save_total_limit must be >= 1, got 0 (null keeps every checkpoint)"),
                rule("num_turns", b -> b.numTurns(0), "num_turns must be >= 1, got 0"),
                rule("discount", b -> b.discount(Double.NaN), "discount must be a finite number"),
                rule("early_termination_threshold", b -> b.earlyTerminationThreshold(Double.NaN),
                        "early_termination_threshold must be a number, or null"),
                rule("eval_interval", b -> b.evalInterval(-1), "eval_interval must be >= 0, got -1"),
                rule("eval_num_samples (bug 11 fixed)", b -> b.evalNumSamples(0), "eval_num_samples must be >= 1, got 0"),
                rule("eval_batch_size", b -> b.evalBatchSize(0), "eval_batch_size must be >= 1, got 0"),
                rule("rollout_buffer_size", b -> b.rolloutBufferSize(0), "rollout_buffer_size must be >= 1, got 0"),
                rule("train_batch_size", b -> b.trainBatchSize(0), "train_batch_size must be >= 1, got 0"),
                rule("reference_kl_coef", b -> b.referenceKlCoef(-0.1), "reference_kl_coef must be a finite number >= 0, got -0.1"),
                rule("reference_devices empty", b -> b.referenceDevices(List.of()), "reference_devices must not be an empty list"),
                rule("collaboration_mode on MAGRPO", b -> b.collaborationMode(CollaborationMode.CENTRALIZED),
                        "collaboration_mode is a CentralizedMAGRPOConfig field"));
    }

    private static Arguments rule(String name, Consumer<MAGRPOConfig.Builder<?>> change, String message) {
        return Arguments.of(name, change, message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void everyRuleRejectsWithItsMessage(String name, Consumer<MAGRPOConfig.Builder<?>> change, String message) {
        MAGRPOConfig.Builder<MAGRPOConfig> builder = MAGRPOConfig.builder();
        change.accept(builder);
        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("MAGRPOConfig: ")
                .hasMessageContaining(message);
    }

    @Test
    void boundaryValuesAreAccepted() {
        MAGRPOConfig c = MAGRPOConfig.builder()
                .numTrainEpochs(1).agentLearningRate(0).loggingSteps(1).numAgents(1).numGenerations(2)
                .maxNewTokens(1).topP(1.0).topK(1).numTurns(1).evalInterval(0).evalNumSamples(1).evalBatchSize(1)
                .rolloutBufferSize(1).trainBatchSize(1).referenceKlCoef(0).earlyTerminationThreshold(null)
                .build();
        assertThat(c.evalInterval()).isZero();
        assertThat(c.earlyTerminationThreshold()).isNull();
        assertThat(MAGRPOConfig.builder().topK(null).build().topK()).isNull();
    }

    @Test
    void parallelTrainingValues() {
        // reference test_config_constraints: none/null/mp accepted (mp with devices), "invalid" and "auto" rejected
        assertThat(MAGRPOConfig.builder().parallelTraining("none").build().parallelTraining()).isEqualTo(ParallelTraining.NONE);
        assertThat(MAGRPOConfig.builder().parallelTraining("null").build().parallelTraining()).isEqualTo(ParallelTraining.NONE);
        assertThat(MAGRPOConfig.builder().parallelTraining((String) null).build().parallelTraining()).isEqualTo(ParallelTraining.NONE);
        MAGRPOConfig mp = MAGRPOConfig.builder().parallelTraining("mp").agentDevices(List.of("cuda:0", "cuda:1")).build();
        assertThat(mp.parallelTraining()).isEqualTo(ParallelTraining.MP);
        assertThat(mp.agentDevices()).containsExactly("cuda:0", "cuda:1");
        assertThat(MAGRPOConfig.builder().parallelTraining(ParallelTraining.MP).agentDevices("cuda:0").build().agentDevices())
                .containsExactly("cuda:0");
        for (String invalid : List.of("invalid", "auto")) {
            assertThatThrownBy(() -> MAGRPOConfig.builder().parallelTraining(invalid))
                    .hasMessageContaining("parallel_training must be \"none\", \"mp\" or \"ddp\"");
            assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("parallel_training", invalid)))
                    .hasMessageContaining("parallel_training must be \"none\", \"mp\" or \"ddp\"");
        }
        // several processes: ours (the reference rejects "ddp"); how they divide the work
        MAGRPOConfig ddp = MAGRPOConfig.fromMap(Map.of("parallel_training", "ddp", "ddp_split", "Agents"));
        assertThat(ddp.parallelTraining()).isEqualTo(ParallelTraining.DDP);
        assertThat(ddp.ddpSplit()).isEqualTo(comlrl.utils.DdpSplit.AGENTS);
        assertThat(MAGRPOConfig.builder().build().ddpSplit()).isEqualTo(comlrl.utils.DdpSplit.DATA);
        assertThat(MAGRPOConfig.fromMap(ddp.toMap())).isEqualTo(ddp);
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("ddp_split", "layers")))
                .hasMessageContaining("ddp_split must be \"data\"");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("parallel_training", "ddp", "agent_devices", List.of("cuda:1"))))
                .hasMessageContaining("parallel_training=\"ddp\" puts every model of a process on that process's device");
    }

    @Test
    void enumStringsParse() {
        MAGRPOConfig c = MAGRPOConfig.builder().jointMode("crossed").advantageMode("rloo").build();
        assertThat(c.jointMode()).isEqualTo(JointMode.CROSS);
        assertThat(c.advantageMode()).isEqualTo(AdvantageMode.RLOO);
        assertThatThrownBy(() -> MAGRPOConfig.builder().advantageMode("median"))
                .hasMessageContaining("\"mean\", \"raw\", \"max\", \"rloo\"");
        assertThatThrownBy(() -> MAGRPOConfig.builder().jointMode("zip")).hasMessageContaining("joint_mode");
    }

    @Test
    void fromMapReadsSnakeCaseWithTypeChecks() {
        Map<String, Object> values = new HashMap<>();
        values.put("num_turns", 1);
        values.put("num_generations", "8");            // --set style string
        values.put("agent_learning_rate", "5e-6");     // YAML 1.1 reads this as a string
        values.put("temperature", 0.7);
        values.put("top_k", null);
        values.put("early_termination_threshold", "none");
        values.put("agent_devices", "cuda:1");          // a string: broadcast
        values.put("parallel_training", "mp");
        values.put("joint_mode", "cross");
        values.put("advantage_normalization", "false");
        values.put("seed", 7);
        MAGRPOConfig c = MAGRPOConfig.fromMap(values);
        assertThat(c.numTurns()).isEqualTo(1);
        assertThat(c.numGenerations()).isEqualTo(8);
        assertThat(c.agentLearningRate()).isEqualTo(5e-6);
        assertThat(c.temperature()).isEqualTo(0.7);
        assertThat(c.topK()).isNull();
        assertThat(c.earlyTerminationThreshold()).isNull();
        assertThat(c.agentDevices()).containsExactly("cuda:1");
        assertThat(c.parallelTraining()).isEqualTo(ParallelTraining.MP);
        assertThat(c.jointMode()).isEqualTo(JointMode.CROSS);
        assertThat(c.advantageNormalization()).isFalse();
        assertThat(c.seed()).isEqualTo(7L);
        assertThat(c.maxNewTokens()).isEqualTo(256);    // untouched keys keep defaults
    }

    @Test
    void fromMapTypeErrors() {
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("num_generations", "four")))
                .hasMessage("MAGRPOConfig key 'num_generations' must be an integer, got \"four\" (String)");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("num_generations", 4.5)))
                .hasMessageContaining("must be an integer, got 4.5");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("advantage_normalization", "yes")))
                .hasMessageContaining("'advantage_normalization' must be true or false");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("joint_mode", 1)))
                .hasMessageContaining("'joint_mode' must be a string");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("agent_devices", List.of(0, 1))))
                .hasMessageContaining("'agent_devices' must be a string or a list of strings");
        // validation still runs after fromMap
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("num_generations", 1)))
                .hasMessageContaining("the group baseline requires multiple samples");
    }

    @Test
    void unknownKeySuggestsTheClosest() {
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("num_generation", 4)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Unknown MAGRPOConfig key 'num_generation'; did you mean 'num_generations'?")
                .hasMessageContaining("Valid keys: ");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("eval_intervall", 4)))
                .hasMessageContaining("did you mean 'eval_interval'?");
        // names from the reference's stale docs get a specific hint
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("learning_rate", 1e-5)))
                .hasMessageContaining("Unknown MAGRPOConfig key 'learning_rate': use 'agent_learning_rate'");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("weight_decay", 0.0)))
                .hasMessageContaining("AdamW weight decay is fixed at 0.01");
        assertThatThrownBy(() -> MAGRPOConfig.fromMap(Map.of("collaboration_mode", "centralized")))
                .hasMessageContaining("use CentralizedMAGRPOConfig");
        assertThatThrownBy(() -> MAREINFORCEConfig.fromMap(Map.of("num_turn", 1)))
                .hasMessageStartingWith("Unknown MAREINFORCEConfig key 'num_turn'; did you mean 'num_turns'?");
    }

    @Test
    void setParsesOneOverride() {
        MAGRPOConfig c = MAGRPOConfig.builder().set("num_generations", "8").set("top_k", "null").build();
        assertThat(c.numGenerations()).isEqualTo(8);
        assertThat(c.topK()).isNull();
    }

    private static MAGRPOConfig.Builder<?> nonDefaults(MAGRPOConfig.Builder<?> b) {
        return b.numTrainEpochs(3).agentLearningRate(1e-5).loggingSteps(4).numAgents(3)
                .parallelTraining(ParallelTraining.MP).agentDevices(List.of("cuda:0", "cuda:1", "cuda:2"))
                .numGenerations(6).maxNewTokens(64).temperature(0.9).topP(0.95).topK(null).numTurns(1)
                .discount(0.9).jointMode(JointMode.CROSS).earlyTerminationThreshold(null)
                .externalPromptPassthrough(true).evalInterval(0).evalNumSamples(10).evalBatchSize(2)
                .rolloutBufferSize(3).trainBatchSize(1).advantageNormalization(false)
                .referenceKlEnabled(true).referenceKlCoef(0.05).referenceDevices("cpu").seed(-5)
                .lossType(LossType.DAPO).maskTruncatedCompletions(true)
                .credit(Credit.COUNTERFACTUAL)
                .numIterations(3).epsilon(0.1).epsilonHigh(0.3).importanceSamplingLevel(ImportanceSamplingLevel.SEQUENCE);
    }

    @Test
    void toMapRoundTripsForEveryAlgorithm() throws Exception {
        ObjectMapper json = new ObjectMapper();
        for (ReinforceAlgorithm algorithm : ReinforceAlgorithm.values()) {
            for (MAGRPOConfig config : List.of(algorithm.builder().build(), nonDefaults(algorithm.builder()).build())) {
                Map<String, Object> map = config.toMap();
                assertThat(List.copyOf(map.keySet())).isEqualTo(algorithm.keys());
                assertThat(algorithm.fromMap(map)).isEqualTo(config);
                // through a config.json file and back
                String text = json.writeValueAsString(map);
                Map<String, Object> parsed = json.readValue(text, new TypeReference<LinkedHashMap<String, Object>>() {});
                MAGRPOConfig reread = algorithm.fromMap(parsed);
                assertThat(reread).isEqualTo(config).hasSameHashCodeAs(config);
                assertThat(reread.getClass()).isEqualTo(config.getClass());
            }
        }
    }

    @Test
    void toMapValues() {
        Map<String, Object> map = MAGRPOConfig.builder().build().toMap();
        // 26 reference fields + seed, gradient_checkpointing, generation_kwargs, skip_nonfinite_samples, save_total_limit,
        // ddp_split, eval_num_generations, loss_type, scale_rewards, mask_truncated_completions, credit,
        // dynamic_sampling, dynamic_sampling_max_draws, num_iterations, epsilon, epsilon_high, importance_sampling_level,
        // advantage_normalization_scope, stop_strings
        assertThat(map).hasSize(45)
                .containsEntry("num_train_epochs", 20)
                .containsEntry("parallel_training", "none")
                .containsEntry("ddp_split", "data")
                .containsEntry("agent_devices", null)
                .containsEntry("joint_mode", "aligned")
                .containsEntry("advantage_mode", "mean")
                .containsEntry("train_batch_size", 2)
                .containsEntry("top_k", 50)
                .containsEntry("early_termination_threshold", -0.2)
                .containsEntry("seed", 42L)
                .containsEntry("gradient_checkpointing", false)
                .containsEntry("eval_num_generations", 1)
                .containsEntry("loss_type", "sequence_sum")
                .containsEntry("scale_rewards", "group")
                .containsEntry("advantage_normalization", true)
                .containsEntry("mask_truncated_completions", false)
                .containsEntry("credit", "shared")
                .containsEntry("dynamic_sampling", false)
                .containsEntry("dynamic_sampling_max_draws", null)
                .containsEntry("num_iterations", 1)
                .containsEntry("epsilon", 0.2)
                .containsEntry("epsilon_high", null)
                .containsEntry("importance_sampling_level", "token")
                .containsEntry("advantage_normalization_scope", "agent")
                .doesNotContainKey("collaboration_mode");
        assertThat(MAGRPOConfig.keys()).hasSize(45).first().isEqualTo("num_train_epochs");
        assertThat(CentralizedMAGRPOConfig.builder().build().toMap()).containsEntry("collaboration_mode", "centralized");
    }

    @Test
    void toBuilderCopiesEverything() {
        MAGRPOConfig original = nonDefaults(MAGRPOConfig.builder()).build();
        assertThat(original.toBuilder().build()).isEqualTo(original);
        MAGRPOConfig changed = original.toBuilder().numGenerations(8).build();
        assertThat(changed.numGenerations()).isEqualTo(8);
        assertThat(changed).isNotEqualTo(original);
        assertThat(changed.toMap()).containsAllEntriesOf(Map.of("seed", -5L, "reference_kl_coef", 0.05));
        assertThat(original.toString()).startsWith("MAGRPOConfig{num_train_epochs=3,");
    }

    @Test
    void variantsChangeOnlyTheirDefaults() {
        MAREINFORCEConfig reinforce = MAREINFORCEConfig.builder().numAgents(2).build();
        MAReMaxConfig remax = MAReMaxConfig.builder().build();
        MARLOOConfig rloo = MARLOOConfig.builder().build();
        assertThat(reinforce.advantageMode()).isEqualTo(AdvantageMode.RAW);
        assertThat(remax.advantageMode()).isEqualTo(AdvantageMode.MAX);
        assertThat(rloo.advantageMode()).isEqualTo(AdvantageMode.RLOO);
        assertThat(reinforce).isInstanceOf(MAGRPOConfig.class);
        assertThat(reinforce.algorithm().displayName()).isEqualTo("MAREINFORCE");
        assertThat(remax.algorithm().displayName()).isEqualTo("MAReMax");
        // every other field keeps MAGRPO's default
        Map<String, Object> magrpo = new HashMap<>(MAGRPOConfig.builder().build().toMap());
        Map<String, Object> variant = new HashMap<>(reinforce.toMap());
        magrpo.remove("advantage_mode");
        variant.remove("advantage_mode");
        assertThat(variant).isEqualTo(magrpo);
        // the mode stays overridable, and the typed builder keeps its type through toBuilder
        MAREINFORCEConfig meanReinforce = reinforce.toBuilder().advantageMode(AdvantageMode.MEAN).build();
        assertThat(meanReinforce.advantageMode()).isEqualTo(AdvantageMode.MEAN);
        assertThat(MARLOOConfig.fromMap(Map.of("num_generations", 3)).advantageMode()).isEqualTo(AdvantageMode.RLOO);
        // same values, different algorithm: not equal
        assertThat(MAGRPOConfig.builder().advantageMode("raw").build()).isNotEqualTo(MAREINFORCEConfig.builder().build());
    }

    @Test
    void centralizedConfig() {
        CentralizedMAGRPOConfig c = CentralizedMAGRPOConfig.builder().numAgents(3).build();
        assertThat(c.numTurns()).isEqualTo(1);
        assertThat(c.collaborationMode()).isEqualTo(CollaborationMode.CENTRALIZED);
        assertThat(c.algorithm()).isEqualTo(ReinforceAlgorithm.CENTRALIZED_MAGRPO);
        assertThat(CentralizedMAGRPOConfig.fromMap(Map.of("collaboration_mode", "centralized", "num_agents", 3)))
                .isEqualTo(c);
        assertThatThrownBy(() -> CentralizedMAGRPOConfig.builder().numTurns(2).build())
                .hasMessage("CentralizedMAGRPOConfig: CentralizedMAGRPOConfig requires num_turns=1, got 2: the centralized "
                        + "actor writes every role's response in one joint completion.");
        assertThatThrownBy(() -> CentralizedMAGRPOConfig.fromMap(Map.of("collaboration_mode", "decentralized")))
                .hasMessageContaining("requires collaboration_mode=\"centralized\", got \"decentralized\"");
        assertThatThrownBy(() -> CentralizedMAGRPOConfig.builder().numGenerations(1).build())
                .hasMessageStartingWith("CentralizedMAGRPOConfig: num_generations must be >= 2");
    }

    @ParameterizedTest
    @ValueSource(strings = {"magrpo", "mareinforce", "maremax", "marloo", "centralized_magrpo"})
    void algorithmsParse(String name) {
        ReinforceAlgorithm algorithm = ReinforceAlgorithm.parse(name.toUpperCase(java.util.Locale.ROOT));
        assertThat(algorithm.configName()).isEqualTo(name);
        assertThat(algorithm.builder().build().algorithm()).isEqualTo(algorithm);
        assertThat(algorithm.builder().build().advantageMode()).isEqualTo(algorithm.defaultAdvantageMode());
    }

    @Test
    void unknownAlgorithm() {
        assertThatThrownBy(() -> ReinforceAlgorithm.parse("magrp"))
                .hasMessageContaining("Unknown MA-REINFORCE algorithm 'magrp'; did you mean 'magrpo'?");
    }
}
