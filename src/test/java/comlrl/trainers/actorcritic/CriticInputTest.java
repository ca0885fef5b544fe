package comlrl.trainers.actorcritic;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** MAAC's critic input text (reference {@code _build_critic_input}), written out by hand. */
class CriticInputTest {
    @Test
    void aVCriticReadsThePromptsAndAQCriticTheJointActionToo() {
        List<String> prompts = List.of("p0", "p1");
        assertThat(MAACTrainer.criticInput(prompts, null)).isEqualTo("[Agent 0] p0\n\n[Agent 1] p1");
        assertThat(MAACTrainer.criticInput(prompts, List.of("c0", "c1"))).isEqualTo(
                "[Agent 0] p0\n\n[Agent 1] p1\n\n[Joint Action]\n\n[Agent 0 action]\nc0\n\n[Agent 1 action]\nc1");
    }
}
