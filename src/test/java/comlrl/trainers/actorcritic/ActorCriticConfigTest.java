package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import comlrl.utils.ParallelTraining;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The rules IACConfig and MAACConfig share, run against both: range checks, cross-field checks,
 * snake_case reading and writing. The per-config defaults and rules are in IACConfigTest and
 * MAACConfigTest.
 */
class ActorCriticConfigTest {

    /** One of the two configs: its name, a fresh builder and its fromMap. */
    record Kind(String name, Supplier<ActorCriticConfig.Builder<?, ?>> builder,
                Function<Map<String, ?>, ActorCriticConfig> fromMap) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final Kind IAC = new Kind("IACConfig", IACConfig::builder, IACConfig::fromMap);
    static final Kind MAAC = new Kind("MAACConfig", MAACConfig::builder, MAACConfig::fromMap);

    static Stream<Kind> kinds() {
        return Stream.of(IAC, MAAC);
    }

    /** The fields IAC (§5.1) and MAAC (§5.2) both have with the same default, one assertion each. */
    @ParameterizedTest
    @MethodSource("kinds")
    void sharedDefaults(Kind kind) {
        ActorCriticConfig c = kind.builder().get().build();
        assertThat(c.agentLearningRate()).isEqualTo(5e-6);
        assertThat(c.criticLearningRate()).isEqualTo(5e-6);
        assertThat(c.rolloutBufferSize()).isEqualTo(8);
        assertThat(c.trainBatchSize()).isEqualTo(8);                 // None → rollout_buffer_size
        assertThat(c.valueLossCoef()).isEqualTo(0.6);
        assertThat(c.advantageNormalization()).isTrue();
        assertThat(c.maxNewTokens()).isEqualTo(256);
        assertThat(c.temperature()).isEqualTo(0.6);
        assertThat(c.topP()).isEqualTo(0.6);
        assertThat(c.topK()).isNull();
        assertThat(c.numTrainEpochs()).isEqualTo(40);
        assertThat(c.criticType()).isEqualTo(CriticType.V);
        assertThat(c.criticValueHeadHiddenDim()).isNull();         // MAAC: model_config's key in the reference
        assertThat(c.numAgents()).isEqualTo(2);
        assertThat(c.numTurns()).isEqualTo(2);
        assertThat(c.parallelTraining()).isEqualTo(ParallelTraining.NONE);
        assertThat(c.agentDevices()).isNull();
        assertThat(c.criticDevices()).isNull();
        assertThat(c.externalPromptPassthrough()).isFalse();
        assertThat(c.numGenerations()).isEqualTo(1);
        assertThat(c.evalInterval()).isEqualTo(16);
        assertThat(c.evalNumSamples()).isEqualTo(4);
        assertThat(c.evalBatchSize()).isEqualTo(1);
        assertThat(c.earlyTerminationThreshold()).isEqualTo(-0.2);
        assertThat(c.loggingSteps()).isEqualTo(1);
        assertThat(c.referenceKlEnabled()).isFalse();
        assertThat(c.referenceKlCoef()).isEqualTo(0.1);
        assertThat(c.referenceDevices()).isNull();
        // ours, as in MAGRPOConfig
        assertThat(c.seed()).isEqualTo(42L);
        assertThat(c.gradientCheckpointing()).isFalse();
        assertThat(c.generationKwargs()).isEmpty();
        assertThat(c.skipNonfiniteSamples()).isFalse();
        assertThat(c.saveTotalLimit()).isNull();
    }

    private static Arguments rule(String name, Consumer<ActorCriticConfig.Builder<?, ?>> change, String message) {
        return Arguments.of(name, change, message);
    }

