package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.distributed.AgentExecutor;
import comlrl.distributed.Codecs;
import comlrl.distributed.HeldAgents;
import comlrl.distributed.RankWork;
import comlrl.distributed.TwoRanks;
import comlrl.utils.DdpSplit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class HeldAgentsTest {
    @Test
    void oneProcessHoldsEveryAgent() {
        RankWork one = RankWork.single(3);
        HeldAgents<String> held = HeldAgents.of(List.of("a", "bb", "ccc"), one);
        assertThat(held.indices()).containsExactly(0, 1, 2);
        assertThat(held.map(String::length).fromOwners(Codecs.INT)).containsExactly(1, 2, 3);
        assertThatThrownBy(() -> HeldAgents.of(Arrays.asList("a", null, "c"), one))
                .hasMessage("agent 1 has no value on one process, which holds agents [0, 1, 2]");
    }

    /**
     * Three agents split over two ranks: rank 0 holds agents 0 and 2, rank 1 agent 1 (i mod 2). Each
     * walks its own, fails naming the owner for another's, and gets every agent's value from its owner.
     */
    @Test
    void theAgentsSplitWalksTheHeldAgentsAndTakesTheOthersFromTheirOwners() throws Exception {
        List<Future<List<Object>>> ranks = TwoRanks.run(ctx -> {
            RankWork work = RankWork.of(ctx, DdpSplit.AGENTS, 3);
            List<String> mine = ctx.rank() == 0 ? Arrays.asList("a", null, "ccc") : Arrays.asList(null, "bb", null);
            HeldAgents<String> held = HeldAgents.of(mine, work);
            String other = ctx.rank() == 0 ? "agent 1 is held by rank 1, not by rank 0 of 2 (ddp_split agents)"
                    : "agent 0 is held by rank 0, not by rank 1 of 2 (ddp_split agents)";
            assertThatThrownBy(() -> held.get(ctx.rank() == 0 ? 1 : 0)).hasMessageStartingWith(other);
            assertThatThrownBy(() -> HeldAgents.of(List.of("a", "bb", "ccc"), work))
                    .hasMessageContaining(" has a value on rank " + ctx.rank());
            return List.of(held.indices(), held.map(String::length).fromOwners(Codecs.INT), held.values(),
                    held.mapIndexed((i, s) -> 10 * i + s.length()).fromOwners(Codecs.INT),
                    Arrays.stream(held.longsFromOwners(s -> 100L * s.length())).boxed().toList());
        });
        assertThat(ranks.get(0).get()).containsExactly(List.of(0, 2), List.of(1, 2, 3), List.of("a", "ccc"),
                List.of(1, 12, 23), List.of(100L, 200L, 300L));
        assertThat(ranks.get(1).get()).containsExactly(List.of(1), List.of(1, 2, 3), List.of("bb"), List.of(1, 12, 23),
                List.of(100L, 200L, 300L));
    }

    /** mapIndexed passes each agent's index (sequentially and on an executor); values, asList and size follow the agents. */
    @Test
    void mapIndexedGivesEachAgentItsIndex() {
        RankWork one = RankWork.single(3);
        HeldAgents<String> held = HeldAgents.of(List.of("a", "bb", "ccc"), one);
        assertThat(held.mapIndexed((i, s) -> s + i).values()).containsExactly("a0", "bb1", "ccc2");
        try (AgentExecutor executor = AgentExecutor.create(3, true)) {
            assertThat(held.mapIndexed(executor, (i, s) -> i * 10 + s.length()).asList()).containsExactly(1, 12, 23);
        }
        assertThat(held.size()).isEqualTo(3);
    }

    /** open closes what it opened before a failure, and only that. */
    @Test
    void openClosesWhatItOpenedWhenAnAgentFails() {
        HeldAgents<String> held = HeldAgents.of(List.of("a", "bb", "ccc"), RankWork.single(3));
        List<String> closed = new ArrayList<>();
        assertThatThrownBy(() -> held.open((i, s) -> {
            if (i == 2) {
                throw new IllegalStateException("no memory for agent 2");
            }
            return (AutoCloseable) () -> closed.add(s);
        })).hasMessage("no memory for agent 2");
        assertThat(closed).containsExactly("a", "bb");
    }
}
