package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class ExchangeTest {
    @Test
    void everyRankGetsEveryRanksValueInRankOrderAndRankZerosResult() throws Exception {
        List<Future<List<Object>>> ranks = TwoRanks.run(ctx -> List.of(
                Exchange.gather(ctx, "from " + ctx.rank(), Codecs.STRING),
                Exchange.fromRank0(ctx, "counting", () -> new double[] {ctx.rank() + 0.5}, Codecs.DOUBLES)[0]));
        for (Future<List<Object>> r : ranks) {
            assertThat(r.get()).containsExactly(List.of("from 0", "from 1"), 0.5);
        }
    }

    /** Rank 0 rethrows its own exception; rank 1 fails naming rank 0, what it was doing and the message. */
    @Test
    void aFailureOnRankZeroFailsEveryRankNamingIt() throws Exception {
        List<Future<String>> ranks = TwoRanks.run(ctx -> Exchange.fromRank0(ctx, "scoring row 3", () -> {
            throw new IllegalArgumentException("the reward returned 2 values for 3 completions");
        }, Codecs.STRING));
        assertThatThrownBy(ranks.get(0)::get).hasCauseInstanceOf(IllegalArgumentException.class)
                .hasRootCauseMessage("the reward returned 2 values for 3 completions");
        assertThatThrownBy(ranks.get(1)::get).hasCauseInstanceOf(IllegalStateException.class)
                .hasRootCauseMessage("rank 0 failed while scoring row 3: the reward returned 2 values for 3 completions "
                        + "(rank 0's output has the details)");
    }
}
