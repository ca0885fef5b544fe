package comlrl.trainers.reinforce;

import static comlrl.trainers.reinforce.ReinforceFixtures.bytes;
import static comlrl.trainers.reinforce.ReinforceFixtures.fast;
import static comlrl.trainers.reinforce.ReinforceFixtures.lengthDifference;
import static comlrl.trainers.reinforce.ReinforceFixtures.tasks;
import static org.assertj.core.api.Assertions.assertThat;

import comlrl.trainers.TinyAgents;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** parallel_training "mp": agents on their own threads give exactly the sequential run. */
class ParallelAgentsTest {
    private record Run(List<Map<String, Double>> history, List<Map<String, byte[]>> weights) {
    }

    private static Run run(Path a, Path b, boolean mp) {
        MAGRPOConfig.Builder<MAGRPOConfig> cb = fast(MAGRPOConfig.builder()).numTrainEpochs(2).evalInterval(2);
        if (mp) {
            cb.parallelTraining("mp").agentDevices(List.of("cpu", "cpu"));
        }
        try (MAGRPOTrainer t = MAGRPOTrainer.builder().agents(List.of(a.toString(), b.toString()))
                .rewardFunc(lengthDifference()).trainDataset(tasks(3)).evalDataset(tasks(2)).args(cb.build())
                .verbose(false).build()) {
            t.train();
            List<Map<String, byte[]>> w = new ArrayList<>();
            t.agents().forEach(lm -> w.add(bytes(lm)));
            return new Run(List.copyOf(t.logHistory()), w);
        }
    }

    @Test
    void agentsOnTheirOwnThreadsGiveTheSequentialRunExactly(@TempDir Path tmp) {
        Path a = TinyAgents.create(tmp.resolve("a"), 1);
        Path b = TinyAgents.create(tmp.resolve("b"), 2);
        Run sequential = run(a, b, false);
        Run parallel = run(a, b, true);
        assertThat(parallel.history()).isEqualTo(sequential.history());
        for (int agent = 0; agent < 2; agent++) {
            final int i = agent;
            Map<String, byte[]> s = sequential.weights().get(i);
            Map<String, byte[]> p = parallel.weights().get(i);
            assertThat(p.keySet()).isEqualTo(s.keySet());
            s.forEach((name, bytes) -> assertThat(p.get(name)).as("agent %d %s", i, name).isEqualTo(bytes));
        }
    }
}
