package comlrl.reward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import comlrl.data.TaskItem;
import comlrl.generation.BuiltinModels;
import comlrl.model.ClassifierBatches;
import comlrl.model.SequenceClassifier;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reward model with {@code per_agent: true} scores each agent's completion on its own: per joint
 * response k the vector {@code [score(text_{0,k}), score(text_{1,k})]}, each value the label's logit of
 * that agent's text alone, computed here through the model's own forward ({@link ClassifierBatches}).
 * The tolerance 1e-5 is the one {@link RewardModelRewardTest} derives for left-padded batches against
 * one text alone. Without {@code per_agent} the reward is the team reward it was.
 */
class RewardModelPerAgentTest {
    private static final List<TaskItem> ITEM = List.of(TaskItem.of(Map.of("prompt", "Explain tides.")));
    private static final List<List<String>> COMPLETIONS = List.of(
            List.of("Moon.", "The moon pulls water.", "Water rises."),
            List.of("The moon's gravity pulls the oceans.", "Long text about tides and the sun.", "Twice a day."));

    @TempDir
    static Path tmp;
    private static Path model;

    @BeforeAll
    static void writeModel() {
        model = tmp.resolve("rm");
        BuiltinModels.writeSequenceClassifier("qwen2", "tiny", 2, 4, DType.F32, model);
    }

    private static RewardFunction reward(Map<String, Object> extra) {
        Map<String, Object> spec = new LinkedHashMap<>(Map.of("type", "reward_model", "model", model.toString(),
                "label", 1, "batch_size", 4));
        spec.putAll(extra);
        return RewardFunctions.fromConfig(spec, null);
    }

    @Test
    void eachAgentsScoreIsTheModelsScoreOfThatAgentsTextAlone() {
        try (RewardModelReward.AgentRewards perAgent = (RewardModelReward.AgentRewards) reward(Map.of("per_agent", true,
                "template", "{prompt}\n\nAnswer: {completion}"));
                SequenceClassifier classifier = SequenceClassifier.load(model, null, Device.CPU);
                Tokenizer tokenizer = Tokenizer.load(model); GradMode g = GradMode.inference()) {
            assertThat(perAgent).isInstanceOf(AgentRewardFunction.class);
            List<double[]> rows = perAgent.scorePerAgent(COMPLETIONS, ITEM);
            assertThat(rows).hasSize(3);
            for (int k = 0; k < 3; k++) {
                assertThat(rows.get(k)).hasSize(2);
                for (int i = 0; i < 2; i++) {
                    String alone = "Explain tides.\n\nAnswer: " + COMPLETIONS.get(i).get(k);
                    double expected = ClassifierBatches.logits(classifier, tokenizer.encode(alone, true))[1];
                    assertThat(rows.get(k)[i]).as("agent %d, joint response %d", i, k).isCloseTo(expected, within(1e-5));
                }
                assertThat(rows.get(k)[0]).isNotCloseTo(rows.get(k)[1], within(1e-4)); // the agents' texts differ
            }
            // the team reward of a per-agent model is the agents' mean
            List<Double> team = perAgent.score(COMPLETIONS, ITEM);
            for (int k = 0; k < 3; k++) {
                assertThat(team.get(k)).isCloseTo((rows.get(k)[0] + rows.get(k)[1]) / 2, within(1e-12));
            }
            assertThat(perAgent.model().score(COMPLETIONS, ITEM)).isEqualTo(team);
        }
    }

    @Test
    void oneTemplatePerAgentAndTheDefaultText() {
        try (RewardModelReward.AgentRewards roles = (RewardModelReward.AgentRewards) reward(Map.of("per_agent", true,
                "template", List.of("Brief: {completion}", "{prompt} Detailed: {completion} (after {completion_0})")));
                RewardModelReward.AgentRewards plain = (RewardModelReward.AgentRewards) reward(Map.of("per_agent", true))) {
            assertThat(roles.model().agentTexts(COMPLETIONS, ITEM)).containsExactly(
                    List.of("Brief: Moon.", "Brief: The moon pulls water.", "Brief: Water rises."),
                    List.of("Explain tides. Detailed: The moon's gravity pulls the oceans. (after Moon.)",
                            "Explain tides. Detailed: Long text about tides and the sun. (after The moon pulls water.)",
                            "Explain tides. Detailed: Twice a day. (after Water rises.)"));
            assertThat(plain.model().agentTexts(COMPLETIONS, ITEM).get(1).get(2)).isEqualTo("Explain tides.\n\nTwice a day.");
            assertThatThrownBy(() -> roles.scorePerAgent(List.of(List.of("a"), List.of("b"), List.of("c")), ITEM))
                    .hasMessageContaining("template is a list of 2 templates but there are 3 agents");
        }
    }

    @Test
    void withoutPerAgentTheTeamRewardIsUnchangedAndPerAgentSettingsAreRefused() {
        String template = "{prompt}\n\nBrief: {completion_0}\n\nDetailed: {completion_1}";
        try (RewardModelReward team = (RewardModelReward) reward(Map.of("template", template));
                SequenceClassifier classifier = SequenceClassifier.load(model, null, Device.CPU);
                Tokenizer tokenizer = Tokenizer.load(model); GradMode g = GradMode.inference()) {
            assertThat(team).isNotInstanceOf(AgentRewardFunction.class);
            assertThat(team.isPerAgent()).isFalse();
            List<Double> rewards = team.score(COMPLETIONS, ITEM);
            for (int k = 0; k < 3; k++) {
                String joint = "Explain tides.\n\nBrief: " + COMPLETIONS.get(0).get(k) + "\n\nDetailed: "
                        + COMPLETIONS.get(1).get(k);
                assertThat(rewards.get(k)).isCloseTo(ClassifierBatches.logits(classifier, tokenizer.encode(joint, true))[1],
                        within(1e-5));
            }
            assertThatThrownBy(team::agentRewards).hasMessageContaining("only with per_agent: true");
        }
        assertThatThrownBy(() -> reward(Map.of("template", "{completion}")))
                .hasMessageContaining("{completion} (the scored agent's own) needs per_agent: true");
        assertThatThrownBy(() -> reward(Map.of("template", List.of("{completion}", "{completion}"))))
                .hasMessageContaining("template is a list (one per agent) but per_agent is false");
        assertThatThrownBy(() -> reward(Map.of("per_agent", "sometimes"))).hasMessageContaining("per_agent");
    }
}
