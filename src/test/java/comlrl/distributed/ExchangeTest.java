package comlrl.distributed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

class ExchangeTest {
    /** {@code body} of each of two ranks joined in this process (gloo over loopback), by rank. */
    private static <T> List<Future<T>> onTwoRanks(java.util.function.Function<DistributedContext, T> body)
            throws Exception {
        int port = Launcher.freePort();
        DistributedContext.Options options = DistributedContext.Options.defaults().withBackend(Backend.GLOO)
                .withTimeout(Duration.ofSeconds(30)).withRendezvousTimeout(Duration.ofSeconds(30));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            IntFunction<Future<T>> rank = r -> pool.submit(() -> {
                try (DistributedContext ctx = DistributedContext.connect(new RankInfo(r, 2, r, "127.0.0.1", port), options)) {
                    return body.apply(ctx);
                }
            });
            List<Future<T>> out = new ArrayList<>(List.of(rank.apply(0), rank.apply(1)));
            for (Future<T> f : out) {
                try {
                    f.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    // looked at by the caller
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void everyRankGetsEveryRanksValueInRankOrderAndRankZerosResult() throws Exception {
        List<Future<List<Object>>> ranks = onTwoRanks(ctx -> List.of(
                Exchange.gather(ctx, "from " + ctx.rank(), Codecs.STRING),
                Exchange.fromRank0(ctx, "counting", () -> new double[] {ctx.rank() + 0.5}, Codecs.DOUBLES)[0]));
        for (Future<List<Object>> r : ranks) {
            assertThat(r.get()).containsExactly(List.of("from 0", "from 1"), 0.5);
        }
    }

    /** Rank 0 rethrows its own exception; rank 1 fails naming rank 0, what it was doing and the message. */
    @Test
    void aFailureOnRankZeroFailsEveryRankNamingIt() throws Exception {
        List<Future<String>> ranks = onTwoRanks(ctx -> Exchange.fromRank0(ctx, "scoring row 3", () -> {
            throw new IllegalArgumentException("the reward returned 2 values for 3 completions");
        }, Codecs.STRING));
        assertThatThrownBy(ranks.get(0)::get).hasCauseInstanceOf(IllegalArgumentException.class)
                .hasRootCauseMessage("the reward returned 2 values for 3 completions");
        assertThatThrownBy(ranks.get(1)::get).hasCauseInstanceOf(IllegalStateException.class)
                .hasRootCauseMessage("rank 0 failed while scoring row 3: the reward returned 2 values for 3 completions "
                        + "(rank 0's output has the details)");
    }
}
