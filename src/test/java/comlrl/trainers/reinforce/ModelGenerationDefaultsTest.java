package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import comlrl.data.TaskItem;
import comlrl.generation.GenerationSettings;
import comlrl.reward.RewardFunction;
import comlrl.trainers.TinyAgents;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code top_k: null} leaves top-k to the model, as the Python trainers' generate call does: an
 * agent whose generation_config.json says {@code top_k: 1} samples its single most likely token
 * (all G completions of a group equal), and {@code top_k: 0} switches top-k off.
 */
class ModelGenerationDefaultsTest {
    @TempDir
    static Path models;
    static Path agent;

    @BeforeAll
    static void writeAgent() throws Exception {
        agent = TinyAgents.create(models.resolve("agent"), 3);
        ObjectMapper json = new ObjectMapper();
        Path file = agent.resolve("generation_config.json");
        ObjectNode gen = (ObjectNode) json.readTree(Files.readString(file));
        gen.put("top_k", 1).put("repetition_penalty", 1.05);
        Files.writeString(file, gen.toString());
    }

    /** Completions of the first node, one string per generation, and the trainer's resolved settings. */
    private static List<String> firstGroup(Integer topK, List<GenerationSettings.Resolved> settings) {
        List<List<String>> calls = Collections.synchronizedList(new ArrayList<>());
        RewardFunction reward = (List<List<String>> completions, List<TaskItem> items) -> {
            calls.add(completions.get(0));
            return List.of(0.0);
        };
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numGenerations(4).maxNewTokens(6).topK(topK).build();
        try (MAGRPOTrainer trainer = MAGRPOTrainer.builder().agentModel(agent.toString()).numAgents(1)
                .rewardFunc(reward).trainDataset(tasks(1)).args(config).verbose(false).build()) {
            trainer.train();
            settings.addAll(trainer.generationSettings());
        }
        List<String> group = new ArrayList<>();
        for (List<String> call : calls.subList(0, 4)) {
            group.add(call.get(0));
        }
        return group;
    }

    @Test
    void nullTopKTakesTheModelsGenerationConfig() {
        List<GenerationSettings.Resolved> settings = new ArrayList<>();
        List<String> group = firstGroup(null, settings);
        assertThat(group).as("top_k 1 from generation_config.json: every sample is the arg-max path")
                .allMatch(group.get(0)::equals);
        GenerationSettings.Resolved agent0 = settings.get(0);
        assertThat(agent0.settings().get("top_k")).isEqualTo(new GenerationSettings.Setting(1, "generation_config.json"));
        assertThat(agent0.settings().get("repetition_penalty"))
                .isEqualTo(new GenerationSettings.Setting(1.05, "generation_config.json"));
        assertThat(agent0.settings().get("temperature")).isEqualTo(new GenerationSettings.Setting(1.0, "run config"));
        assertThat(agent0.settings().get("typical_p")).isEqualTo(new GenerationSettings.Setting(1.0, "transformers default"));
        assertThat(agent0.sampling().processing().repetitionPenalty()).isEqualTo(1.05);
    }

    @Test
    void topKZeroSwitchesTopKOff() {
        List<GenerationSettings.Resolved> settings = new ArrayList<>();
        List<String> group = firstGroup(0, settings);
        assertThat(group.stream().distinct().count()).as("plain sampling: the samples differ").isGreaterThan(1);
        assertThat(settings.get(0).settings().get("top_k")).isEqualTo(new GenerationSettings.Setting(0, "run config"));
    }
}
