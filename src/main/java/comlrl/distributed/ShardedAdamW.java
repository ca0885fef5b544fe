package comlrl.distributed;

import comlrl.tensor.AdamW;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.GradMode;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * AdamW with its state sharded over the processes of a run (ZeRO stage 1, {@code zero_stage: 1},
 * {@link AdamW#shard}): each parameter's moments and float32 master are held by one process, chosen
 * so that every process holds about as many elements ({@link #holders}), so each keeps about 1/W of
 * the optimizer state. Every process holds the whole gradient (summed across processes before the
 * step); the holder of a parameter computes its update and sends the new value to the others.
 */
public final class ShardedAdamW {
    private ShardedAdamW() {
    }

    /** This process's shard of an AdamW over {@code parameters}; the whole optimizer when the context's {@code zero_stage} is 0. */
    public static AdamW create(DistributedContext context, List<Tensor> parameters, double lr, double weightDecay) {
        if (context.zeroStage() == 0) {
            return new AdamW(parameters, lr, weightDecay);
        }
        int[] holder = holders(parameters, context.worldSize());
        int rank = context.rank();
        return AdamW.shard(parameters, lr, weightDecay, i -> holder[i] == rank);
    }

    /** Each parameter's process: in order, to the one holding the fewest elements so far (the lowest rank on a tie). */
    public static int[] holders(List<Tensor> parameters, int worldSize) {
        long[] load = new long[worldSize];
        int[] holder = new int[parameters.size()];
        for (int i = 0; i < holder.length; i++) {
            int least = 0;
            for (int r = 1; r < worldSize; r++) {
                least = load[r] < load[least] ? r : least;
            }
            holder[i] = least;
            load[least] += parameters.get(i).numel();
        }
        return holder;
    }

    /**
     * One step of {@code opt} (after the gradient sum): every parameter's update is computed by the
     * process holding its state and sent to the others, so every process ends with the weights the
     * unsharded step gives.
     */
    public static void step(DistributedContext context, AdamW opt) {
        opt.step();
        if (!opt.sharded()) {
            return;
        }
        int[] holder = holders(opt.parameters(), context.worldSize());
        try (Scope s = Scope.open(); GradMode g = GradMode.noGrad()) {
            for (int i = 0; i < holder.length; i++) {
                Tensor p = opt.parameters().get(i);
                if (p.grad() != null) { // the same on every process after the gradient sum
                    context.broadcast(p, holder[i]);
                }
            }
        }
    }

    /**
     * The whole state of the sharded {@code opt} (as {@link AdamW#state()} of the unsharded
     * optimizer), on rank 0, in host memory; null on the other ranks, which send their entries.
     * Every rank calls it. For an unsharded optimizer its own state.
     */
    public static Map<String, Tensor> wholeState(DistributedContext context, AdamW opt) {
        if (!opt.sharded()) {
            return opt.state();
        }
        int[] holder = holders(opt.parameters(), context.worldSize());
        Map<String, Tensor> mine = opt.state();
        Map<String, Tensor> out = context.rank() == 0 ? new LinkedHashMap<>() : null;
        for (int i = 0; i < holder.length; i++) {
            Tensor p = opt.parameters().get(i);
            for (String name : opt.stateKeys(i)) {
                try (Scope s = Scope.open()) {
                    Tensor t = holder[i] == context.rank() ? mine.get(name) : Tensor.zerosOf(DType.F32, p.device(), p.shape());
                    context.broadcast(t, holder[i]);
                    if (out != null) {
                        out.put(name, t.to(Device.CPU).cloneTensor().keep());
                    }
                }
            }
        }
        if (out != null) {
            out.put("step", mine.get("step"));
        }
        return out;
    }
}
