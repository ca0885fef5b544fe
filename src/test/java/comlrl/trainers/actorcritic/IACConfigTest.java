package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.utils.ParallelTraining;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class IACConfigTest {

    @Test
    void iacDefaultsMatchTheReferenceTable() {
        // §5.1's fields that MAAC lacks or defaults differently; the others: ActorCriticConfigTest.sharedDefaults
        IACConfig c = IACConfig.builder().build();
        assertThat(c.valueClipRange()).isEqualTo(0.2);
        assertThat(c.useSeparateCritic()).isTrue();
        assertThat(c.valueHeadHiddenDim()).isNull();
        assertThat(c.discount()).isEqualTo(0.9);
        assertThat(c.algorithmName()).isEqualTo("IAC");
        assertThat(IACConfig.keys()).hasSize(39).startsWith("agent_learning_rate", "critic_learning_rate")
                .endsWith("reference_devices", "ddp_split", "seed", "gradient_checkpointing", "generation_kwargs",
                        "skip_nonfinite_samples", "save_total_limit", "stop_strings");
    }

    @Test
    void criticLearningRateNullFollowsTheAgentRate() {
        IACConfig c = IACConfig.builder().agentLearningRate(3e-6).criticLearningRate(null).build();
        assertThat(c.criticLearningRate()).isEqualTo(3e-6);
        assertThat(c.toMap()).containsEntry("critic_learning_rate", 3e-6);
        // toBuilder keeps it unset, so it keeps following agent_learning_rate
        assertThat(c.toBuilder().agentLearningRate(1e-6).build().criticLearningRate()).isEqualTo(1e-6);
        assertThat(IACConfig.fromMap(Map.of("critic_learning_rate", "none", "agent_learning_rate", 2e-6))
                .criticLearningRate()).isEqualTo(2e-6);
        assertThat(IACConfig.builder().criticLearningRate(1e-4).build().criticLearningRate()).isEqualTo(1e-4);
    }

    static Stream<Arguments> iacRules() {
        return Stream.of(
                rule("critic_learning_rate", b -> b.criticLearningRate(-1.0), "critic_learning_rate must be a finite "
                        + "number >= 0, or null to use agent_learning_rate, got -1.0"),
                rule("value_clip_range zero", b -> b.valueClipRange(0.0), "value_clip_range must be a finite number > 0, "
                        + "or null to turn value clipping off, got 0.0"),
                rule("value_clip_range NaN", b -> b.valueClipRange(Double.NaN), "value_clip_range must be a finite "
                        + "number > 0"),
                rule("value_head_hidden_dim", b -> b.valueHeadHiddenDim(-2), "value_head_hidden_dim must be >= 0, got -2"),
                rule("mp without critic_devices", b -> b.parallelTraining("mp").agentDevices("cuda:0"),
                        "parallel_training=\"mp\" requires explicit critic_devices when use_separate_critic=True"));
    }

    private static Arguments rule(String name, Consumer<IACConfig.Builder> change, String message) {
        return Arguments.of(name, change, message);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("iacRules")
    void iacRulesRejectWithTheirMessage(String name, Consumer<IACConfig.Builder> change, String message) {
        IACConfig.Builder builder = IACConfig.builder();
        change.accept(builder);
        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("IACConfig: ")
                .hasMessageContaining(message);
    }

    @Test
    void sharedValueHeadsNeedNoCriticDevices() {
        IACConfig c = IACConfig.builder().useSeparateCritic(false).parallelTraining("mp")
                .agentDevices(List.of("cuda:0", "cuda:1")).valueClipRange(null).build();
        assertThat(c.criticDevices()).isNull();
        assertThat(c.valueClipRange()).isNull();
    }

    @Test
    void fromMapReadsTheIacFields() {
        IACConfig c = IACConfig.fromMap(Map.of("use_separate_critic", "false", "value_clip_range", "null",
                "value_head_hidden_dim", 64, "critic_value_head_hidden_dim", "128"));
        assertThat(c.useSeparateCritic()).isFalse();
        assertThat(c.valueClipRange()).isNull();
        assertThat(c.valueHeadHiddenDim()).isEqualTo(64);
        assertThat(c.criticValueHeadHiddenDim()).isEqualTo(128);
        assertThatThrownBy(() -> IACConfig.fromMap(Map.of("use_separate_critic", 1)))
                .hasMessage("IACConfig key 'use_separate_critic' must be true or false, got 1 (Integer)");
        assertThatThrownBy(() -> IACConfig.fromMap(Map.of("value_clip_range", "wide")))
                .hasMessage("IACConfig key 'value_clip_range' must be a number, got \"wide\" (String)");
    }

    @Test
    void toBuilderAndToString() {
        IACConfig original = IACConfig.builder().numAgents(3).seed(9).valueClipRange(0.1).build();
        assertThat(original.toBuilder().build()).isEqualTo(original);
        IACConfig changed = original.toBuilder().valueClipRange(0.3).build();
        assertThat(changed.valueClipRange()).isEqualTo(0.3);
        assertThat(changed.numAgents()).isEqualTo(3);
        assertThat(changed).isNotEqualTo(original);
        assertThat(original.toString()).startsWith("IACConfig{agent_learning_rate=5.0E-6, critic_learning_rate=");
    }

    @Test
    void toMapWritesEnumsAsConfigStrings() {
        assertThat(IACConfig.builder().criticType("q").build().toMap())
                .hasSize(39)
                .containsEntry("ddp_split", "data")
                .containsEntry("critic_type", "q")
                .containsEntry("parallel_training", "none")
                .containsEntry("value_clip_range", 0.2)
                .containsEntry("top_k", null)
                .containsEntry("seed", 42L);
    }
}
