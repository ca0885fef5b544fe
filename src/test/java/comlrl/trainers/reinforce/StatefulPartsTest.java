package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static org.assertj.core.api.Assertions.assertThat;

import comlrl.checkpoint.Checkpoints;
import comlrl.data.JsonlStream;
import comlrl.data.Stateful;
import comlrl.data.TaskItem;
import comlrl.reward.RewardFunction;
import comlrl.trainers.TinyAgents;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Streaming task sets and stateful callbacks: trained from lazily, saved with checkpoints, restored on resume. */
class StatefulPartsTest {
    @TempDir
    static Path models;
    static Path agent;

    @BeforeAll
    static void writeAgent() {
        agent = TinyAgents.create(models.resolve("a"), 5);
    }

    /** A reward function counting its calls, with that count as its state. */
    static final class CountingReward implements RewardFunction, Stateful {
        long calls;
        final List<String> prompts = new ArrayList<>();

        @Override
        public List<Double> score(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
            calls++;
            prompts.add(batchItems.get(0).getString("prompt"));
            return List.of((double) agentCompletions.get(0).get(0).length());
        }

        @Override
        public Map<String, Object> stateDict() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("calls", calls);
            return m;
        }

        @Override
        public void loadStateDict(Map<String, ?> state) {
            calls = ((Number) state.get("calls")).longValue();
        }
    }

    private static MAGRPOTrainer trainer(JsonlStream tasks, CountingReward reward, int epochs) {
        MAGRPOConfig config = fast(MAGRPOConfig.builder()).numAgents(1).numTrainEpochs(epochs).build();
        return MAGRPOTrainer.builder().agentModel(agent.toString()).numAgents(1).rewardFunc(reward)
                .trainDataset(tasks).args(config).verbose(false).build();
    }

    @Test
    void aStreamingTaskSetTrainsInOrderAndItsStateAndTheCallbacksStateResume(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("tasks.jsonl");
        Files.writeString(file, "{\"prompt\": \"alpha\"}\n{\"prompt\": \"beta\"}\n{\"prompt\": \"gamma\"}\n");
        int g = fast(MAGRPOConfig.builder()).numAgents(1).build().numGenerations();
        Path checkpoints = tmp.resolve("ck");
        try (JsonlStream tasks = JsonlStream.open(file)) {
            CountingReward reward = new CountingReward();
            try (MAGRPOTrainer t = trainer(tasks, reward, 1)) {
                t.train(checkpoints, 1);
                assertThat(t.envStep()).isEqualTo(3L * g);
            }
            // one reward call per joint action, items in file order
            assertThat(reward.calls).isEqualTo(3L * g);
            assertThat(reward.prompts.stream().distinct().toList()).containsExactly("alpha", "beta", "gamma");
        }
        Map<String, Object> meta = Checkpoints.readMetadata(checkpoints.resolve("checkpoint-1"));
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> states = (Map<String, Map<String, Object>>) meta.get("states");
        assertThat(states.get("reward_func")).containsEntry("calls", 3 * g);
        assertThat(states.get("train_dataset")).containsEntry("epoch", 1).containsEntry("consumed", 0);

        try (JsonlStream tasks = JsonlStream.open(file)) {
            CountingReward reward = new CountingReward();
            try (MAGRPOTrainer t = trainer(tasks, reward, 2)) {
                t.train(checkpoints, 1, checkpoints.resolve("checkpoint-1"));
                assertThat(t.envStep()).isEqualTo(6L * g);
            }
            assertThat(reward.calls).as("restored count + the second epoch's calls").isEqualTo(6L * g);
            assertThat(tasks.epoch()).isEqualTo(2);
        }
    }
}
