package comlrl.trainers.reinforce;

import static org.assertj.core.api.Assertions.assertThat;

import comlrl.distributed.AgentExecutor;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.generation.SeedStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which samples go into which minibatch: a drain takes the next seed of the run's stream when the
 * buffer is emptied, groups the samples by turn (turn order), shuffles each group with one
 * {@code java.util.Random} of that seed (the turns one after another, the stream continuing) and cuts
 * it into {@code train_batch_size} minibatches. The expected orders are worked by hand from the
 * draws of {@code Random}, whose shuffle swaps position i−1 with {@code nextInt(i)} for i = n … 2.
 */
class AgentBuffersTest {
    /** The run's seed: the drains' seeds are {@code SeedStream(11)}'s first two. */
    private static final long RUN_SEED = 11;

    @Test
    void eachDrainShufflesItsTurnsWithTheNextSeedOfTheRunAndCutsThemIntoMinibatches() {
        List<String> minibatches = new ArrayList<>();
        SeedStream seeds = new SeedStream(RUN_SEED);
        try (AgentExecutor executor = AgentExecutor.create(1, false)) {
            AgentBuffers buffers = new AgentBuffers(HeldAgents.of(List.of("agent 0"), RankWork.single(1)), 6, 2, seeds, executor,
                    (agent, minibatch, old, stats) -> minibatches.add(agent + ":" + minibatch.stream()
                            .map(NodeSample::item).toList()), updated -> { },
                    new UpdateMetrics(0.0, false, new PrintStream(new ByteArrayOutputStream()), true, false), 1, null);
            // turn 0: a0..a3, turn 1: b0, b1, interleaved as a rollout tree lists them; the 6th fills the buffer
            buffers.add(List.of(sample(0, "a0"), sample(1, "b0"), sample(0, "a1"), sample(0, "a2"), sample(1, "b1"),
                    sample(0, "a3")));
            // drain 1, seed s_0 = 5833679380957638813: Random(s_0) draws nextInt(4)=2, nextInt(3)=1, nextInt(2)=0
            //   [a0 a1 a2 a3] -swap(3,2)-> [a0 a1 a3 a2] -swap(2,1)-> [a0 a3 a1 a2] -swap(1,0)-> [a3 a0 a1 a2]
            // then turn 1 on the same Random: nextInt(2)=0: [b0 b1] -swap(1,0)-> [b1 b0]
            assertThat(minibatches).containsExactly("0:[a3, a0]", "0:[a1, a2]", "0:[b1, b0]");
            assertThat(seeds.position()).isEqualTo(1);

            minibatches.clear();
            buffers.add(List.of(sample(0, "c0"), sample(0, "c1"), sample(0, "c2"), sample(0, "c3")));
            assertThat(minibatches).as("the buffer is not full yet").isEmpty();
            buffers.drainAll(); // the end of an epoch drains what is left
            // drain 2, seed s_1 = 4839782808629744545: nextInt(4)=2, nextInt(3)=2, nextInt(2)=0
            //   [c0 c1 c2 c3] -swap(3,2)-> [c0 c1 c3 c2] -swap(2,2)-> same -swap(1,0)-> [c1 c0 c3 c2]
            assertThat(minibatches).containsExactly("0:[c1, c0]", "0:[c3, c2]");
            assertThat(seeds.position()).isEqualTo(2);
        }
    }

    /** A sample of agent 0 at {@code turn}, named {@code name} (its item label); its numbers do not matter here. */
    private static NodeSample sample(int turn, String name) {
        return new NodeSample(0, turn, new long[] {1}, List.of(new long[] {2}), new double[] {0.0}, null, 0.0, 0.0, 1,
                name, new boolean[1], null, null);
    }
}
