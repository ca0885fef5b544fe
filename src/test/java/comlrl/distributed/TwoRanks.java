package comlrl.distributed;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/** Two ranks joined in this process (gloo over loopback, each on its own thread), for tests of exchanges. */
public final class TwoRanks {
    private TwoRanks() {
    }

    /** {@code body} run on each of the two ranks, by rank; each result or failure is in its future, all done. */
    public static <T> List<Future<T>> run(Function<DistributedContext, T> body) throws InterruptedException {
        int port = Launcher.freePort();
        DistributedContext.Options options = DistributedContext.Options.defaults().withBackend(Backend.GLOO)
                .withTimeout(Duration.ofSeconds(30)).withRendezvousTimeout(Duration.ofSeconds(30));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<T>> out = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                RankInfo info = new RankInfo(r, 2, r, "127.0.0.1", port);
                out.add(pool.submit(() -> {
                    try (DistributedContext ctx = DistributedContext.connect(info, options)) {
                        return body.apply(ctx);
                    }
                }));
            }
            for (Future<T> f : out) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    // the caller looks at each rank's outcome
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
