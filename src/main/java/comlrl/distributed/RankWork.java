package comlrl.distributed;

import comlrl.distributed.Codec;
import comlrl.distributed.Codecs;
import comlrl.distributed.DistributedContext;
import comlrl.distributed.Exchange;
import comlrl.distributed.ShardedAdamW;
import comlrl.model.DecoderLm;
import comlrl.tensor.AdamW;
import comlrl.tensor.Device;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import comlrl.utils.DdpSplit;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * What this process does in a run of several processes ({@code parallel_training: ddp}), and the
 * exchanges that keep every process on the single-process computation. W processes (ranks) run the
 * same trainer code, draw the same seeds and make the same collective calls in the same order:
 * <ul>
 *   <li>{@link DdpSplit#DATA}: every rank holds every agent; of the rows (completions) of a group,
 *       rank r owns rows {@code k ≡ r (mod W)} ({@link #ownsRow}): it samples them (each row keeps the
 *       single-process row seed), scores them and backpropagates them; the rows are exchanged, and
 *       the gradient sums are added across ranks before each optimizer step ({@link #sumGradients}).</li>
 *   <li>{@link DdpSplit#AGENTS}: agent i lives on rank {@code i mod W} only ({@link #ownsAgent}); its
 *       completions are exchanged so that every rank sees the joint responses.</li>
 * </ul>
 * User callbacks (reward function and processor, external transition, evaluation logger) run on rank
 * 0 only, once per joint response ({@link #onMain}); only rank 0 writes metrics, reports and
 * checkpoint metadata.
 */
public final class RankWork implements AutoCloseable {
    private final DistributedContext context; // null: one process
    private final DdpSplit split;
    private final int numAgents;
    private final Device device; // the device of a ddp process, or null
    private DistributedContext owned; // connected here from the environment: closed with this

    private RankWork(DistributedContext context, DdpSplit split, int numAgents, Device device) {
        this.context = context;
        this.split = split;
        this.numAgents = numAgents;
        this.device = device;
    }

    /** One process doing everything: the case W = 1, where every method is the identity. */
    public static RankWork single(int numAgents) {
        return new RankWork(null, DdpSplit.DATA, numAgents, null);
    }

    /**
     * This process's work in a run whose config says {@code mode} and {@code split}: one process unless
     * {@code mode} is "ddp"; then {@code given}, or a context connected from torchrun's variables, which
     * {@link #close()} closes. Refuses "ddp" without either, and a context of several processes without "ddp".
     */
    public static RankWork forRun(comlrl.utils.ParallelTraining mode, DdpSplit split, int numAgents,
            DistributedContext given) {
        if (mode != comlrl.utils.ParallelTraining.DDP) {
            if (given != null && given.enabled()) {
                throw new IllegalArgumentException("the trainer was given a DistributedContext of " + given.worldSize()
                        + " processes, but parallel_training is \"" + mode + "\"; set parallel_training: ddp");
            }
            return single(numAgents);
        }
        DistributedContext context = given;
        if (context == null) {
            if (comlrl.distributed.RankInfo.fromEnvironment(System.getenv()).isEmpty()) {
                throw new IllegalArgumentException("parallel_training=\"ddp\" needs torchrun's variables (WORLD_SIZE, "
                        + "RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT): start the run with bin/comlrl launch "
                        + "--nproc-per-node N train CONFIG.yaml, torchrun or srun, or give the trainer a DistributedContext");
            }
            context = DistributedContext.fromEnvironment();
        }
        try {
            RankWork w = of(context, split, numAgents);
            if (given == null) {
                w.owned = context;
            }
            return w;
        } catch (RuntimeException | Error e) {
            if (given == null) {
                context.close();
            }
            throw e;
        }
    }

    /** This rank's share of a run of {@code numAgents} agents split as {@code split} ("agents": at least one per rank). */
    public static RankWork of(DistributedContext context, DdpSplit split, int numAgents) {
        if (context == null || !context.enabled()) {
            return new RankWork(null, DdpSplit.DATA, numAgents, context == null ? null : context.device());
        }
        if (split == DdpSplit.AGENTS && numAgents < context.worldSize()) {
            throw new IllegalArgumentException("ddp_split: agents puts each agent on one process, but " + numAgents
                    + " agents cannot keep " + context.worldSize() + " processes busy; start at most " + numAgents
                    + " processes (--nproc-per-node) or use ddp_split: data");
        }
        return new RankWork(context, split, numAgents, context.device());
    }

    /** The device of this process in a ddp run, or null for a plain one-process run. */
    public Device device() {
        return device;
    }

    /** Closes the context connected by {@link #forRun}, if any. */
    @Override
    public void close() {
        if (owned != null) {
            owned.close();
            owned = null;
        }
    }

    /** The context of the processes, or null for one process. */
    public DistributedContext context() {
        return context;
    }

    /** Whether there are several processes. */
    public boolean distributed() {
        return context != null;
    }

    public DdpSplit split() {
        return split;
    }

    public int rank() {
        return context == null ? 0 : context.rank();
    }

    public int worldSize() {
        return context == null ? 1 : context.worldSize();
    }

    /** Rank 0: the one that writes metrics, reports and checkpoints and calls the user's callbacks. */
    public boolean isMain() {
        return rank() == 0;
    }

    /** Whether the rows of a group are divided between the ranks (the data split of several processes). */
    public boolean splitsRows() {
        return context != null && split == DdpSplit.DATA;
    }

    /** Whether this rank holds agent {@code agent} (always, except in the agents split). */
    public boolean ownsAgent(int agent) {
        return ownerOf(agent) == rank() || context == null || split == DdpSplit.DATA;
    }

    /** The rank that holds agent {@code agent} in the agents split ({@code agent mod W}). */
    public int ownerOf(int agent) {
        return agent % worldSize();
    }

    /** The agents this rank holds, in order. */
    public List<Integer> ownedAgents() {
        return IntStream.range(0, numAgents).filter(this::ownsAgent).boxed().toList();
    }

    /** Whether this rank samples and backpropagates row {@code row} of a group ({@code row mod W == rank} when splitting rows). */
    public boolean ownsRow(int row) {
        return !splitsRows() || row % worldSize() == rank();
    }

    /** The rows of {@code 0 .. rows-1} this rank owns, in order. */
    public int[] localRows(int rows) {
        return IntStream.range(0, rows).filter(this::ownsRow).toArray();
    }

    // ---------------------------------------------------------------- exchanges (comlrl.distributed's, in one process the identity)

    /** {@code compute} on rank 0 only, its result given to every rank (a failure names rank 0 and {@code what}). */
    public <T> T onMain(String what, Supplier<T> compute, Codec<T> codec) {
        return context == null ? compute.get() : Exchange.fromRank0(context, what, compute, codec);
    }

    /** Every rank's {@code mine}, by rank. */
    public <T> List<T> gather(T mine, Codec<T> codec) {
        return context == null ? List.of(mine) : Exchange.gather(context, mine, codec);
    }

    /** Per agent, its owner's value ({@code mine}: null for other ranks' agents); behind {@link HeldAgents#fromOwners}. */
    <T> List<T> fromOwners(List<T> mine, Codec<T> element) {
        if (context == null || splitsRows()) {
            return mine;
        }
        List<List<T>> byRank = gather(mine, Codecs.listOf(Codecs.nullable(element)));
        List<T> out = new ArrayList<>();
        for (int i = 0; i < mine.size(); i++) {
            out.add(byRank.get(ownerOf(i)).get(i));
        }
        return out;
    }

    /**
     * Element-wise sums over the ranks (exact where each element is non-zero on one rank only:
     * values filled in by their owner, zeros elsewhere).
     */
    public double[] sum(double[] values) {
        if (context == null || values.length == 0) {
            return values;
        }
        try (Scope s = Scope.open()) {
            Tensor t = Tensor.ofDoubles(values, Device.CPU, values.length);
            context.allReduceSum(List.of(t));
            return t.toDoubleArray();
        }
    }

    /**
     * Adds the gradients of {@code model}'s trainable parameters across ranks (in place), so that
     * every rank holds the gradient of the whole minibatch. A parameter without a gradient on this
     * rank takes zeros when another rank has one; one without a gradient anywhere stays without, as in
     * one process (its optimizer step skips it).
     */
    public void sumGradients(DecoderLm model) {
        sumGradients(model.parameters());
    }

    /** {@link #sumGradients(DecoderLm)} for an optimizer's parameters. */
    public void sumGradients(List<Tensor> parameters) {
        if (context == null) {
            return;
        }
        try (Scope s = Scope.open()) {
            List<Tensor> params = parameters.stream().filter(Tensor::requiresGrad).toList();
            double[] has = new double[params.size()];
            for (int i = 0; i < has.length; i++) {
                has[i] = params.get(i).grad() != null ? 1 : 0;
            }
            double[] any = sum(has);
            List<Tensor> grads = new ArrayList<>();
            for (int i = 0; i < params.size(); i++) {
                if (any[i] > 0) {
                    grads.add(params.get(i).gradOrZeros());
                }
            }
            context.allReduceSum(grads);
        }
    }

    /**
     * An AdamW over {@code parameters}: the whole optimizer, or with the data split and
     * {@code zero_stage: 1} this process's shard of it ({@link ShardedAdamW}); step it with
     * {@link #step}, checkpoint it with {@link #wholeState}.
     */
    public AdamW adamW(List<Tensor> parameters, double lr, double weightDecay) {
        return splitsRows() ? ShardedAdamW.create(context, parameters, lr, weightDecay)
                : new AdamW(parameters, lr, weightDecay);
    }

    /** One step of {@code opt} (after {@link #sumGradients}); a sharded one sends each update from its holder. */
    public void step(AdamW opt) {
        if (opt.sharded()) {
            ShardedAdamW.step(context, opt);
        } else {
            opt.step();
        }
    }

    /** {@code opt}'s whole state: its own, or a sharded one's gathered on rank 0 (null on the others; every rank calls it). */
    public java.util.Map<String, Tensor> wholeState(AdamW opt) {
        return opt.sharded() ? ShardedAdamW.wholeState(context, opt) : opt.state();
    }

    /** Waits for every rank. */
    public void barrier() {
        if (context != null) {
            context.barrier();
        }
    }

    @Override
    public String toString() {
        return context == null ? "one process" : "rank " + rank() + " of " + worldSize() + " (ddp_split " + split + ")";
    }
}
