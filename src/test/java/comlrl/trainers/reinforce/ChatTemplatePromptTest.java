package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.ownLength;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChatTemplatePromptTest {
    private static MAGRPOTrainer trainer(Path agent, boolean chat, String system) {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numAgents(1).build();
        return MAGRPOTrainer.builder().agentModel(agent.toString()).numAgents(1).rewardFunc(ownLength())
                .trainDataset(tasks(1)).args(config).verbose(false).chatTemplate(chat, system).build();
    }

    @Test
    void promptsAreWrappedInTheAgentsChatTemplateOnlyWhenAskedTo(@TempDir Path tmp) {
        Path agent = TinyAgents.create(tmp.resolve("a"), 1);
        try (MAGRPOTrainer plain = trainer(agent, false, null);
                MAGRPOTrainer chat = trainer(agent, true, "Be brief.")) {
            var tok = chat.agents().get(0).tokenizer();
            assertThat(plain.settings().promptEncoder().encode(plain.agents().get(0), "Say hi."))
                    .containsExactly(tok.encode("Say hi.", true));
            String rendered = tok.decode(chat.settings().promptEncoder().encode(chat.agents().get(0), "Say hi."),
                    false);
            // ChatML, as the tiny tokenizer's template renders it
            assertThat(rendered).isEqualTo("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nSay hi.<|im_end|>\n"
                    + "<|im_start|>assistant\n");
        }
    }
}
