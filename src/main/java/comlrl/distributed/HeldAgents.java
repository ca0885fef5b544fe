package comlrl.distributed;

import comlrl.distributed.Codec;
import comlrl.distributed.Codecs;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * One value per agent (its model, optimizer, head), present for the agents this process holds: every
 * agent in one process and in the data split; in the agents split ({@code ddp_split: agents}) agent
 * i's only on its owner ({@link RankWork#ownerOf}). Code walks the held ones ({@link #indices},
 * {@link #map}) and takes what every process needs from the owners ({@link #fromOwners}) instead of
 * testing for the nulls that stand for another process's agent; {@link #get} of such an agent fails
 * naming its owner.
 */
public final class HeldAgents<T> {
    private final List<T> values; // null where another process holds the agent
    private final RankWork work;

    private HeldAgents(List<T> values, RankWork work) {
        this.values = values;
        this.work = work;
    }

    /**
     * The values of {@code perAgent}, null exactly for the agents {@code work} does not hold.
     *
     * @throws IllegalArgumentException when a held agent has no value or another process's one has
     */
    public static <T> HeldAgents<T> of(List<T> perAgent, RankWork work) {
        for (int i = 0; i < perAgent.size(); i++) {
            if ((perAgent.get(i) != null) != work.ownsAgent(i)) {
                throw new IllegalArgumentException("agent " + i + (perAgent.get(i) == null ? " has no value" : " has a value")
                        + " on " + work + ", which holds agents " + work.ownedAgents());
            }
        }
        return new HeldAgents<>(Collections.unmodifiableList(new ArrayList<>(perAgent)), work);
    }

    /** The agents this process holds, in order. */
    public List<Integer> indices() {
        return work.ownedAgents().stream().filter(i -> i < values.size()).toList();
    }

    /** Agent {@code agent}'s value; it must be held here. */
    public T get(int agent) {
        if (!work.ownsAgent(agent)) {
            throw new IllegalStateException("agent " + agent + " is held by rank " + work.ownerOf(agent) + ", not by "
                    + work + " (ddp_split: agents)");
        }
        return values.get(agent);
    }

    /** The number of agents (held here or not). */
    public int size() {
        return values.size();
    }

    /** Every agent's value, null for the agents another process holds (public accessors, the rollout engine). */
    public List<T> asList() {
        return values;
    }

    /** The held values, in agent order. */
    public List<T> values() {
        return indices().stream().map(values::get).toList();
    }

    /** {@code f} of each held value. */
    public <R> HeldAgents<R> map(Function<? super T, ? extends R> f) {
        return mapIndexed((i, v) -> f.apply(v));
    }

    /** {@code f(i, value)} of each held agent i, in order. */
    public <R> HeldAgents<R> mapIndexed(BiFunction<Integer, ? super T, ? extends R> f) {
        return placed(indices().stream().map(i -> (R) f.apply(i, values.get(i))).toList());
    }

    /** {@link #mapIndexed} with the agents on {@code executor}'s threads ("mp" mode). */
    public <R> HeldAgents<R> mapIndexed(AgentExecutor executor, BiFunction<Integer, ? super T, ? extends R> f) {
        return placed(executor.map(indices(), i -> (R) f.apply(i, values.get(i))));
    }

    /** {@link #mapIndexed} for values that own memory (optimizers, heads): on a failure those opened are closed. */
    public <R extends AutoCloseable> HeldAgents<R> open(BiFunction<Integer, ? super T, ? extends R> f) {
        List<R> made = new ArrayList<>();
        try {
            for (int i : indices()) {
                made.add(f.apply(i, values.get(i)));
            }
        } catch (RuntimeException | Error e) {
            for (R r : made) {
                try {
                    r.close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
        return placed(made);
    }

    /** A value per held agent ({@code held.get(j)} of agent {@code indices().get(j)}) placed by agent. */
    private <R> HeldAgents<R> placed(List<R> held) {
        List<R> out = new ArrayList<>(Collections.nCopies(values.size(), null));
        List<Integer> at = indices();
        for (int j = 0; j < at.size(); j++) {
            out.set(at.get(j), held.get(j));
        }
        return new HeldAgents<>(Collections.unmodifiableList(out), work);
    }

    /** {@code f} of every agent's value, each computed by its owner ({@link #fromOwners}). */
    public long[] longsFromOwners(ToLongFunction<? super T> f) {
        return map(f::applyAsLong).fromOwners(Codecs.LONG).stream().mapToLong(Long::longValue).toArray();
    }

    /** Every agent's value, each from its owner (the values must travel by {@code codec}). */
    public List<T> fromOwners(Codec<T> codec) {
        return work.fromOwners(values, codec);
    }
}
