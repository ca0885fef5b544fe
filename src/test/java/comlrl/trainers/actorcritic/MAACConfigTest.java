package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MAACConfigTest {

    @Test
    void maacDefaultsMatchTheReferenceTable() {
        // §5.2's differences from IAC; the shared fields: ActorCriticConfigTest.sharedDefaults
        MAACConfig c = MAACConfig.builder().build();
        assertThat(c.discount()).isEqualTo(1.0);
        assertThat(c.algorithmName()).isEqualTo("MAAC");
        assertThat(MAACConfig.keys()).hasSize(36)
                .doesNotContain("use_separate_critic", "value_clip_range", "value_head_hidden_dim")
                .contains("critic_value_head_hidden_dim");
    }

    @Test
    void criticLearningRateIsRequired() {
        assertThatThrownBy(() -> MAACConfig.builder().criticLearningRate(-1).build())
                .hasMessage("MAACConfig: critic_learning_rate must be a finite number >= 0 (the default is 5e-6), "
                        + "got -1.0.");
        Map<String, Object> unset = new HashMap<>();
        unset.put("critic_learning_rate", null);
        assertThatThrownBy(() -> MAACConfig.fromMap(unset))
                .hasMessage("MAACConfig key 'critic_learning_rate' must be a number, got null (null)");
        // it does not follow the agent rate
        assertThat(MAACConfig.builder().agentLearningRate(1e-6).build().criticLearningRate()).isEqualTo(5e-6);
    }

    @Test
    void mpNeedsTheSharedCriticsDevice() {
        assertThatThrownBy(() -> MAACConfig.builder().parallelTraining("mp").agentDevices("cuda:0").build())
                .hasMessage("MAACConfig: parallel_training=\"mp\" requires explicit critic_devices (the shared critic's "
                        + "device, e.g. \"cuda:2\"); set critic_devices, or use parallel_training=\"none\".");
        assertThat(MAACConfig.builder().parallelTraining("mp").agentDevices("cuda:0").criticDevices("cuda:1").build()
                .criticDevices()).containsExactly("cuda:1");
    }

    @Test
    void iacOnlyKeysGetAHint() {
        assertThatThrownBy(() -> MAACConfig.fromMap(Map.of("use_separate_critic", false)))
                .hasMessageStartingWith("Unknown MAACConfig key 'use_separate_critic': MAAC always trains one shared "
                        + "critic");
        assertThatThrownBy(() -> MAACConfig.fromMap(Map.of("value_clip_range", 0.2)))
                .hasMessageStartingWith("Unknown MAACConfig key 'value_clip_range': MAAC does not clip values");
        assertThatThrownBy(() -> MAACConfig.fromMap(Map.of("value_head_hidden_dim", 8)))
                .hasMessageStartingWith("Unknown MAACConfig key 'value_head_hidden_dim': MAAC's actors have no value "
                        + "heads");
        assertThat(MAACConfig.fromMap(Map.of("critic_value_head_hidden_dim", 16)).criticValueHeadHiddenDim())
                .isEqualTo(16);
    }

    @Test
    void toBuilderKeepsTheType() {
        MAACConfig original = MAACConfig.builder().criticLearningRate(1e-6).discount(0.95).build();
        MAACConfig copy = original.toBuilder().build();
        assertThat(copy).isEqualTo(original);
        assertThat(original.toBuilder().criticType("q").build().criticType()).isEqualTo(CriticType.Q);
        assertThat(original.toString()).startsWith("MAACConfig{agent_learning_rate=5.0E-6, critic_learning_rate=1.0E-6,");
        assertThat(original.toMap()).hasSize(36).containsEntry("discount", 0.95);
    }
}
