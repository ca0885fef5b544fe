package comlrl.trainers.actorcritic;

import static comlrl.trainers.actorcritic.ActorCriticTrainerTest.bytes;
import static comlrl.trainers.actorcritic.ActorCriticTrainerTest.iac;
import static comlrl.trainers.actorcritic.ActorCriticTrainerTest.maac;
import static comlrl.trainers.actorcritic.ActorCriticTrainerTest.lengthDifference;
import static comlrl.trainers.actorcritic.ActorCriticTrainerTest.tasks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.generation.CausalLmWithValueHead;
import comlrl.model.LoraAdapter;
import comlrl.model.LoraConfig;
import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LoRA critics: IAC's per-agent critics and MAAC's central critic train adapters (and their value
 * heads) on the LoRA actors' one shared base; saved as PEFT adapters beside their heads; checkpoints
 * resume them exactly.
 */
class LoraCriticsTest {
    @TempDir
    static Path models;
    static Path base;
    static final LoraConfig ACTORS = new LoraConfig(4, 8, 0, List.of("q_proj", "v_proj"), false);
    static final LoraConfig CRITICS = new LoraConfig(2, 4, 0, List.of("all-linear"), false);

    @BeforeAll
    static void writeBase() {
        base = TinyAgents.create(models.resolve("base"), 11, LongStream.rangeClosed(33, 126).boxed().toList());
    }

    static IACTrainer iacTrainer(int epochs) {
        return IACTrainer.builder().agentModel(base.toString()).criticModel(base.toString()).lora(ACTORS)
                .criticLora(CRITICS).rewardFunc(lengthDifference()).trainDataset(tasks(3)).evalDataset(tasks(2))
                .args(iac().numTrainEpochs(epochs).agentLearningRate(3e-2).criticLearningRate(3e-2).build())
                .verbose(false).build();
    }

    @Test
    void iacCriticsAreAdaptersOnTheActorsSharedBaseAndResumeExactly(@TempDir Path out) {
        Map<String, String> straightCritic;
        Map<String, String> straightActor;
        try (IACTrainer t = iacTrainer(2)) {
            var actorBase = t.agents().get(0).model().model().base();
            assertThat(t.agents().get(1).model().model().base()).isSameAs(actorBase);
            for (CausalLmWithValueHead critic : t.critics()) {
                assertThat(critic.model().model().adapter()).isNotNull();
                assertThat(critic.model().model().base()).as("the critics sit on the actors' base").isSameAs(actorBase);
                assertThat(critic.model().model().adapter().config()).isEqualTo(CRITICS);
            }
            Map<String, String> before = bytes(t.critics().get(0).model());
            t.train();
            straightCritic = bytes(t.critics().get(0).model());
            straightActor = bytes(t.agents().get(1).model());
            assertThat(straightCritic).as("the critic's adapter trained").isNotEqualTo(before);
            assertThat(straightCritic.keySet()).allMatch(k -> k.contains(".lora_"));
            t.saveModel(out.resolve("saved"));
        }
        assertThat(out.resolve("saved/agent_0/" + LoraAdapter.CONFIG_FILE)).isRegularFile();
        assertThat(out.resolve("saved/agent_0/critic/" + LoraAdapter.WEIGHTS_FILE)).isRegularFile();
        assertThat(out.resolve("saved/agent_0/critic/value_head.safetensors")).isRegularFile();
        assertThat(LoraAdapter.readPeftConfig(out.resolve("saved/agent_1/critic"))).isEqualTo(CRITICS);
        Path checkpoints = out.resolve("checkpoints");
        try (IACTrainer t = iacTrainer(1)) {
            t.train(checkpoints, 1);
        }
        try (IACTrainer t = iacTrainer(2)) {
            t.train(checkpoints, 1, checkpoints.resolve("checkpoint-1"));
            assertThat(bytes(t.critics().get(0).model())).isEqualTo(straightCritic);
            assertThat(bytes(t.agents().get(1).model())).isEqualTo(straightActor);
        }
    }

    @Test
    void maacsCentralCriticIsALoraCriticAndCriticLoraNeedsASeparateCritic() {
        try (MAACTrainer t = MAACTrainer.builder().agentModel(base.toString()).criticModel(base.toString()).lora(ACTORS)
                .criticLora(CRITICS).rewardFunc(lengthDifference()).trainDataset(tasks(2)).evalDataset(tasks(2))
                .args(maac().build()).verbose(false).build()) {
            CausalLmWithValueHead critic = t.critics().get(0);
            assertThat(critic.model().model().base()).isSameAs(t.agents().get(0).model().model().base());
            Map<String, String> before = bytes(critic.model());
            t.train();
            assertThat(bytes(critic.model())).isNotEqualTo(before);
        }
        assertThatThrownBy(() -> IACTrainer.builder().agentModel(base.toString()).lora(ACTORS).criticLora(CRITICS)
                .rewardFunc(lengthDifference()).trainDataset(tasks(2)).args(iac().useSeparateCritic(false).build())
                .build()).hasMessageContaining("use_separate_critic is false");
    }
}
