package comlrl.distributed;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * Runs per-agent work: one after the other, or each agent's on its own persistent thread
 * ({@code parallel_training: mp}), so that an agent's native state is always touched by the same
 * thread. Results come back in agent order; the first failure is rethrown after every agent finished.
 */
public final class AgentExecutor implements AutoCloseable {
    private final int count;
    private final List<ExecutorService> threads = new ArrayList<>();

    private AgentExecutor(int count, boolean parallel) {
        this.count = count;
        if (parallel) {
            for (int i = 0; i < count; i++) {
                threads.add(Executors.newSingleThreadExecutor());
            }
        }
    }

    /** {@code count} agents, on their own threads when {@code parallel}. */
    public static AgentExecutor create(int count, boolean parallel) {
        return new AgentExecutor(count, parallel);
    }

    public boolean parallel() {
        return !threads.isEmpty();
    }

    /** {@code task(i)} for every agent i, results in agent order. */
    public <T> List<T> map(IntFunction<T> task) {
        return map(java.util.stream.IntStream.range(0, count).boxed().toList(), task);
    }

    /** {@code task(i)} for the given agents, results in their order. */
    public <T> List<T> map(List<Integer> agents, IntFunction<T> task) {
        List<T> out = new ArrayList<>();
        if (threads.isEmpty()) {
            for (int i : agents) {
                out.add(task.apply(i));
            }
            return out;
        }
        List<Future<T>> futures = new ArrayList<>();
        for (int i : agents) {
            futures.add(threads.get(i).submit(() -> task.apply(i)));
        }
        Throwable first = null;
        for (Future<T> f : futures) {
            try {
                out.add(f.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                first = first != null ? first : new IllegalStateException("interrupted while waiting for an agent", e);
            } catch (ExecutionException e) {
                first = first != null ? first : e.getCause();
            }
        }
        if (first instanceof RuntimeException re) {
            throw re;
        }
        if (first instanceof Error err) {
            throw err;
        }
        if (first != null) {
            throw new IllegalStateException(first);
        }
        return out;
    }

    @Override
    public void close() {
        threads.forEach(ExecutorService::shutdownNow);
    }
}