    static List<Arguments> sharedRules() {
        return List.of(
                rule("agent_learning_rate negative", b -> b.agentLearningRate(-1e-5),
                        "agent_learning_rate must be a finite number >= 0 (the default is 5e-6), got -1.0E-5"),
                rule("agent_learning_rate NaN", b -> b.agentLearningRate(Double.NaN),
                        "agent_learning_rate must be a finite number >= 0"),
                rule("rollout_buffer_size", b -> b.rolloutBufferSize(0), "rollout_buffer_size must be >= 1, got 0"),
                rule("train_batch_size", b -> b.trainBatchSize(0),
                        "train_batch_size must be >= 1, got 0 (leave it unset to use rollout_buffer_size)"),
                rule("value_loss_coef zero", b -> b.valueLossCoef(0), "value_loss_coef must be a finite number > 0"),
                rule("value_loss_coef infinite", b -> b.valueLossCoef(Double.POSITIVE_INFINITY),
                        "value_loss_coef must be a finite number > 0"),
                rule("max_new_tokens", b -> b.maxNewTokens(0), "max_new_tokens must be >= 1, got 0"),
                rule("temperature", b -> b.temperature(0), "temperature must be a finite number > 0"),
                rule("top_p zero", b -> b.topP(0), "top_p must be in (0, 1] (1 disables nucleus sampling), got 0.0"),
                rule("top_p above one", b -> b.topP(1.5), "top_p must be in (0, 1]"),
                rule("top_k", b -> b.topK(-1), "top_k must be >= 0, got -1 (0 disables top-k"),
                rule("num_train_epochs", b -> b.numTrainEpochs(0), "num_train_epochs must be >= 1, got 0"),
                rule("critic_value_head_hidden_dim", b -> b.criticValueHeadHiddenDim(-1),
                        "critic_value_head_hidden_dim must be >= 0, got -1"),
                rule("num_agents", b -> b.numAgents(0), "num_agents must be >= 1, got 0"),
                rule("num_turns", b -> b.numTurns(0), "num_turns must be >= 1, got 0"),
                rule("num_generations", b -> b.numTurns(1).numGenerations(0), "num_generations must be >= 1, got 0"),
                rule("agent_devices empty", b -> b.agentDevices(List.of()), "agent_devices must not be an empty list"),
                rule("agent_devices blank", b -> b.agentDevices(Arrays.asList("cuda:0", null)),
                        "agent_devices entries must be device names"),
                rule("critic_devices empty", b -> b.criticDevices(List.of()), "critic_devices must not be an empty list"),
                rule("discount above one", b -> b.discount(1.5), "discount must be in [0, 1]"),
                rule("discount NaN", b -> b.discount(Double.NaN), "discount must be in [0, 1]"),
                rule("eval_interval", b -> b.evalInterval(-1), "eval_interval must be >= 0, got -1"),
                rule("eval_num_samples", b -> b.evalNumSamples(0), "eval_num_samples must be >= 1, got 0"),
                rule("eval_batch_size", b -> b.evalBatchSize(0), "eval_batch_size must be >= 1, got 0"),
                rule("early_termination_threshold", b -> b.earlyTerminationThreshold(Double.NaN),
                        "early_termination_threshold must be a number, or null to disable early termination"),
                rule("logging_steps", b -> b.loggingSteps(0), "logging_steps must be >= 1, got 0"),
                rule("reference_kl_coef", b -> b.referenceKlCoef(-0.1),
                        "reference_kl_coef must be a finite number >= 0, got -0.1"),
                rule("reference_devices empty", b -> b.referenceDevices(List.of()),
                        "reference_devices must not be an empty list"),
                rule("reference_devices count", b -> b.referenceKlEnabled(true)
                                .referenceDevices(List.of("cpu", "cpu", "cpu")),
                        "reference_devices length (3) must be 1 or 2"),
                rule("generation_kwargs unknown", b -> b.generationKwargs(Map.of("repetition_penalti", 1.1)),
                        "Unknown generation_kwargs key 'repetition_penalti'"),
                rule("generation_kwargs top_k", b -> b.generationKwargs(Map.of("top_k", 3)),
                        "generation_kwargs must not set top_k: it is a config field of its own"),
                rule("save_total_limit", b -> b.saveTotalLimit(0), "save_total_limit must be >= 1, got 0"),
                rule("mp without agent_devices", b -> b.parallelTraining("mp").criticDevices("cuda:1"),
                        "parallel_training=\"mp\" requires explicit agent_devices"));
    }

    static Stream<Arguments> sharedRulesOfBoth() {
        return kinds().flatMap(kind -> sharedRules().stream()
                .map(a -> Arguments.of(kind, a.get()[0], a.get()[1], a.get()[2])));
    }

    @SuppressWarnings("unchecked")
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("sharedRulesOfBoth")
    void everySharedRuleRejectsWithItsMessage(Kind kind, String name, Object change, String message) {
        ActorCriticConfig.Builder<?, ?> builder = kind.builder().get();
        ((Consumer<ActorCriticConfig.Builder<?, ?>>) change).accept(builder);
        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(kind.name() + ": ")
                .hasMessageContaining(message)
                .hasMessageEndingWith(".");
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void multiTurnRequiresOneGeneration(Kind kind) {
        String algorithm = kind == IAC ? "IAC" : "MAAC";
        assertThatThrownBy(() -> kind.builder().get().numTurns(2).numGenerations(4).build())
                .hasMessage(kind.name() + ": Multi-turn " + algorithm + " currently supports num_generations == 1, got "
                        + "num_generations=4 with num_turns=2; set num_generations to 1, or num_turns to 1 for several "
                        + "samples per prompt.");
        assertThat(kind.builder().get().numTurns(1).numGenerations(4).build().numGenerations()).isEqualTo(4);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void boundaryValuesAreAccepted(Kind kind) {
        ActorCriticConfig c = kind.builder().get()
                .agentLearningRate(0).rolloutBufferSize(1).trainBatchSize(1).valueLossCoef(1e-9).maxNewTokens(1)
                .topP(1.0).topK(0).numTrainEpochs(1).criticValueHeadHiddenDim(0).numAgents(1).numTurns(1)
                .numGenerations(1).discount(0).evalInterval(0).evalNumSamples(1).evalBatchSize(1)
                .earlyTerminationThreshold(null).loggingSteps(1).referenceKlEnabled(true).referenceKlCoef(0)
                .referenceDevices(List.of("cpu")).saveTotalLimit(1)
                .build();
        assertThat(c.discount()).isZero();
        assertThat(c.earlyTerminationThreshold()).isNull();
        assertThat(kind.builder().get().discount(1).numAgents(3).referenceKlEnabled(true)
                .referenceDevices(List.of("cpu", "cpu", "cpu")).build().referenceDevices()).hasSize(3);
        // reference_devices of another length are only checked when reference KL is on
        assertThat(kind.builder().get().referenceDevices(List.of("cpu", "cpu", "cpu")).build().referenceDevices())
                .hasSize(3);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void trainBatchSizeFollowsRolloutBufferUnlessSet(Kind kind) {
        assertThat(kind.builder().get().rolloutBufferSize(5).build().trainBatchSize()).isEqualTo(5);
        assertThat(kind.builder().get().rolloutBufferSize(5).trainBatchSize(2).build().trainBatchSize()).isEqualTo(2);
        assertThat(kind.builder().get().rolloutBufferSize(5).build().toMap()).containsEntry("train_batch_size", 5);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void enumsParse(Kind kind) {
        assertThat(kind.builder().get().criticType("Q").build().criticType()).isEqualTo(CriticType.Q);
        assertThat(CriticType.Q.readsResponse()).isTrue();
        assertThat(CriticType.V.readsResponse()).isFalse();
        assertThat(CriticType.Q.configName()).isEqualTo("q");
        assertThat(kind.builder().get().criticType((String) null).build().criticType()).isEqualTo(CriticType.V);
        assertThat(kind.fromMap().apply(Map.of("critic_type", " v ")).criticType()).isEqualTo(CriticType.V);
        assertThat(kind.fromMap().apply(Map.of("critic_type", "null")).criticType()).isEqualTo(CriticType.V);
        assertThatThrownBy(() -> kind.builder().get().criticType("a"))
                .hasMessageStartingWith("critic_type must be one of: 'v', 'q' (got \"a\")");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("critic_type", "vq")))
                .hasMessageStartingWith("critic_type must be one of: 'v', 'q'");
        assertThat(kind.builder().get().parallelTraining("null").build().parallelTraining())
                .isEqualTo(ParallelTraining.NONE);
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("parallel_training", "auto")))
                .hasMessageContaining("parallel_training must be \"none\", \"mp\" or \"ddp\"");
        assertThat(kind.fromMap().apply(Map.of("parallel_training", "ddp")).parallelTraining())
                .isEqualTo(ParallelTraining.DDP);
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("parallel_training", "ddp", "agent_devices", List.of("cuda:1"))))
                .hasMessageContaining("parallel_training=\"ddp\" puts every model of a process on that process's device");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("parallel_training", "ddp", "critic_devices", List.of("cuda:1"))))
                .hasMessageEndingWith("(cuda:LOCAL_RANK, or the cpu); remove agent_devices and critic_devices.");
        assertThat(kind.builder().get().build().ddpSplit()).isEqualTo(comlrl.utils.DdpSplit.DATA);
        assertThat(kind.fromMap().apply(Map.of("parallel_training", "ddp", "ddp_split", " Agents ")).ddpSplit())
                .isEqualTo(comlrl.utils.DdpSplit.AGENTS);
        assertThat(kind.fromMap().apply(Map.of("ddp_split", "agents")).toMap()).containsEntry("ddp_split", "agents");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("ddp_split", "rows")))
                .hasMessageContaining("ddp_split must be \"data\"");
        ActorCriticConfig mp = kind.builder().get().parallelTraining(ParallelTraining.MP)
                .agentDevices(List.of("cuda:0", "cuda:1")).criticDevices("cuda:2").build();
        assertThat(mp.parallelTraining()).isEqualTo(ParallelTraining.MP);
        assertThat(mp.criticDevices()).containsExactly("cuda:2");
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void fromMapReadsSnakeCaseWithTypeChecks(Kind kind) {
        Map<String, Object> values = new HashMap<>();
        values.put("num_turns", 1);
        values.put("num_generations", "3");            // --set style string
        values.put("agent_learning_rate", "1e-5");     // YAML 1.1 reads this as a string
        values.put("top_k", 20);
        values.put("early_termination_threshold", "none");
        values.put("agent_devices", "cuda:1");          // a string: broadcast
        values.put("critic_devices", List.of("cuda:2"));
        values.put("parallel_training", "mp");
        values.put("critic_type", "q");
        values.put("advantage_normalization", "false");
        values.put("generation_kwargs", Map.of("repetition_penalty", 1.05));
        values.put("seed", 7);
        ActorCriticConfig c = kind.fromMap().apply(values);
        assertThat(c.numTurns()).isEqualTo(1);
        assertThat(c.numGenerations()).isEqualTo(3);
        assertThat(c.agentLearningRate()).isEqualTo(1e-5);
        assertThat(c.topK()).isEqualTo(20);
        assertThat(c.earlyTerminationThreshold()).isNull();
        assertThat(c.agentDevices()).containsExactly("cuda:1");
        assertThat(c.criticDevices()).containsExactly("cuda:2");
        assertThat(c.parallelTraining()).isEqualTo(ParallelTraining.MP);
        assertThat(c.criticType()).isEqualTo(CriticType.Q);
        assertThat(c.advantageNormalization()).isFalse();
        assertThat(c.generationKwargs()).containsEntry("repetition_penalty", 1.05);
        assertThat(c.seed()).isEqualTo(7L);
        assertThat(c.maxNewTokens()).isEqualTo(256);    // untouched keys keep their defaults
        assertThat(kind.builder().get().set("discount", "0.5").build().discount()).isEqualTo(0.5);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void fromMapTypeErrorsNameTheKeyAndType(Kind kind) {
        String owner = kind.name();
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("rollout_buffer_size", "eight")))
                .hasMessage(owner + " key 'rollout_buffer_size' must be an integer, got \"eight\" (String)");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("num_agents", 2.5)))
                .hasMessage(owner + " key 'num_agents' must be an integer, got 2.5 (Double)");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("value_loss_coef", true)))
                .hasMessage(owner + " key 'value_loss_coef' must be a number, got true (Boolean)");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("advantage_normalization", "yes")))
                .hasMessage(owner + " key 'advantage_normalization' must be true or false, got \"yes\" (String)");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("critic_type", 1)))
                .hasMessage(owner + " key 'critic_type' must be a string, got 1 (Integer)");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("critic_devices", List.of(0, 1))))
                .hasMessageStartingWith(owner + " key 'critic_devices' must be a string or a list of strings");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("seed", "x")))
                .hasMessage(owner + " key 'seed' must be an integer, got \"x\" (String)");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("generation_kwargs", "min_p=0.1")))
                .hasMessageStartingWith(owner + " key 'generation_kwargs' must be a mapping of generate settings");
        // validation still runs after fromMap
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("value_loss_coef", -1)))
                .hasMessageStartingWith(owner + ": value_loss_coef must be a finite number > 0");
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void unknownKeysFailNamingTheKey(Kind kind) {
        String owner = kind.name();
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("rollout_bufer_size", 4)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Unknown " + owner + " key 'rollout_bufer_size'; did you mean "
                        + "'rollout_buffer_size'?")
                .hasMessageContaining("Valid keys: ");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("learning_rate", 1e-5)))
                .hasMessageStartingWith("Unknown " + owner + " key 'learning_rate': use 'agent_learning_rate' for the "
                        + "actors and 'critic_learning_rate' for the critic");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("mini_batch_size", 2)))
                .hasMessageStartingWith("Unknown " + owner + " key 'mini_batch_size': use 'train_batch_size'");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("num_return_sequences", 2)))
                .hasMessageStartingWith("Unknown " + owner + " key 'num_return_sequences': use 'num_generations'");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("weight_decay", 0.0)))
                .hasMessageContaining("AdamW weight decay is fixed at 0.01");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("critic_model_name_or_path", "Qwen/Qwen2.5-0.5B")))
                .hasMessageContaining("the critic is a trainer argument (critic_model / critics)");
        assertThatThrownBy(() -> kind.fromMap().apply(Map.of("joint_mode", "cross")))
                .hasMessageContaining("joint_mode is an MAGRPOConfig field");
    }

    static Stream<Arguments> configsToRoundTrip() {
        return Stream.of(
                Arguments.of(IACConfig.builder().build(), IACConfig.keys()),
                Arguments.of(MAACConfig.builder().build(), MAACConfig.keys()),
                Arguments.of(nonDefaults(IACConfig.builder().criticLearningRate(2e-6).useSeparateCritic(false)
                        .valueClipRange(null).valueHeadHiddenDim(16)), IACConfig.keys()),
                Arguments.of(nonDefaults(MAACConfig.builder().criticLearningRate(2e-6)), MAACConfig.keys()));
    }

    /** Every shared field set to a value other than its default (IAC's and MAAC's alike). */
    private static ActorCriticConfig nonDefaults(ActorCriticConfig.Builder<?, ?> b) {
        return b.agentLearningRate(1e-5).rolloutBufferSize(4).trainBatchSize(2).valueLossCoef(0.5)
                .advantageNormalization(false).maxNewTokens(64).temperature(0.9).topP(0.95).topK(20)
                .numTrainEpochs(3).criticType(CriticType.Q).criticValueHeadHiddenDim(32).numAgents(3).numTurns(3)
                .parallelTraining(ParallelTraining.MP).agentDevices(List.of("cuda:0", "cuda:1", "cuda:2"))
                .criticDevices("cuda:3").externalPromptPassthrough(true).discount(0.5).numGenerations(1)
                .evalInterval(0).evalNumSamples(10).evalBatchSize(2).earlyTerminationThreshold(null).loggingSteps(5)
                .referenceKlEnabled(true).referenceKlCoef(0.05).referenceDevices("cpu").seed(-5)
                .gradientCheckpointing(true).generationKwargs(Map.of("repetition_penalty", 1.05))
                .skipNonfiniteSamples(true).saveTotalLimit(2)
                .build();
    }

    @ParameterizedTest
    @MethodSource("configsToRoundTrip")
    void toMapRoundTripsThroughConfigJson(ActorCriticConfig config, List<String> keys) throws Exception {
        Function<Map<String, ?>, ActorCriticConfig> fromMap = config instanceof IACConfig
                ? IACConfig::fromMap : MAACConfig::fromMap;
        Map<String, Object> map = config.toMap();
        assertThat(List.copyOf(map.keySet())).isEqualTo(keys);
        assertThat(fromMap.apply(map)).isEqualTo(config).hasSameHashCodeAs(config);
        ObjectMapper json = new ObjectMapper();
        Map<String, Object> parsed = json.readValue(json.writeValueAsString(map),
                new TypeReference<LinkedHashMap<String, Object>>() {});
        ActorCriticConfig reread = fromMap.apply(parsed);
        assertThat(reread).isEqualTo(config).hasSameHashCodeAs(config);
        assertThat(reread.toMap()).isEqualTo(map);
        assertThat(reread.getClass()).isEqualTo(config.getClass());
    }

    @Test
    void equalValuesOfTheTwoConfigsAreNotEqual() {
        assertThat(IACConfig.builder().build()).isNotEqualTo(MAACConfig.builder().build());
        assertThat(IACConfig.builder().build()).isEqualTo(IACConfig.builder().build());
        assertThat(IACConfig.builder().build()).isNotEqualTo(IACConfig.builder().seed(1).build());
    }
}
